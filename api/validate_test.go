package api

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// validReserve is a Reserve that passes every rule; cases change one thing.
func validReserve() Reserve {
	return Reserve{
		Currency: "EUR", Invoice: "INV-1",
		ClientIP: ClientIP{Type: IPv4, Address: "192.0.2.10"},
		Articles: []Article{
			{Number: "A1", Title: "Blue toy", Type: ArticleTypeGeneral, Price: dec("19.99"), Quantity: 3, Vat: dec("21")},
			{Number: "SHIP", Title: "Shipping", Type: ArticleTypeShipment, Price: dec("4.95"), Quantity: 1, Vat: dec("21")},
			{Number: "DISC", Title: "Discount", Price: dec("-5.00"), Quantity: 1, Vat: dec("21")},
		},
		Billing: Address{FirstName: "Jan", LastName: "Jansen", Street: "Hoofdstraat", HouseNumber: "1",
			PostalCode: "1234AB", City: "Heerenveen", Country: "NL", Email: "jan@example.com", PhoneNumber: "0612345678"},
		ShippingSameAsBilling: true,
		Customer:              Customer{Gender: 1, OperatingCountry: "NL", Pno: "01011990"},
	}
}

type ruleCase[T any] struct {
	name  string
	edit  func(*T)
	field string // "" means valid
	rule  string // substring of the rule text
}

func runRuleCases[T Operation](t *testing.T, base func() T, cases []ruleCase[T]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := base()
			c.edit(&op)
			err := op.Validate(Rules{})
			if c.field == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want *ValidationError naming %s, got %v", c.field, err)
			}
			for _, f := range ve.Fields {
				if f.Field == c.field && strings.Contains(f.Rule, c.rule) {
					return
				}
			}
			t.Fatalf("no error for %s with rule %q in: %v", c.field, c.rule, err)
		})
	}
}

func TestReserveRules(t *testing.T) {
	amt := func(s string) *decimal.Decimal { d := dec(s); return &d }
	runRuleCases(t, validReserve, []ruleCase[Reserve]{
		{"valid", func(r *Reserve) {}, "", ""},
		{"valid with amount", func(r *Reserve) { r.AmountDebit = amt("59.92") }, "", ""},
		{"valid ipv6", func(r *Reserve) { r.ClientIP = ClientIP{Type: IPv6, Address: "2001:db8::1"} }, "", ""},
		{"valid shipping", func(r *Reserve) {
			r.ShippingSameAsBilling = false
			r.Shipping = Address{FirstName: "Jan", LastName: "Jansen", Street: "Kerkstraat", HouseNumber: "2", City: "Sneek", Country: "NL", CellPhoneNumber: "0687654321"}
		}, "", ""},
		{"currency missing", func(r *Reserve) { r.Currency = "" }, FieldCurrency, "required"},
		{"currency lowercase", func(r *Reserve) { r.Currency = "eur" }, FieldCurrency, "ISO 4217"},
		{"invoice missing", func(r *Reserve) { r.Invoice = " " }, FieldInvoice, "required"},
		{"no articles", func(r *Reserve) { r.Articles = nil }, PArticleTitle, "at least one article"},
		{"article title", func(r *Reserve) { r.Articles[0].Title = "" }, PArticleTitle, "required"},
		{"article number", func(r *Reserve) { r.Articles[1].Number = "" }, PArticleNumber, "required"},
		{"article number unique", func(r *Reserve) { r.Articles[1].Number = "A1" }, PArticleNumber, "unique"},
		{"article type", func(r *Reserve) { r.Articles[0].Type = "Gift" }, PArticleType, "General, ShipmentFee or HandlingFee"},
		{"price places", func(r *Reserve) { r.Articles[0].Price = dec("19.999") }, PArticlePrice, "two decimals"},
		{"quantity zero", func(r *Reserve) { r.Articles[0].Quantity = 0 }, PArticleQuantity, "positive integer"},
		{"quantity negative", func(r *Reserve) { r.Articles[0].Quantity = -2 }, PArticleQuantity, "positive integer"},
		{"vat places", func(r *Reserve) { r.Articles[0].Vat = dec("21.005") }, PArticleVat, "two decimals"},
		{"vat range", func(r *Reserve) { r.Articles[0].Vat = dec("-1") }, PArticleVat, "0 to 100"},
		{"total not positive", func(r *Reserve) { r.Articles[2].Price = dec("-100") }, PArticlePrice, "more than 0"},
		{"amount mismatch", func(r *Reserve) { r.AmountDebit = amt("60") }, FieldAmountDebit, "articles' total (59.92)"},
		{"amount places", func(r *Reserve) { r.AmountDebit = amt("59.921") }, FieldAmountDebit, "two decimals"},
		{"clientip missing", func(r *Reserve) { r.ClientIP = ClientIP{} }, FieldClientIP, "required"},
		{"clientip unparsable", func(r *Reserve) { r.ClientIP.Address = "300.1.1.1" }, FieldClientIPAddress, "IPv4 or IPv6"},
		{"clientip type mismatch v4", func(r *Reserve) { r.ClientIP = ClientIP{Type: IPv4, Address: "::1"} }, FieldClientIPType, "use 1"},
		{"clientip type mismatch v6", func(r *Reserve) { r.ClientIP = ClientIP{Type: IPv6, Address: "10.0.0.1"} }, FieldClientIPType, "use 0"},
		{"clientip type", func(r *Reserve) { r.ClientIP.Type = 4 }, FieldClientIPType, "0 (IPv4) or 1 (IPv6)"},
		{"billing first name", func(r *Reserve) { r.Billing.FirstName = "" }, "BillingFirstName", "required"},
		{"billing street", func(r *Reserve) { r.Billing.Street = "" }, "BillingStreet", "required"},
		{"billing house number", func(r *Reserve) { r.Billing.HouseNumber = "" }, "BillingHouseNumber", "required"},
		{"billing city", func(r *Reserve) { r.Billing.City = "" }, "BillingCity", "required"},
		{"billing country", func(r *Reserve) { r.Billing.Country = "" }, "BillingCountry", "required"},
		{"billing country allowed", func(r *Reserve) { r.Billing.Country = "BE"; r.Customer.OperatingCountry = "BE" }, "BillingCountry", "NL, DE or AT"},
		{"billing email", func(r *Reserve) { r.Billing.Email = "" }, "BillingEmail", "required"},
		{"billing email format", func(r *Reserve) { r.Billing.Email = "jan@" }, "BillingEmail", "e-mail address"},
		{"rule 1 phone", func(r *Reserve) { r.Billing.PhoneNumber = "" }, "BillingPhoneNumber", "rule 1"},
		{"rule 1 cell is enough", func(r *Reserve) { r.Billing.PhoneNumber = ""; r.Billing.CellPhoneNumber = "+31612345678" }, "", ""},
		{"phone format", func(r *Reserve) { r.Billing.PhoneNumber = "call me" }, "BillingPhoneNumber", "phone number"},
		{"rule 2 shipping phone", func(r *Reserve) {
			r.Shipping = Address{Street: "Kerkstraat", HouseNumber: "2", City: "Sneek", Country: "NL"}
		}, "ShippingPhoneNumber", "rule 2"},
		{"rule 3 shipping country", func(r *Reserve) {
			r.Shipping = Address{Country: "DE", PhoneNumber: "0612345678"}
		}, "ShippingCountry", "billing counterpart"},
		{"rule 3 shipping first name", func(r *Reserve) {
			r.Shipping = Address{FirstName: "Piet", PhoneNumber: "0612345678"}
		}, "ShippingFirstName", "billing counterpart"},
		{"rule 3 shipping last name", func(r *Reserve) {
			r.Shipping = Address{LastName: "Pietersen", PhoneNumber: "0612345678"}
		}, "ShippingLastName", "billing counterpart"},
		{"rule 4 operating country", func(r *Reserve) { r.Customer.OperatingCountry = "DE" }, POperatingCountry, "BillingCountry"},
		{"operating country allowed", func(r *Reserve) { r.Customer.OperatingCountry = "FR" }, POperatingCountry, "NL, DE or AT"},
		{"operating country missing", func(r *Reserve) { r.Customer.OperatingCountry = "" }, POperatingCountry, "required"},
		{"rule 5 discount allowed", func(r *Reserve) { r.Articles[2].Price = dec("-10") }, "", ""},
		{"gender", func(r *Reserve) { r.Customer.Gender = 3 }, PGender, "1 (male) or 2 (female)"},
		{"pno missing", func(r *Reserve) { r.Customer.Pno = "" }, PPno, "required"},
		{"pno not a date", func(r *Reserve) { r.Customer.Pno = "31021990" }, PPno, "real birth date"},
		{"pno format", func(r *Reserve) { r.Customer.Pno = "1990-01-01" }, PPno, "DDMMYYYY"},
		{"pno future", func(r *Reserve) { r.Customer.Pno = "01013999" }, PPno, "between 1900 and today"},
	})
}

func TestReserveCollectsEveryViolation(t *testing.T) {
	r := validReserve()
	r.Currency, r.Billing.Email, r.Customer.Gender = "", "", 0
	r.Articles[0].Quantity = 0
	err := r.Validate(Rules{})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want ValidationError, got %v", err)
	}
	for _, f := range []string{FieldCurrency, "BillingEmail", PGender, PArticleQuantity} {
		if !ve.Has(f) {
			t.Errorf("missing error for %s in %v", f, err)
		}
	}
	if !strings.Contains(err.Error(), "article 1 ArticleQuantity: must be a positive integer") {
		t.Errorf("error text does not name the article group: %v", err)
	}
}

func TestCancelUpdateCaptureRefundRules(t *testing.T) {
	runRuleCases(t, func() CancelReservation {
		return CancelReservation{Currency: "EUR", Invoice: "INV-1", ReservationNumber: "R1"}
	}, []ruleCase[CancelReservation]{
		{"valid", func(*CancelReservation) {}, "", ""},
		{"reservation number", func(c *CancelReservation) { c.ReservationNumber = "" }, PReservationNumber, "required"},
		{"invoice", func(c *CancelReservation) { c.Invoice = "" }, FieldInvoice, "required"},
	})
	reserved := dec("50")
	runRuleCases(t, func() UpdateReservation {
		return UpdateReservation{Currency: "EUR", Invoice: "INV-1", ReservationNumber: "R1", ReservedAmount: &reserved,
			Articles: []Article{{Number: "A1", Title: "Toy", Price: dec("20"), Quantity: 2, Vat: dec("21")}}}
	}, []ruleCase[UpdateReservation]{
		{"valid lower", func(*UpdateReservation) {}, "", ""},
		{"valid equal", func(u *UpdateReservation) { u.Articles[0].Price = dec("25") }, "", ""},
		{"raise refused", func(u *UpdateReservation) { u.Articles[0].Price = dec("25.01") }, PArticlePrice, "never raise"},
		{"title required", func(u *UpdateReservation) { u.Articles[0].Title = "" }, PArticleTitle, "required"},
		{"number optional", func(u *UpdateReservation) { u.Articles[0].Number = "" }, "", ""},
		{"reservation number", func(u *UpdateReservation) { u.ReservationNumber = "" }, PReservationNumber, "required"},
		{"billing optional", func(u *UpdateReservation) { u.Billing = Address{City: "Utrecht"} }, "", ""},
		{"cell phone integer", func(u *UpdateReservation) { u.Billing.CellPhoneNumber = "+31 6 1234" }, "BillingCellPhoneNumber", "integer"},
		{"billing country", func(u *UpdateReservation) { u.Billing.Country = "US" }, "BillingCountry", "NL, DE or AT"},
		{"shipping vs billing", func(u *UpdateReservation) {
			u.Billing.Country = "NL"
			u.Shipping.Country = "DE"
		}, "ShippingCountry", "billing counterpart"},
	})
	runRuleCases(t, func() Capture {
		return Capture{Currency: "EUR", Invoice: "INV-1", ReservationNumber: "R1", Amount: dec("39.98"),
			Lines: []CaptureLine{{ArticleNumber: "A1", Quantity: 2}}}
	}, []ruleCase[Capture]{
		{"valid partial", func(*Capture) {}, "", ""},
		{"valid full", func(c *Capture) { c.Lines = nil }, "", ""},
		{"amount zero", func(c *Capture) { c.Amount = decimal.Zero }, FieldAmountDebit, "greater than 0"},
		{"amount places", func(c *Capture) { c.Amount = dec("1.005") }, FieldAmountDebit, "two decimals"},
		{"reservation", func(c *Capture) { c.ReservationNumber = "" }, PReservationNumber, "required"},
		{"line article", func(c *Capture) { c.Lines[0].ArticleNumber = "" }, PArticleNumber, "required"},
		{"line qty", func(c *Capture) { c.Lines[0].Quantity = 0 }, PArticleQuantity, "positive integer"},
		{"line twice", func(c *Capture) { c.Lines = append(c.Lines, CaptureLine{"A1", 1}) }, PArticleNumber, "once per capture"},
	})
	runRuleCases(t, func() Refund {
		return Refund{Currency: "EUR", Invoice: "INV-1", OriginalTransactionKey: "K", Amount: dec("10")}
	}, []ruleCase[Refund]{
		{"valid", func(*Refund) {}, "", ""},
		{"original key", func(r *Refund) { r.OriginalTransactionKey = "" }, FieldOriginalKey, "required"},
		{"amount", func(r *Refund) { r.Amount = dec("-1") }, FieldAmountCredit, "greater than 0"},
	})
}

func TestGiftCardRules(t *testing.T) {
	runRuleCases(t, func() GiftCardPay {
		return GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "GC-1", Amount: dec("10"),
			Card: Card{Provider: ProviderB, Number: TestCardNumber, PIN: "1000"}}
	}, []ruleCase[GiftCardPay]{
		{"valid", func(*GiftCardPay) {}, "", ""},
		{"valid provider A", func(g *GiftCardPay) { g.Card.Provider = ProviderA }, "", ""},
		{"valid provider C", func(g *GiftCardPay) { g.Card.Provider = ProviderC }, "", ""},
		{"valid custom", func(g *GiftCardPay) { g.ServiceCode = "customgiftcard2"; g.Card.Provider = ProviderCustom }, "", ""},
		{"custom params on provider code", func(g *GiftCardPay) { g.Card.Provider = ProviderCustom }, PCardNumber, "customgiftcard"},
		{"unconfigured code", func(g *GiftCardPay) { g.ServiceCode = "boekenbon" }, FieldService, "not configured"},
		{"no code", func(g *GiftCardPay) { g.ServiceCode = "" }, FieldService, "required"},
		{"no card", func(g *GiftCardPay) { g.Card = Card{} }, PVoucherBCardnumber, "a card is required"},
		{"card number", func(g *GiftCardPay) { g.Card.Number = "" }, PVoucherBCardnumber, "required"},
		{"pin", func(g *GiftCardPay) { g.Card.PIN = "" }, PVoucherBPIN, "required"},
		{"validation code C", func(g *GiftCardPay) { g.Card = Card{Provider: ProviderC, Number: "1"} }, PVoucherCValidationCode, "required"},
		{"amount", func(g *GiftCardPay) { g.Amount = decimal.Zero }, FieldAmountDebit, "greater than 0"},
		{"email", func(g *GiftCardPay) { g.Email = "nope" }, PEmail, "e-mail"},
	})
	orig := func(p Provider, partial, contact bool) *GiftCardOriginal {
		return &GiftCardOriginal{Amount: dec("50"), Provider: p, PartialRefunds: partial, HasContact: contact}
	}
	runRuleCases(t, func() GiftCardRefund {
		return GiftCardRefund{ServiceCode: "voucherb", Currency: "EUR", Invoice: "GC-1", OriginalTransactionKey: "K", Amount: dec("50")}
	}, []ruleCase[GiftCardRefund]{
		{"valid without context", func(*GiftCardRefund) {}, "", ""},
		{"full refund any provider", func(g *GiftCardRefund) { g.Original = orig(ProviderA, false, false) }, "", ""},
		{"partial B configured with contact on payment", func(g *GiftCardRefund) {
			g.Amount = dec("20")
			g.Original = orig(ProviderB, true, true)
		}, "", ""},
		{"partial B configured with contact on refund", func(g *GiftCardRefund) {
			g.Amount, g.LastName, g.Email = dec("20"), "Jansen", "jan@example.com"
			g.Original = orig(ProviderB, true, false)
		}, "", ""},
		{"partial provider A", func(g *GiftCardRefund) { g.Amount = dec("20"); g.Original = orig(ProviderA, true, true) }, FieldAmountCredit, "provider B"},
		{"partial not configured", func(g *GiftCardRefund) { g.Amount = dec("20"); g.Original = orig(ProviderB, false, true) }, FieldAmountCredit, "configure"},
		{"partial no last name", func(g *GiftCardRefund) {
			g.Amount, g.Email = dec("20"), "jan@example.com"
			g.Original = orig(ProviderB, true, false)
		}, PLastName, "partial refund"},
		{"partial no email", func(g *GiftCardRefund) {
			g.Amount, g.LastName = dec("20"), "Jansen"
			g.Original = orig(ProviderB, true, false)
		}, PEmail, "partial refund"},
		{"above what is left", func(g *GiftCardRefund) {
			g.Original = orig(ProviderB, true, true)
			g.Original.Refunded = dec("10")
		}, FieldAmountCredit, "left to refund (40)"},
		{"original key", func(g *GiftCardRefund) { g.OriginalTransactionKey = "" }, FieldOriginalKey, "required"},
	})
}

// The request a builder makes parses back to the same operation, and the
// sandbox-side validation agrees with the client-side one.
func TestBuildersRoundTripThroughParse(t *testing.T) {
	ops := []Operation{
		validReserve(),
		CancelReservation{Currency: "EUR", Invoice: "I", ReservationNumber: "R"},
		UpdateReservation{Currency: "EUR", Invoice: "I", ReservationNumber: "R", Billing: Address{City: "Sneek"}},
		Capture{Currency: "EUR", Invoice: "I", ReservationNumber: "R", Amount: dec("39.98"), Lines: []CaptureLine{{"A1", 2}}},
		Refund{Currency: "EUR", Invoice: "I", OriginalTransactionKey: "K", Amount: dec("5")},
		GiftCardPay{ServiceCode: "vouchera", Currency: "EUR", Invoice: "I", Amount: dec("5"), Card: Card{ProviderA, "123", "456"}},
		GiftCardPay{ServiceCode: "vouchera", Currency: "EUR", Invoice: "I", Amount: dec("5"), Card: Card{ProviderC, "123", "456"}, GroupTransaction: "G"},
		GiftCardRefund{ServiceCode: "voucherc", Currency: "EUR", Invoice: "I", OriginalTransactionKey: "K", Amount: dec("5")},
	}
	for _, op := range ops {
		req := op.Request()
		body, err := MarshalCanonical(req)
		if err != nil {
			t.Fatal(err)
		}
		dreq, err := DecodeRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseOperation(dreq, req.Path()+"/", Rules{})
		if err != nil {
			t.Fatalf("%T: %v\n%s", op, err, body)
		}
		b2, _ := MarshalCanonical(back.Request())
		if string(b2) != string(body) {
			t.Errorf("%T round trip differs\n got %s\nwant %s", op, b2, body)
		}
	}
}

func TestParseOperationRefusals(t *testing.T) {
	cases := []struct {
		name, body, path, field, rule string
	}{
		{"unknown service", `{"Currency":"EUR","Invoice":"I","Services":{"ServiceList":[{"Name":"klarnakp","Action":"Pay"}]}}`, PathTransaction, FieldService, "not configured"},
		{"unknown action", `{"Currency":"EUR","Invoice":"I","Services":{"ServiceList":[{"Name":"deferredkp","Action":"Authorize"}]}}`, PathTransaction, FieldAction, "no action"},
		{"wrong path", `{"Currency":"EUR","Invoice":"I","Services":{"ServiceList":[{"Name":"deferredkp","Action":"CancelReservation","Parameters":[{"Name":"ReservationNumber","Value":"R"}]}]}}`, PathTransaction, FieldAction, "/json/DataRequest"},
		{"article outside group", `{"Currency":"EUR","Invoice":"I","Services":{"ServiceList":[{"Name":"deferredkp","Action":"Pay","Parameters":[{"Name":"ReservationNumber","Value":"R"},{"Name":"ArticleNumber","Value":"A"}]}]},"AmountDebit":1}`, PathTransaction, PArticleNumber, "GroupID"},
		{"bad price", `{"Currency":"EUR","Invoice":"I","Services":{"ServiceList":[{"Name":"deferredkp","Action":"Reserve","Parameters":[{"Name":"ArticlePrice","Value":"abc","GroupType":"Article","GroupID":1}]}]}}`, PathDataRequest, PArticlePrice, "decimal number"},
		{"same as billing missing", `{"Currency":"EUR","Invoice":"I","Services":{"ServiceList":[{"Name":"deferredkp","Action":"Reserve","Parameters":[]}]}}`, PathDataRequest, PShippingSameAsBill, "required"},
		{"pay remainder without group", `{"Currency":"EUR","Invoice":"I","AmountDebit":5,"Services":{"ServiceList":[{"Name":"voucherb","Action":"PayRemainder","Parameters":[]}]}}`, PathTransaction, FieldOriginalKey, "group transaction"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseOperation(req, c.path, Rules{})
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want ValidationError, got %v", err)
			}
			for _, f := range ve.Fields {
				if f.Field == c.field && strings.Contains(f.Rule, c.rule) {
					return
				}
			}
			t.Fatalf("no %s/%q in %v", c.field, c.rule, err)
		})
	}
}

// The Node SDK's Reserve (numbers as values, BillingCustomer groups) parses
// into the same typed Reserve a paydesk caller would build.
func TestParseLiberalReserve(t *testing.T) {
	vf := loadVectors(t)
	req, err := DecodeRequest([]byte(vf.Requests[6].Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Services.ServiceList[0].Name = ServiceDeferred
	op, err := ParseOperation(req, PathDataRequest, Rules{})
	r, ok := op.(Reserve)
	if !ok {
		t.Fatalf("got %T", op)
	}
	if len(r.Articles) != 2 || r.Articles[0].Quantity != 2 || !r.Articles[0].Price.Equal(dec("40.1")) || r.Articles[1].Number != "DEF456" {
		t.Fatalf("articles = %+v", r.Articles)
	}
	if r.Customer.Gender != 1 || r.Billing.City != "Amsterdam" || r.Shipping.Email != "shipping@buckaroo.nl" {
		t.Fatalf("reserve = %+v", r)
	}
	// The SDK's sample lacks phone and house numbers and ShippingSameAsBilling: those
	// are the only rules it breaks.
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want validation error, got %v", err)
	}
	for _, f := range ve.Fields {
		switch f.Field {
		case PShippingSameAsBill, "BillingPhoneNumber", "ShippingPhoneNumber", "BillingHouseNumber":
		default:
			t.Errorf("unexpected error %v", f)
		}
	}
}

func TestParseRefusesMissingArticleValuesAndB2B(t *testing.T) {
	base := func() *Request {
		return Reserve{Currency: "EUR", Invoice: "I", ClientIP: ClientIP{Address: "192.0.2.1"},
			Articles: []Article{{Number: "A", Title: "T", Price: decimal.NewFromInt(5), Quantity: 1, Vat: decimal.NewFromInt(21)}},
			Billing:  Address{FirstName: "J", Street: "S", HouseNumber: "1", City: "C", Country: "NL", Email: "j@example.com", PhoneNumber: "0612345678"},
			Customer: Customer{Gender: 1, OperatingCountry: "NL", Pno: "01011990"}}.Request()
	}
	drop := func(name string) *Request {
		r := base()
		ps := r.Services.ServiceList[0].Parameters
		for i, p := range ps {
			if p.Name == name {
				r.Services.ServiceList[0].Parameters = append(ps[:i:i], ps[i+1:]...)
				break
			}
		}
		return r
	}
	add := func(p Parameter) *Request {
		r := base()
		r.Services.ServiceList[0].Parameters = append(r.Services.ServiceList[0].Parameters, p)
		return r
	}
	for _, c := range []struct {
		name  string
		req   *Request
		field string
	}{
		{"price", drop(PArticlePrice), PArticlePrice},
		{"vat", drop(PArticleVat), PArticleVat},
		{"coc", add(Parameter{Name: "CompanyCOCRegistration", Value: "1"}), "CompanyCOCRegistration"},
		{"customer type", add(Parameter{Name: "customertype", Value: "company"}), "CustomerType"},
		{"ok", base(), ""},
	} {
		_, err := ParseOperation(c.req, PathDataRequest, Rules{})
		var ve *ValidationError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!errors.As(err, &ve) || !ve.Has(c.field)):
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.field)
		}
	}
	if fe := ChannelRule(ServiceDeferred, "Mobile"); len(fe) != 1 || fe[0].Field != FieldChannel {
		t.Errorf("ChannelRule(Mobile) = %v", fe)
	}
	re := (&ValidationError{Action: ActionReserve, Fields: ChannelRule(ServiceDeferred, "Mobile")}).RequestErrors(ServiceDeferred)
	if len(re.ChannelErrors) != 1 || re.ChannelErrors[0].Name != FieldChannel {
		t.Errorf("channel error not in ChannelErrors: %+v", re)
	}
}
