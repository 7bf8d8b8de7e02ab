package api

import (
	"strings"

	"github.com/shopspring/decimal"
)

// Gift card parameter names.
const (
	PVoucherACardNumber     = "VoucherACardNumber"
	PVoucherBCardnumber     = "VoucherBCardnumber"
	PVoucherBPIN            = "VoucherBPIN"
	PVoucherCCardnumber     = "VoucherCCardnumber"
	PVoucherCValidationCode = "VoucherCValidationCode"
	PCardNumber             = "CardNumber" // the family's custom card parameters
	PPin                    = "Pin"
	PLastName               = "LastName"
	PEmail                  = "Email"
)

// TestCardNumber never expires and is never used up; its PIN is its
// balance in cents.
const TestCardNumber = "0000000000000000001"

// Provider is the voucher provider that processes a card.
type Provider string

// Providers. ProviderCustom is a merchant's own card with the family's
// CardNumber / Pin parameters.
const (
	ProviderA      Provider = "A"
	ProviderB      Provider = "B"
	ProviderC      Provider = "C"
	ProviderCustom Provider = "custom"
)

// DefaultGiftCardCodes are the service codes the sandbox is configured
// with: the three custom cards and one code per voucher provider.
var DefaultGiftCardCodes = []string{"customgiftcard", "customgiftcard2", "customgiftcard3", "vouchera", "voucherb", "voucherc"}

// IsCustomCardCode reports whether code is one of the merchant's own cards.
func IsCustomCardCode(code string) bool {
	return strings.HasPrefix(strings.ToLower(code), "customgiftcard")
}

// Card is a gift card: who processes it, its number and its PIN (for
// provider C the validation code).
type Card struct {
	Provider Provider
	Number   string
	PIN      string
}

// paramNames returns the number and PIN parameter names for the provider.
// The document names VoucherBPIN as the PIN of provider A cards and its
// sample sends it with provider B cards, so both use it.
func (p Provider) paramNames() (number, pin string) {
	switch p {
	case ProviderA:
		return PVoucherACardNumber, PVoucherBPIN
	case ProviderB:
		return PVoucherBCardnumber, PVoucherBPIN
	case ProviderC:
		return PVoucherCCardnumber, PVoucherCValidationCode
	case ProviderCustom:
		return PCardNumber, PPin
	}
	return "", ""
}

func (c Card) params(ps []Parameter) []Parameter {
	n, p := c.Provider.paramNames()
	if n == "" {
		return ps
	}
	return append(ps, Parameter{Name: n, Value: FlexString(c.Number)}, Parameter{Name: p, Value: FlexString(c.PIN)})
}

// CardFromParams finds the card in a request's parameters: the provider is
// told by which card number parameter is present.
func CardFromParams(ps []Parameter) (Card, bool) {
	for _, p := range []Provider{ProviderA, ProviderB, ProviderC, ProviderCustom} {
		n, pin := p.paramNames()
		if num, ok := findParam(ps, n); ok {
			v, _ := findParam(ps, pin)
			return Card{Provider: p, Number: num, PIN: v}, true
		}
	}
	return Card{}, false
}

// contactParams adds LastName and Email when given: the provider needs them
// for partial refunds, on the payment or on the refund.
func contactParams(ps []Parameter, lastName, email string) []Parameter {
	if lastName != "" {
		ps = append(ps, Parameter{Name: PLastName, Value: FlexString(lastName)})
	}
	if email != "" {
		ps = append(ps, Parameter{Name: PEmail, Value: FlexString(email)})
	}
	return ps
}

// GiftCardPay pays with a gift card (Transaction). With GroupTransaction set
// it is the family's PayRemainder: a further part of a partial payment.
type GiftCardPay struct {
	ServiceCode      string
	Currency         string
	Invoice          string
	Amount           decimal.Decimal
	Card             Card
	LastName         string // optional; with Email, allows partial refunds later
	Email            string
	GroupTransaction string
	PushURL          string
}

// Action is Pay, or PayRemainder for the rest of a partial payment.
func (g GiftCardPay) Action() string {
	if g.GroupTransaction != "" {
		return ActionPayRemainder
	}
	return ActionPay
}

// Request builds the envelope.
func (g GiftCardPay) Request() *Request {
	ps := contactParams(g.Card.params(make([]Parameter, 0, 4)), g.LastName, g.Email)
	return &Request{Currency: g.Currency, Invoice: g.Invoice, AmountDebit: NewAmount(g.Amount),
		OriginalTransactionKey: g.GroupTransaction, PushURL: g.PushURL,
		Services: service(g.ServiceCode, g.Action(), ps)}
}

// GiftCardOriginal is what the caller knows of the payment a refund is
// for; it lets validation check the partial refund conditions before
// sending.
type GiftCardOriginal struct {
	Amount   decimal.Decimal // paid
	Refunded decimal.Decimal // refunded so far
	Provider Provider
	// HasContact: LastName and Email were on the payment.
	HasContact bool
	// PartialRefunds: the provider has the merchant's cards configured for
	// partial refunds (not the default).
	PartialRefunds bool
}

// GiftCardRefund refunds a gift card payment (Transaction).
type GiftCardRefund struct {
	ServiceCode            string
	Currency               string
	Invoice                string
	OriginalTransactionKey string
	Amount                 decimal.Decimal
	LastName               string
	Email                  string
	Original               *GiftCardOriginal // optional, enables the partial refund check
	PushURL                string
}

// Request builds the envelope.
func (g GiftCardRefund) Request() *Request {
	ps := contactParams(make([]Parameter, 0, 2), g.LastName, g.Email)
	return &Request{Currency: g.Currency, Invoice: g.Invoice, AmountCredit: NewAmount(g.Amount),
		OriginalTransactionKey: g.OriginalTransactionKey, PushURL: g.PushURL,
		Services: service(g.ServiceCode, ActionRefund, ps)}
}

// PartialRefundRule checks a gift card refund against what is left of the
// payment and the document's three conditions for a partial refund: a
// provider B card, configured for partial refunds, with LastName and Email
// on the payment or on the refund. It returns the broken rules.
func PartialRefundRule(orig GiftCardOriginal, amount decimal.Decimal, lastName, email string) []FieldError {
	var fe fieldErrors
	left := orig.Amount.Sub(orig.Refunded)
	if amount.GreaterThan(left) {
		fe.add("", FieldAmountCredit, "must not exceed what is left to refund ("+WireString(left)+")")
		return fe
	}
	if amount.Equal(orig.Amount) && orig.Refunded.IsZero() {
		return nil // a full refund is always allowed
	}
	switch {
	case orig.Provider != ProviderB:
		fe.add("", FieldAmountCredit, "a partial refund is only possible for cards of voucher provider B")
	case !orig.PartialRefunds:
		fe.add("", FieldAmountCredit, "a partial refund needs the provider to configure the merchant's cards for partial refunds")
	case !orig.HasContact && (lastName == "" || email == ""):
		if lastName == "" {
			fe.add("", PLastName, "required for a partial refund when the payment did not carry it")
		}
		if email == "" {
			fe.add("", PEmail, "required for a partial refund when the payment did not carry it")
		}
	}
	return fe
}
