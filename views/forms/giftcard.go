package forms

import (
	"fmt"
	"strings"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// providerOf tells which provider's card fields a service code takes; the
// configured voucher codes name their provider, the custom cards use
// CardNumber / Pin.
func providerOf(code string) api.Provider {
	switch strings.ToLower(code) {
	case "vouchera":
		return api.ProviderA
	case "voucherb":
		return api.ProviderB
	case "voucherc":
		return api.ProviderC
	}
	if api.IsCustomCardCode(code) {
		return api.ProviderCustom
	}
	return api.ProviderB
}

// cardFieldNames are the provider's parameter names, shown as field titles
// so the operator sees what is sent.
func cardFieldNames(p api.Provider) (number, pin string) {
	switch p {
	case api.ProviderA:
		return api.PVoucherACardNumber, api.PVoucherBPIN
	case api.ProviderC:
		return api.PVoucherCCardnumber, api.PVoucherCValidationCode
	case api.ProviderCustom:
		return api.PCardNumber, api.PPin
	}
	return api.PVoucherBCardnumber, api.PVoucherBPIN
}

// giftPaySpec: service code, the provider's card fields, amount.
type giftPaySpec struct {
	codes    []string
	currency string
	code     string
	number   string
	pin      string
	amount   string
	invoice  string
	lastName string
	email    string
	group    string
	cards    []TestCard
	fs       []*field
}

// TestCard is a gift card of the sandbox, listed on the payment form so an
// operator trying the console has numbers to type.
type TestCard struct {
	Service, Number, PIN, Balance string
}

// NewGiftCardPay is the gift card payment form. codes are the configured
// service codes (nil: the defaults); group, when set, pays the remainder
// of an earlier partial payment; cards are the sandbox's test cards (none
// against another gateway).
func NewGiftCardPay(codes []string, currency, group string, mode ops.Mode, cards ...TestCard) Form {
	return newGiftCardPay(codes, currency, group, "", "", "", mode, cards)
}

// NewGiftCardRemainder pays the rest of a partial gift card payment: the
// group's key, the remainder, the invoice and the first card's service
// are filled in.
func NewGiftCardRemainder(codes []string, currency, group, service, remainder, invoice string, mode ops.Mode, cards ...TestCard) Form {
	return newGiftCardPay(codes, currency, group, service, remainder, invoice, mode, cards)
}

func newGiftCardPay(codes []string, currency, group, service, amount, invoice string, mode ops.Mode, cards []TestCard) Form {
	if codes == nil {
		codes = api.DefaultGiftCardCodes
	}
	if currency == "" {
		currency = "EUR"
	}
	s := &giftPaySpec{codes: codes, currency: currency, code: codes[0], group: group, amount: amount, invoice: invoice, cards: cards}
	for _, c := range codes {
		if c == "voucherb" || (service != "" && c == service) {
			s.code = c
		}
	}
	opts := make([]option, len(codes))
	for i, c := range codes {
		opts[i] = option{label: c, value: c}
	}
	s.fs = []*field{
		{key: api.FieldService, title: "Service code", hint: "the card's service (its provider decides the card fields)", value: &s.code, options: opts},
		{key: "CardNumber", title: "Card number", hint: "as printed on the card", value: &s.number},
		{key: "CardPIN", title: "PIN", hint: "the card's PIN (provider C: validation code)", value: &s.pin, password: true},
		{key: api.FieldAmountDebit, title: "Amount (" + currency + ")", hint: "what to pay; a smaller balance gives a partial payment", value: &s.amount},
		{key: api.FieldInvoice, title: "Invoice", hint: "empty: paydesk makes one up", value: &s.invoice},
		{key: api.PLastName, title: "Last name", hint: "optional; with e-mail it allows partial refunds later", value: &s.lastName},
		{key: api.PEmail, title: "E-mail", hint: "optional", value: &s.email},
	}
	return newKit("giftcard-pay", s, mode)
}

func (s *giftPaySpec) title() string {
	if s.group != "" {
		return "Gift card · pay the remainder of " + s.group
	}
	return "Gift card payment"
}

func (s *giftPaySpec) header() string {
	n, p := cardFieldNames(providerOf(s.code))
	h := mutedStyle.Render(fmt.Sprintf("Card fields of %s: %s + %s", s.code, n, p))
	if len(s.cards) == 0 {
		return h
	}
	// The sandbox's cards for the chosen service, and the one card that
	// works with any: what an operator trying the console can type.
	var mine []string
	anyCard := ""
	for _, c := range s.cards {
		switch {
		case c.Service == "":
			anyCard = fmt.Sprintf("%s, PIN %s", c.Number, c.PIN)
		case strings.EqualFold(c.Service, s.code):
			mine = append(mine, fmt.Sprintf("%s PIN %s (%s)", c.Number, c.PIN, c.Balance))
		}
	}
	if len(mine) > 0 {
		h += "\n" + mutedStyle.Render("Sandbox test cards for "+s.code+": "+strings.Join(mine, " · "))
	}
	if anyCard != "" {
		h += "\n" + mutedStyle.Render("Any service: "+anyCard)
	}
	return h
}

func (s *giftPaySpec) fields() []*field { return s.fs }

func (s *giftPaySpec) check() check {
	c := check{errs: map[string]string{}}
	prov := providerOf(s.code)
	numName, pinName := cardFieldNames(prov)
	amount, perr := parseAmount(s.amount)
	switch {
	case perr != "":
		c.errs[api.FieldAmountDebit] = perr
	case amount == nil:
		c.errs[api.FieldAmountDebit] = "required: the amount to pay"
	}
	if len(c.errs) > 0 {
		return c
	}
	req := ops.GiftCardPayRequest{ServiceCode: s.code, Card: api.Card{Provider: prov, Number: strings.TrimSpace(s.number), PIN: strings.TrimSpace(s.pin)},
		Amount: *amount, Invoice: strings.TrimSpace(s.invoice), Currency: s.currency, LastName: strings.TrimSpace(s.lastName),
		Email: strings.TrimSpace(s.email), GroupTransaction: s.group}
	inv := req.Invoice
	if inv == "" {
		inv = "(made up when sent)"
	}
	op := api.GiftCardPay{ServiceCode: req.ServiceCode, Currency: req.Currency, Invoice: inv, Amount: req.Amount, Card: req.Card,
		LastName: req.LastName, Email: req.Email, GroupTransaction: req.GroupTransaction}
	if err := op.Validate(api.Rules{GiftCardCodes: s.codes}); err != nil {
		if ve, ok := asValidation(err); ok {
			for _, fe := range ve.Fields {
				k := fe.Field
				switch k {
				case numName:
					k = "CardNumber"
				case pinName:
					k = "CardPIN"
				}
				if _, dup := c.errs[k]; !dup {
					c.errs[k] = fe.Field + " " + fe.Rule
				}
			}
		}
		return c
	}
	c.summary = []string{titleStyle.Render(fmt.Sprintf("Pay %s %s with %s card %s", amount.StringFixed(2), s.currency, s.code, ops.MaskCard(req.Card.Number)))}
	c.plain = []string{fmt.Sprintf("Take %s %s from %s gift card %s for invoice %s.", amount.StringFixed(2), s.currency, s.code, ops.MaskCard(req.Card.Number), Clean(inv))}
	if s.group != "" {
		c.plain[0] = fmt.Sprintf("Pay the remainder of partial payment %s: %s %s from %s gift card %s.", s.group, amount.StringFixed(2), s.currency, s.code, ops.MaskCard(req.Card.Number))
	}
	c.plain = append(c.plain, "If the card holds less, the card's balance is taken and the rest stays to be paid (a partial payment).")
	if req.LastName != "" {
		c.plain = append(c.plain, "Customer: "+Clean(req.LastName)+" "+Clean(req.Email))
	}
	c.sending = sendingText(op.Request(), false)
	c.intent = req
	return c
}

// giftRefundSpec: full or partial, with the document's conditions checked
// before sending.
type giftRefundSpec struct {
	tx             *store.Transaction
	partialRefunds bool
	amount         string
	lastName       string
	email          string
	reason         string
	text           string
	fs             []*field
}

// NewGiftCardRefund is the gift card refund form for one payment;
// partialRefunds is the provider B merchant setting.
func NewGiftCardRefund(t *store.Transaction, partialRefunds bool, mode ops.Mode) Form {
	s := &giftRefundSpec{tx: t, partialRefunds: partialRefunds, reason: ops.ReasonReturn}
	partial := t.Provider == api.ProviderB && partialRefunds
	amountHint := allWord + ": everything left (" + t.Refundable().StringFixed(2) + "); less is a partial refund"
	if !partial {
		amountHint = allWord + ": everything left (" + t.Refundable().StringFixed(2) + "); this card takes only a full refund"
	}
	s.fs = []*field{{key: api.FieldAmountCredit, title: "Amount", hint: amountHint, value: &s.amount}}
	if partial && !t.HasContact {
		// Asked only where it matters: a partial refund of a provider B card
		// whose payment did not carry them.
		s.fs = append(s.fs,
			&field{key: api.PLastName, title: "Last name", hint: "needed for a partial refund (the payment did not carry it)", value: &s.lastName},
			&field{key: api.PEmail, title: "E-mail", hint: "needed for a partial refund (the payment did not carry it)", value: &s.email})
	}
	s.fs = append(s.fs, []*field{
		{key: "Reason", title: "Reason", value: &s.reason, options: []option{{"return", ops.ReasonReturn}, {"defect", ops.ReasonDefect},
			{"goodwill", ops.ReasonGoodwill}, {"duplicate", ops.ReasonDuplicate}, {"other", ops.ReasonOther}}},
		{key: "ReasonText", title: "Reason text", hint: "required for \"other\"", value: &s.text},
	}...)
	return newKit("giftcard-refund", s, mode)
}

func (s *giftRefundSpec) title() string { return "Gift card refund · " + s.tx.Key }

func (s *giftRefundSpec) header() string {
	t := s.tx
	cond := "partial refunds: "
	switch {
	case t.Provider != api.ProviderB:
		cond += "not possible (only voucher provider B cards)"
	case !s.partialRefunds:
		cond += "not possible (provider B has not enabled them for this merchant)"
	case t.HasContact:
		cond += "possible (LastName and Email were on the payment)"
	default:
		cond += "possible with LastName and Email on the refund"
	}
	return fmt.Sprintf("%s · invoice %s · paid %s %s · refunded %s · left %s\n%s", Clean(t.ServiceCode), Clean(t.Invoice),
		t.Amount.StringFixed(2), t.Currency, t.Refunded.StringFixed(2), t.Refundable().StringFixed(2), mutedStyle.Render(cond))
}

func (s *giftRefundSpec) fields() []*field { return s.fs }

func (s *giftRefundSpec) check() check {
	c := check{errs: map[string]string{}, invoice: s.tx.Invoice}
	amount, perr := refundAmount(s.amount)
	if perr != "" {
		c.errs[api.FieldAmountCredit] = perr
		if perr != emptyRefund {
			return c
		}
	}
	ch := ops.GiftCardRefundChange{Amount: amount, LastName: strings.TrimSpace(s.lastName), Email: strings.TrimSpace(s.email),
		Reason: ops.Reason{Code: s.reason, Text: strings.TrimSpace(s.text)}}
	op, err := ops.PlanGiftCardRefund(s.tx, ch, s.partialRefunds)
	if err == nil && perr != "" {
		return c // empty: the plan only looked for what else is wrong
	}
	if err != nil {
		if ve, ok := asValidation(err); ok {
			for _, fe := range ve.Fields {
				k := fe.Field
				if k == "Reason" && s.reason == ops.ReasonOther {
					k = "ReasonText"
				}
				if _, dup := c.errs[k]; !dup {
					c.errs[k] = fe.Rule
				}
			}
		} else {
			c.general = append(c.general, err.Error())
		}
		return c
	}
	kind := "partial refund"
	if op.Amount.Equal(s.tx.Amount) && s.tx.Refunded.IsZero() {
		kind = "full refund"
	}
	c.summary = []string{titleStyle.Render(fmt.Sprintf("Refund %s %s", op.Amount.StringFixed(2), s.tx.Currency)) + " · " + kind}
	c.plain = []string{
		fmt.Sprintf("Refund %s %s to the %s gift card of payment %s (invoice %s), reason: %s.", op.Amount.StringFixed(2), s.tx.Currency,
			Clean(s.tx.ServiceCode), Clean(s.tx.Key[:min(12, len(s.tx.Key))])+"…", Clean(s.tx.Invoice), Clean(ch.Reason.String())),
		fmt.Sprintf("Stays refundable on that payment afterwards: %s %s.", s.tx.Refundable().Sub(op.Amount).StringFixed(2), s.tx.Currency),
	}
	c.sending = sendingText(op.Request(), false) + "\nReason (audit log only): " + Clean(ch.Reason.String())
	c.intent = ops.GiftCardRefundRequest{Transaction: s.tx.Key, Change: ch}
	c.refund, c.refundCurrency = op.Amount, s.tx.Currency
	return c
}
