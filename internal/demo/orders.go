package demo

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

type customer struct {
	first, last, street, number, postal, city, country, email, phone, pno string
	gender                                                                int
}

var customers = []customer{
	{"Jan", "de Vries", "Prinsengracht", "263", "1016 GV", "Amsterdam", "NL", "jan.devries@example.nl", "0201234567", "12031984", 1},
	{"Anna", "Müller", "Friedrichstraße", "43", "10117", "Berlin", "DE", "anna.mueller@example.de", "030123456", "02071990", 2},
	{"Sophie", "Gruber", "Mariahilfer Straße", "77", "1060", "Wien", "AT", "sophie.gruber@example.at", "01234567", "23111987", 2},
	{"Sanne", "Bakker", "Oudegracht", "12", "3511 AL", "Utrecht", "NL", "sanne.bakker@example.nl", "0301234567", "30041995", 2},
	{"Lukas", "Schneider", "Marienplatz", "8", "80331", "München", "DE", "lukas.schneider@example.de", "089123456", "15081979", 1},
	{"Pieter", "Visser", "Coolsingel", "40", "3011 AD", "Rotterdam", "NL", "pieter.visser@example.nl", "0101234567", "01011970", 1},
	{"Lena", "Fischer", "Königsallee", "20", "40212", "Düsseldorf", "DE", "lena.fischer@example.de", "0211123456", "09091993", 2},
	{"Felix", "Huber", "Getreidegasse", "9", "5020", "Salzburg", "AT", "felix.huber@example.at", "0662123456", "21061988", 1},
	{"Femke", "Smit", "Grote Markt", "5", "9711 LV", "Groningen", "NL", "femke.smit@example.nl", "0501234567", "05121999", 2},
	{"Jonas", "Weber", "Zeil", "106", "60313", "Frankfurt am Main", "DE", "jonas.weber@example.de", "069123456", "17021985", 1},
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func art(num, title, price string, qty int) api.Article {
	return api.Article{Number: num, Title: title, Type: api.ArticleTypeGeneral, Price: d(price), Quantity: qty, Vat: d("21")}
}

var (
	espresso = art("ESP-01", "Espresso machine Classic", "349.00", 1)
	grinder  = art("GRIND-2", "Burr grinder", "129.95", 1)
	cups     = art("CUP-6", "Espresso cups, set of 6", "24.50", 2)
	beans    = art("BEAN-1K", "Coffee beans 1 kg", "18.90", 3)
	jug      = art("MILK-J", "Milk jug 600 ml", "14.95", 1)
	tamper   = art("TAMP-58", "Tamper 58 mm", "29.00", 1)
	scarf    = art("SCARF-W", "Wool scarf, charcoal", "39.95", 2)
	boots    = art("BOOT-H42", "Hiking boots, size 42", "149.00", 1)
	socks    = art("SOCK-3", "Merino socks, 3 pairs", "19.50", 2)
	jacket   = art("JACK-R", "Rain jacket", "129.00", 1)
	discount = api.Article{Number: "DISC10", Title: "Welcome discount", Type: api.ArticleTypeGeneral, Price: d("-10.00"), Quantity: 1, Vat: d("21")}
	shipping = api.Article{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: d("4.95"), Quantity: 1, Vat: d("21")}
	payFee   = api.Article{Number: "FEE", Title: "Invoice payment fee", Type: api.ArticleTypeHandling, Price: d("1.50"), Quantity: 1, Vat: d("21")}
)

// reservation builds a Reserve for customer c.
func reservation(c customer, invoice string, lines ...api.Article) api.Reserve {
	return api.Reserve{
		Currency: "EUR", Invoice: invoice,
		ClientIP: api.ClientIP{Type: api.IPv4, Address: "192.0.2.10"},
		Articles: lines,
		Billing: api.Address{FirstName: c.first, LastName: c.last, Street: c.street, HouseNumber: c.number, PostalCode: c.postal,
			City: c.city, Country: c.country, Email: c.email, PhoneNumber: c.phone},
		ShippingSameAsBilling: true,
		Customer:              api.Customer{Gender: c.gender, OperatingCountry: c.country, Pno: c.pno},
	}
}

var (
	yes = true
	no  = false
)

// deferred is a deferred-invoice order: the shop reserves and tells paydesk
// the order, then paydesk does what the shop's staff did.
func deferred(what string, c customer, lines []api.Article, approve *bool, then func(ctx context.Context, s *ops.Service, r *store.Reservation) error) order {
	return webshopOrder(what, c, lines, approve, true, then)
}

// pushOnly is an order that never reaches paydesk: only its Reserve push
// does, so it shows what a reservation without its lines looks like.
func pushOnly(what string, c customer, lines []api.Article) order {
	return webshopOrder(what, c, lines, &yes, false, nil)
}

func webshopOrder(what string, c customer, lines []api.Article, approve *bool, sendOrder bool, then func(ctx context.Context, s *ops.Service, r *store.Reservation) error) order {
	return order{what: what, run: func(ctx context.Context, a actors, invoice string) error {
		r, err := reserve(ctx, a, reservation(c, invoice, lines...), approve, sendOrder)
		if err != nil || r == nil {
			return err
		}
		if sendOrder && !r.LinesKnown {
			return fmt.Errorf("reservation %s: its order did not join it", r.Key)
		}
		if then == nil {
			return nil
		}
		if r.State() != store.StateReserved {
			return fmt.Errorf("reservation %s is %s after the customer step", r.Key, r.State())
		}
		return then(ctx, a.svc, r)
	}}
}

func lines(as ...api.Article) []api.Article { return as }

func amount(s string) *decimal.Decimal { v := d(s); return &v }

// testCard is the sandbox's test card with the given balance: its PIN is
// the balance in cents.
func testCard(p api.Provider, balance string) api.Card {
	return api.Card{Provider: p, Number: api.TestCardNumber, PIN: d(balance).Shift(2).String()}
}

// plan is the demo: twenty orders over every state and transaction kind.
func plan() []order {
	returned := ops.Reason{Code: "return", Text: "customer sent it back"}
	defect := ops.Reason{Code: "defect", Text: "seam came loose"}
	cs := customers
	return []order{
		deferred("reserved", cs[0], lines(espresso, cups, shipping), &yes, nil),
		deferred("reserved, with a discount", cs[1], lines(scarf, socks, discount, shipping), &yes, nil),
		deferred("reserved", cs[2], lines(jacket, boots, shipping, payFee), &yes, nil),
		deferred("awaiting the customer", cs[3], lines(beans, jug), nil, nil),
		deferred("declined by the risk check", customer{"Ruud", "Decline", "Damrak", "1", "1012 LG", "Amsterdam", "NL", "ruud@example.nl", "0207654321", "01021960", 1}, lines(espresso), &yes, nil),
		deferred("declined by the customer", cs[4], lines(tamper, shipping), &no, nil),
		deferred("captured in full", cs[5], lines(grinder, beans, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			_, err := capture(ctx, s, r, nil)
			return err
		}),
		deferred("captured in full", cs[6], lines(boots, socks, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			_, err := capture(ctx, s, r, nil)
			return err
		}),
		deferred("captured, refunded in full", cs[7], lines(scarf, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			key, err := capture(ctx, s, r, nil)
			if err != nil {
				return err
			}
			return refund(ctx, s, key, nil, returned)
		}),
		deferred("partly captured", cs[8], lines(espresso, grinder, cups, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			_, err := capture(ctx, s, r, map[string]int{"ESP-01": 1, "SHIP": 1})
			return err
		}),
		deferred("partly captured, rest cancelled", cs[9], lines(jacket, socks, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			if _, err := capture(ctx, s, r, map[string]int{"JACK-R": 1, "SHIP": 1}); err != nil {
				return err
			}
			return cancel(ctx, s, r)
		}),
		deferred("partly captured, part refunded", cs[0], lines(boots, scarf, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			key, err := capture(ctx, s, r, map[string]int{"BOOT-H42": 1, "SHIP": 1})
			if err != nil {
				return err
			}
			return refund(ctx, s, key, amount("20.00"), defect)
		}),
		deferred("captured in two shipments", cs[1], lines(cups, beans, jug, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			if _, err := capture(ctx, s, r, map[string]int{"CUP-6": 2, "SHIP": 1}); err != nil {
				return err
			}
			_, err := capture(ctx, s, r, nil)
			return err
		}),
		deferred("cancelled", cs[2], lines(tamper, jug), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			return cancel(ctx, s, r)
		}),
		deferred("captured, one item refunded", cs[3], lines(socks, scarf, shipping), &yes, func(ctx context.Context, s *ops.Service, r *store.Reservation) error {
			key, err := capture(ctx, s, r, nil)
			if err != nil {
				return err
			}
			return refund(ctx, s, key, amount("39.95"), returned)
		}),
		pushOnly("reserved; its order never reached paydesk", cs[4], lines(grinder, cups, shipping)),
		gift("gift card paid in full", ops.GiftCardPayRequest{ServiceCode: "customgiftcard", Card: testCard(api.ProviderCustom, "100.00"), Amount: d("45.00")}, nil),
		gift("gift card paid in full", ops.GiftCardPayRequest{ServiceCode: "voucherb", Card: testCard(api.ProviderB, "250.00"), Amount: d("79.90"),
			LastName: "Bakker", Email: "sanne.bakker@example.nl"}, nil),
		gift("gift card paid, refunded", ops.GiftCardPayRequest{ServiceCode: "vouchera", Card: testCard(api.ProviderA, "50.00"), Amount: d("32.50")},
			func(ctx context.Context, s *ops.Service, res ops.Result) error {
				r, err := s.GiftCardRefund(ctx, ops.GiftCardRefundRequest{Transaction: res.Key, Change: ops.GiftCardRefundChange{Reason: returned}})
				if err != nil {
					return fmt.Errorf("gift card refund: %w", err)
				}
				if !r.OK() {
					return fmt.Errorf("gift card refund: %s %s", r.StatusText(), r.Message)
				}
				return nil
			}),
		gift("gift card too low: partial payment, remainder paid", ops.GiftCardPayRequest{ServiceCode: "customgiftcard2", Card: testCard(api.ProviderCustom, "25.00"), Amount: d("60.00")},
			func(ctx context.Context, s *ops.Service, res ops.Result) error {
				if !res.Partial() || res.GroupTransaction == "" {
					return fmt.Errorf("expected a partial payment, got %s", res.StatusText())
				}
				_, err := giftPay(ctx, s, ops.GiftCardPayRequest{ServiceCode: "customgiftcard2", Card: testCard(api.ProviderCustom, "100.00"),
					Amount: res.Remainder, GroupTransaction: res.GroupTransaction, Invoice: res.Invoice})
				return err
			}),
		gift("gift card too low: partial payment, remainder open", ops.GiftCardPayRequest{ServiceCode: "voucherc", Card: testCard(api.ProviderC, "15.00"), Amount: d("40.00")}, nil),
	}
}

// gift is a gift card order: a payment, then what followed.
func gift(what string, g ops.GiftCardPayRequest, then func(ctx context.Context, s *ops.Service, res ops.Result) error) order {
	return order{what: what, run: func(ctx context.Context, a actors, invoice string) error {
		s := a.svc
		g.Invoice = "G" + invoice[1:]
		res, err := giftPay(ctx, s, g)
		if err != nil || then == nil {
			return err
		}
		return then(ctx, s, res)
	}}
}
