package api

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Operation is a typed request: it validates itself and builds its
// envelope. Every builder of this package is one.
type Operation interface {
	Request() *Request
	Validate(Rules) error
}

// Rules is the merchant configuration validation depends on.
type Rules struct {
	// GiftCardCodes are the configured gift card service codes; nil means
	// DefaultGiftCardCodes.
	GiftCardCodes []string
}

// IsGiftCardCode reports whether code is a configured gift card service.
func (r Rules) IsGiftCardCode(code string) bool {
	codes := r.GiftCardCodes
	if codes == nil {
		codes = DefaultGiftCardCodes
	}
	for _, c := range codes {
		if strings.EqualFold(c, code) {
			return true
		}
	}
	return false
}

// Countries the deferred-invoice service accepts.
var allowedCountries = []string{"NL", "DE", "AT"}

func isAllowedCountry(c string) bool {
	for _, a := range allowedCountries {
		if c == a {
			return true
		}
	}
	return false
}

const ruleCountry = "must be NL, DE or AT"

func checkCurrency(fe *fieldErrors, c string) {
	switch {
	case c == "":
		fe.add("", FieldCurrency, "required")
	case len(c) != 3 || strings.ToUpper(c) != c || strings.IndexFunc(c, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0:
		fe.add("", FieldCurrency, "must be a three-letter ISO 4217 code such as EUR")
	}
}

func checkRequired(fe *fieldErrors, group, field, v string) {
	if strings.TrimSpace(v) == "" {
		fe.add(group, field, "required")
	}
}

func hasAtMostTwoPlaces(d decimal.Decimal) bool {
	if d.Exponent() >= -2 {
		return true
	}
	return d.Equal(d.Round(2))
}

// checkAmount: positive, at most two decimals.
func checkAmount(fe *fieldErrors, field string, d decimal.Decimal) {
	switch {
	case !d.IsPositive():
		fe.add("", field, "must be greater than 0")
	case !hasAtMostTwoPlaces(d):
		fe.add("", field, "must have at most two decimals")
	}
}

func checkEmail(fe *fieldErrors, field, v string) {
	at := strings.LastIndexByte(v, '@')
	if at < 1 || at == len(v)-1 || strings.ContainsAny(v, " \t\r\n<>,;") || !strings.Contains(v[at+1:], ".") ||
		strings.HasSuffix(v, ".") {
		fe.add("", field, "must be an e-mail address such as name@example.com")
	}
}

func checkPhone(fe *fieldErrors, field, v string, digitsOnly bool) {
	if v == "" {
		return
	}
	if digitsOnly {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			fe.add("", field, "must be digits only (an integer) on UpdateReservation")
		}
		return
	}
	digits := 0
	for i, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0, r == ' ', r == '-', r == '(', r == ')':
		default:
			fe.add("", field, "must be a phone number: digits, spaces, dashes and an optional leading +")
			return
		}
	}
	if digits < 6 {
		fe.add("", field, "must be a phone number of at least 6 digits")
	}
}

// checkPno: a real calendar date in DDMMYYYY, not in the future.
func checkPno(fe *fieldErrors, v string) {
	if v == "" {
		fe.add("", PPno, "required")
		return
	}
	t, err := time.Parse("02012006", v)
	if err != nil || len(v) != 8 {
		fe.add("", PPno, "must be a real birth date in the form DDMMYYYY")
		return
	}
	if t.Year() < 1900 || t.After(time.Now()) {
		fe.add("", PPno, "must be a birth date between 1900 and today (DDMMYYYY)")
	}
}

func checkClientIP(fe *fieldErrors, ip *ClientIP) {
	if ip == nil || ip.Address == "" {
		fe.add("", FieldClientIP, "required on Reserve (Type and Address)")
		return
	}
	addr, err := netip.ParseAddr(ip.Address)
	if err != nil {
		fe.add("", FieldClientIPAddress, "must be an IPv4 or IPv6 address")
		return
	}
	switch ip.Type {
	case IPv4:
		if !addr.Is4() {
			fe.add("", FieldClientIPType, "0 (IPv4) does not match an IPv6 address; use 1")
		}
	case IPv6:
		if !addr.Is6() || addr.Is4In6() {
			fe.add("", FieldClientIPType, "1 (IPv6) does not match an IPv4 address; use 0")
		}
	default:
		fe.add("", FieldClientIPType, "must be 0 (IPv4) or 1 (IPv6)")
	}
}

// checkArticles applies the line rules; titleOnly relaxes what
// UpdateReservation does not require.
func checkArticles(fe *fieldErrors, as []Article, update bool) {
	seen := map[string]bool{}
	for i, a := range as {
		g := strconv.Itoa(i + 1)
		checkRequired(fe, g, PArticleTitle, a.Title)
		if !update {
			checkRequired(fe, g, PArticleNumber, a.Number)
		}
		if a.Number != "" {
			if seen[a.Number] {
				fe.add(g, PArticleNumber, "must be unique within the reservation (partial captures name lines by it)")
			}
			seen[a.Number] = true
		}
		switch a.Type {
		case "", ArticleTypeGeneral, ArticleTypeShipment, ArticleTypeHandling:
		default:
			fe.add(g, PArticleType, "must be General, ShipmentFee or HandlingFee")
		}
		if !hasAtMostTwoPlaces(a.Price) {
			fe.add(g, PArticlePrice, "must have at most two decimals")
		}
		if a.Quantity < 1 {
			fe.add(g, PArticleQuantity, "must be a positive integer")
		}
		switch {
		case a.Vat.IsNegative() || a.Vat.GreaterThan(decimal.NewFromInt(100)):
			fe.add(g, PArticleVat, "must be a percentage from 0 to 100")
		case !hasAtMostTwoPlaces(a.Vat):
			fe.add(g, PArticleVat, "must have at most two decimals")
		}
	}
}

func checkAddressFormats(fe *fieldErrors, shipping bool, a Address, update bool) {
	names := addressNames(shipping)
	if a.Country != "" && !isAllowedCountry(a.Country) {
		fe.add("", names[9], ruleCountry)
	}
	if a.Email != "" {
		checkEmail(fe, names[10], a.Email)
	}
	// The document types BillingCellPhoneNumber as an integer on
	// UpdateReservation.
	checkPhone(fe, names[11], a.CellPhoneNumber, update && !shipping)
	checkPhone(fe, names[12], a.PhoneNumber, false)
}

// checkShippingMatchesBilling is Reserve rule 3.
func checkShippingMatchesBilling(fe *fieldErrors, s, b Address) {
	for _, p := range []struct{ field, ship, bill string }{
		{"ShippingCountry", s.Country, b.Country},
		{"ShippingFirstName", s.FirstName, b.FirstName},
		{"ShippingLastName", s.LastName, b.LastName},
	} {
		if p.ship != "" && p.bill != "" && p.ship != p.bill {
			fe.add("", p.field, "must equal its billing counterpart ("+strings.Replace(p.field, "Shipping", "Billing", 1)+")")
		}
	}
}

// checkOrderLines is the rules of Reserve on its lines: at least one, each
// well formed, article numbers unique, a negative price only as a discount
// the total absorbs (the lines add up to more than 0). It returns the total.
func checkOrderLines(fe *fieldErrors, as []Article) decimal.Decimal {
	if len(as) == 0 {
		fe.add("", PArticleTitle, "at least one article group is required")
	}
	checkArticles(fe, as, false)
	total := ArticlesTotal(as)
	if len(as) > 0 && !total.IsPositive() {
		fe.add("", PArticlePrice, "the articles must add up to more than 0 (discounts included)")
	}
	return total
}

// ValidateOrder checks an order read from a file of order lines (paydesk
// import's CSV) with the rules of Reserve that such a file can carry:
// currency, invoice, the lines (checkOrderLines, as for a Reserve) and the
// formats of the addresses given. The file has no client IP or customer
// data, so Reserve's rules on those do not apply; everything else is the
// very same check a Reserve (and so the listener's /orders intake) gets.
func ValidateOrder(currency, invoice string, as []Article, billing, shipping Address) error {
	var fe fieldErrors
	checkCurrency(&fe, currency)
	checkRequired(&fe, "", FieldInvoice, invoice)
	checkOrderLines(&fe, as)
	checkAddressFormats(&fe, false, billing, false)
	if !shipping.IsZero() {
		checkAddressFormats(&fe, true, shipping, false)
		checkShippingMatchesBilling(&fe, shipping, billing)
	}
	return fe.err(ActionReserve)
}

// Validate checks every rule of Reserve and collects all violations.
func (r Reserve) Validate(Rules) error {
	var fe fieldErrors
	r.validate(&fe)
	return fe.err(ActionReserve)
}

func (r Reserve) validate(fe *fieldErrors) {
	checkCurrency(fe, r.Currency)
	checkRequired(fe, "", FieldInvoice, r.Invoice)
	checkClientIP(fe, &r.ClientIP)
	total := checkOrderLines(fe, r.Articles)
	if r.AmountDebit != nil {
		switch {
		case !hasAtMostTwoPlaces(*r.AmountDebit):
			fe.add("", FieldAmountDebit, "must have at most two decimals")
		case !r.AmountDebit.Equal(total):
			fe.add("", FieldAmountDebit, "must equal the articles' total ("+WireString(total)+")")
		}
	}
	b := r.Billing
	for _, f := range []struct{ name, v string }{
		{"BillingFirstName", b.FirstName}, {"BillingStreet", b.Street}, {"BillingHouseNumber", b.HouseNumber},
		{"BillingCity", b.City}, {"BillingCountry", b.Country}, {"BillingEmail", b.Email},
	} {
		checkRequired(fe, "", f.name, f.v)
	}
	checkAddressFormats(fe, false, b, false)
	if b.CellPhoneNumber == "" && b.PhoneNumber == "" {
		fe.add("", "BillingPhoneNumber", "BillingCellPhoneNumber or BillingPhoneNumber is required (rule 1)")
	}
	if !r.Shipping.IsZero() {
		s := r.Shipping
		checkAddressFormats(fe, true, s, false)
		if s.CellPhoneNumber == "" && s.PhoneNumber == "" {
			fe.add("", "ShippingPhoneNumber", "ShippingCellPhoneNumber or ShippingPhoneNumber is required when a shipping address is given (rule 2)")
		}
		checkShippingMatchesBilling(fe, s, b)
	}
	c := r.Customer
	if c.Gender != 1 && c.Gender != 2 {
		fe.add("", PGender, "must be 1 (male) or 2 (female)")
	}
	switch {
	case c.OperatingCountry == "":
		fe.add("", POperatingCountry, "required")
	case !isAllowedCountry(c.OperatingCountry):
		fe.add("", POperatingCountry, ruleCountry)
	case b.Country != "" && c.OperatingCountry != b.Country:
		fe.add("", POperatingCountry, "must equal BillingCountry (rule 4)")
	}
	checkPno(fe, c.Pno)
}

// Validate checks CancelReservation.
func (c CancelReservation) Validate(Rules) error {
	var fe fieldErrors
	checkCurrency(&fe, c.Currency)
	checkRequired(&fe, "", FieldInvoice, c.Invoice)
	checkRequired(&fe, "", PReservationNumber, c.ReservationNumber)
	return fe.err(ActionCancelReservation)
}

// Validate checks UpdateReservation, including that the amount does not go
// up when the caller passed the reserved amount.
func (u UpdateReservation) Validate(Rules) error {
	var fe fieldErrors
	checkCurrency(&fe, u.Currency)
	checkRequired(&fe, "", FieldInvoice, u.Invoice)
	checkRequired(&fe, "", PReservationNumber, u.ReservationNumber)
	checkArticles(&fe, u.Articles, true)
	checkAddressFormats(&fe, false, u.Billing, true)
	checkAddressFormats(&fe, true, u.Shipping, false)
	checkShippingMatchesBilling(&fe, u.Shipping, u.Billing)
	if u.ReservedAmount != nil && len(u.Articles) > 0 {
		if t := ArticlesTotal(u.Articles); t.GreaterThan(*u.ReservedAmount) {
			fe.add("", PArticlePrice, "the new total "+WireString(t)+" is above the reserved amount "+
				WireString(*u.ReservedAmount)+"; an update may keep or lower the amount, never raise it")
		}
	}
	return fe.err(ActionUpdateReservation)
}

func checkCaptureLines(fe *fieldErrors, ls []CaptureLine) {
	seen := map[string]bool{}
	for i, l := range ls {
		g := strconv.Itoa(i + 1)
		checkRequired(fe, g, PArticleNumber, l.ArticleNumber)
		if seen[l.ArticleNumber] && l.ArticleNumber != "" {
			fe.add(g, PArticleNumber, "each article may appear once per capture")
		}
		seen[l.ArticleNumber] = true
		if l.Quantity < 1 {
			fe.add(g, PArticleQuantity, "must be a positive integer")
		}
	}
}

// Validate checks a deferred Pay.
func (c Capture) Validate(Rules) error {
	var fe fieldErrors
	checkCurrency(&fe, c.Currency)
	checkRequired(&fe, "", FieldInvoice, c.Invoice)
	checkAmount(&fe, FieldAmountDebit, c.Amount)
	checkRequired(&fe, "", PReservationNumber, c.ReservationNumber)
	checkCaptureLines(&fe, c.Lines)
	return fe.err(ActionPay)
}

// Validate checks a deferred Refund.
func (r Refund) Validate(Rules) error {
	var fe fieldErrors
	checkCurrency(&fe, r.Currency)
	checkRequired(&fe, "", FieldInvoice, r.Invoice)
	checkAmount(&fe, FieldAmountCredit, r.Amount)
	checkRequired(&fe, "", FieldOriginalKey, r.OriginalTransactionKey)
	return fe.err(ActionRefund)
}

func checkGiftCardCode(fe *fieldErrors, rules Rules, code string) {
	switch {
	case code == "":
		fe.add("", FieldService, "a gift card service code is required")
	case !rules.IsGiftCardCode(code):
		codes := rules.GiftCardCodes
		if codes == nil {
			codes = DefaultGiftCardCodes
		}
		fe.add("", FieldService, "gift card service code "+strconvQuote(code)+" is not configured (configured: "+strings.Join(codes, ", ")+")")
	}
}

func strconvQuote(s string) string { return strconv.Quote(truncate(s, 40)) }

// Validate checks a gift card Pay or PayRemainder.
func (g GiftCardPay) Validate(rules Rules) error {
	var fe fieldErrors
	checkGiftCardCode(&fe, rules, g.ServiceCode)
	checkCurrency(&fe, g.Currency)
	checkRequired(&fe, "", FieldInvoice, g.Invoice)
	checkAmount(&fe, FieldAmountDebit, g.Amount)
	n, pin := g.Card.Provider.paramNames()
	switch {
	case n == "":
		fe.add("", PVoucherBCardnumber, "a card is required: VoucherACardNumber, VoucherBCardnumber or VoucherCCardnumber")
	case g.Card.Provider == ProviderCustom && !IsCustomCardCode(g.ServiceCode):
		fe.add("", PCardNumber, "CardNumber and Pin are for customgiftcard codes; use the provider's card parameters")
	default:
		checkRequired(&fe, "", n, g.Card.Number)
		checkRequired(&fe, "", pin, g.Card.PIN)
	}
	if g.Email != "" {
		checkEmail(&fe, PEmail, g.Email)
	}
	return fe.err(g.Action())
}

// Validate checks a gift card Refund and, when Original is given, the
// partial refund conditions.
func (g GiftCardRefund) Validate(rules Rules) error {
	var fe fieldErrors
	checkGiftCardCode(&fe, rules, g.ServiceCode)
	checkCurrency(&fe, g.Currency)
	checkRequired(&fe, "", FieldInvoice, g.Invoice)
	checkAmount(&fe, FieldAmountCredit, g.Amount)
	checkRequired(&fe, "", FieldOriginalKey, g.OriginalTransactionKey)
	if g.Email != "" {
		checkEmail(&fe, PEmail, g.Email)
	}
	if g.Original != nil && len(fe) == 0 {
		fe = append(fe, PartialRefundRule(*g.Original, g.Amount, g.LastName, g.Email)...)
	}
	return fe.err(ActionRefund)
}
