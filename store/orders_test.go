package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"paydesk/api"
)

func shopOrder(invoice string) Order {
	return Order{Invoice: invoice, Currency: "EUR", Source: "intake test",
		Articles: []api.Article{
			{Number: "MUG", Title: "Mug", Price: dec("12.50"), Quantity: 2, Vat: dec("21")},
			{Number: "TEE", Title: "T-shirt", Price: dec("24.95"), Quantity: 1, Vat: dec("21")},
			{Number: "SHIP", Title: "Shipping", Type: "ShipmentFee", Price: dec("4.95"), Quantity: 1, Vat: dec("21")},
		},
		Billing: api.Address{FirstName: "Jürgen", LastName: "Müller", Street: "Hauptstraße", HouseNumber: "5", City: "Köln",
			Country: "DE", Email: "jm@example.de", PhoneNumber: "0221123456"}}
}

// reservePush is the Reserve push of a shop's reservation: only the key, the
// invoice and the reservation number.
func reservePush(g *gw, invoice string) (key, number string, p *api.Push) {
	key = g.key()
	number = "RES-" + key[28:]
	return key, number, dataPush(key, invoice, api.ActionReserve, g.status(api.StatusSuccess, ""),
		api.ResponseParameter{Name: api.PReservationNumber, Value: api.FlexString(number)})
}

func TestOrderJoinsReservationInEitherOrder(t *testing.T) {
	for _, orderFirst := range []bool{true, false} {
		name := "push first"
		if orderFirst {
			name = "order first"
		}
		t.Run(name, func(t *testing.T) {
			db := openTest(t)
			g := &gw{clock: t0}
			key, _, p := reservePush(g, "SHOP-77001")
			var res OrderResult
			var err error
			if orderFirst {
				if res, err = db.PutOrder(t.Context(), shopOrder("SHOP-77001")); err != nil {
					t.Fatal(err)
				}
				if res.Outcome != OrderImported || res.ReservationKey != "" {
					t.Fatalf("order before its push: %+v", res)
				}
				waiting, _ := db.Orders(t.Context(), true)
				if len(waiting) != 1 {
					t.Fatalf("orders waiting for their push: %d, want 1", len(waiting))
				}
				// Until the push, a placeholder shows the order awaiting the
				// customer, with its customer and amount.
				sums, _ := db.LoadReservationSummaries(t.Context())
				if len(sums) != 1 || sums[0].Key != PlaceholderPrefix+"SHOP-77001" || sums[0].State != StateAwaitingCustomer ||
					sums[0].Customer != "Jürgen Müller" || !sums[0].Amount.Equal(dec("54.90")) {
					t.Fatalf("placeholder %+v", sums)
				}
				push(t, db, p)
				if c, _ := db.Counts(t.Context()); c.Reservations != 1 {
					t.Fatalf("%d reservations counted after the placeholder was replaced", c.Reservations)
				}
			} else {
				push(t, db, p)
				r, _ := db.Reservation(t.Context(), key)
				if r.LinesKnown || !r.Amount().IsZero() {
					t.Fatalf("push-only reservation has lines: %+v", r.Lines)
				}
				if res, err = db.PutOrder(t.Context(), shopOrder("SHOP-77001")); err != nil {
					t.Fatal(err)
				}
				if res.Outcome != OrderImported || res.ReservationKey != key {
					t.Fatalf("order after its push: %+v", res)
				}
			}
			r, err := db.Reservation(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if !r.LinesKnown || len(r.Lines) != 3 || !r.Amount().Equal(dec("54.90")) {
				t.Fatalf("lines %+v amount %s", r.Lines, r.Amount())
			}
			if r.CustomerName != "Jürgen Müller" || r.CustomerEmail != "jm@example.de" || r.Country != "DE" || r.OrderSource != "intake test" {
				t.Fatalf("customer %q %q %q source %q", r.CustomerName, r.CustomerEmail, r.Country, r.OrderSource)
			}
			if r.State() != StateReserved {
				t.Fatalf("state %s", r.State())
			}
			o, err := db.Order(t.Context(), "SHOP-77001")
			if err != nil || o.ReservationKey != key {
				t.Fatalf("order not marked joined: %+v %v", o, err)
			}
			if waiting, _ := db.Orders(t.Context(), true); len(waiting) != 0 {
				t.Fatalf("%d orders still waiting", len(waiting))
			}
			sums, _ := db.LoadReservationSummaries(t.Context())
			if len(sums) != 1 || sums[0].Customer != "Jürgen Müller" || sums[0].Email != "jm@example.de" || !sums[0].Amount.Equal(dec("54.90")) {
				t.Fatalf("summary %+v", sums)
			}
		})
	}
}

func TestOrderIdempotentAndConflicts(t *testing.T) {
	db := openTest(t)
	if _, err := db.PutOrder(t.Context(), shopOrder("SHOP-1")); err != nil {
		t.Fatal(err)
	}
	// The same order again, prices written differently: one order.
	again := shopOrder("SHOP-1")
	again.Articles[0].Price = dec("12.5")
	again.Source = "import orders.csv"
	res, err := db.PutOrder(t.Context(), again)
	if err != nil || res.Outcome != OrderKnown {
		t.Fatalf("same order again: %+v %v", res, err)
	}
	other := shopOrder("SHOP-1")
	other.Articles[0].Quantity = 3
	res, err = db.PutOrder(t.Context(), other)
	if !errors.Is(err, ErrOrderConflict) || res.Outcome != OrderConflict {
		t.Fatalf("other lines: %+v %v", res, err)
	}
	if res.Reason != `article "MUG": quantity 2 known, 3 sent` {
		t.Fatalf("reason %q", res.Reason)
	}
	kept, _ := db.Order(t.Context(), "SHOP-1")
	if kept.Articles[0].Quantity != 2 || kept.Source != "intake test" {
		t.Fatalf("the first order was replaced: %+v", kept)
	}
	cs, err := db.OrderConflicts(t.Context(), "SHOP-1")
	if err != nil || len(cs) != 1 || cs[0].Articles[0].Quantity != 3 {
		t.Fatalf("conflicts %+v %v", cs, err)
	}
	// Sending the conflicting order twice keeps one copy of it.
	if _, err := db.PutOrder(t.Context(), other); !errors.Is(err, ErrOrderConflict) {
		t.Fatal(err)
	}
	if cs, _ := db.OrderConflicts(t.Context(), ""); len(cs) != 1 {
		t.Fatalf("%d conflicts", len(cs))
	}
	if _, err := db.PutOrder(t.Context(), Order{Invoice: "X"}); err == nil {
		t.Fatal("an order without lines was stored")
	}
}

func TestOrderForReservationPaydeskMade(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	s := newScenario(t, db, g, "INV-OWN")
	s.reserve([]api.Article{{Number: "A", Title: "A", Price: dec("10"), Quantity: 1, Vat: dec("21")}}, true)
	same := Order{Invoice: "INV-OWN", Currency: "EUR", Articles: []api.Article{{Number: "A", Title: "A", Price: dec("10.00"), Quantity: 1, Vat: dec("21")}}}
	if res, err := db.PutOrder(t.Context(), same); err != nil || res.Outcome != OrderKnown || res.ReservationKey != s.resKey {
		t.Fatalf("same lines: %+v %v", res, err)
	}
	diff := Order{Invoice: "INV-OWN", Currency: "EUR", Articles: []api.Article{{Number: "B", Title: "B", Price: dec("10"), Quantity: 1, Vat: dec("21")}}}
	if _, err := db.PutOrder(t.Context(), diff); !errors.Is(err, ErrOrderConflict) {
		t.Fatalf("other lines: %v", err)
	}
	if r := s.reservation(); r.Lines[0].ArticleNumber != "A" {
		t.Fatalf("lines changed: %+v", r.Lines)
	}
}

// TestCaptureMadeElsewhere: the shop's own back end captures; the Pay push
// joins by invoice. Lines are booked when the amount tells them apart,
// otherwise the amount is booked and the split marked unknown.
func TestCaptureMadeElsewhere(t *testing.T) {
	cases := []struct {
		name          string
		amount        string
		captured      map[string]int // article → units booked
		unsplit       string
		state         State
		remainingLeft string
	}{
		{"one line", "24.95", map[string]int{"TEE": 1}, "0", StatePartlyCaptured, "29.95"},
		{"two units", "25", map[string]int{"MUG": 2}, "0", StatePartlyCaptured, "29.90"},
		{"everything", "54.90", map[string]int{"MUG": 2, "TEE": 1, "SHIP": 1}, "0", StateCaptured, "0"},
		{"no combination", "20", map[string]int{}, "20", StatePartlyCaptured, "34.90"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			g := &gw{clock: t0}
			key, number, p := reservePush(g, "SHOP-9")
			push(t, db, p)
			if _, err := db.PutOrder(t.Context(), shopOrder("SHOP-9")); err != nil {
				t.Fatal(err)
			}
			k := g.key()
			push(t, db, txPush(k, "SHOP-9", api.ServiceDeferred, api.TypeDeferredPay, dec(tc.amount), g.status(api.StatusSuccess, api.SubCodeProcessed), nil,
				api.ResponseParameter{Name: api.PInvoiceNumber, Value: "PROV-123"}))
			r, _ := db.Reservation(t.Context(), number)
			if r.Key != key || !r.CapturedAmount.Equal(dec(tc.amount)) {
				t.Fatalf("capture not joined: captured %s", r.CapturedAmount)
			}
			for _, l := range r.Lines {
				if l.Captured != tc.captured[l.ArticleNumber] {
					t.Errorf("%s captured %d, want %d", l.ArticleNumber, l.Captured, tc.captured[l.ArticleNumber])
				}
			}
			if !r.UnsplitCaptured.Equal(dec(tc.unsplit)) || r.State() != tc.state || !r.RemainingAmount().Equal(dec(tc.remainingLeft)) {
				t.Fatalf("unsplit %s state %s remaining %s", r.UnsplitCaptured, r.State(), r.RemainingAmount())
			}
			if tx, _ := db.Transaction(t.Context(), k); tx.CustomerName != "Jürgen Müller" {
				t.Fatalf("the capture does not name the customer: %q", tx.CustomerName)
			}
			if sums, _ := db.LoadReservationSummaries(t.Context()); sums[0].InvoiceNumbers != "PROV-123" {
				t.Fatalf("provider invoice number not in the summary: %q", sums[0].InvoiceNumbers)
			}
		})
	}
}

// TestShopBackEndPushesKeepTheLedger: the shop's own back end captures,
// refunds and cancels; only the pushes reach paydesk, in any order. They
// join the reservation by invoice (or through the capture they refund), so
// the ledger ends the same whatever order they came in.
func TestShopBackEndPushesKeepTheLedger(t *testing.T) {
	build := func(g *gw) []*api.Push {
		_, _, reserve := reservePush(g, "SHOP-5")
		capKey := g.key()
		capture := txPush(capKey, "SHOP-5", api.ServiceDeferred, api.TypeDeferredPay, dec("24.95"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil,
			api.ResponseParameter{Name: api.PInvoiceNumber, Value: "PROV-9"})
		refund := txPush(g.key(), "SHOP-5", api.ServiceDeferred, api.TypeDeferredRefund, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed),
			[]api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: capKey}})
		cancel := dataPush(g.key(), "SHOP-5", api.ActionCancelReservation, g.status(api.StatusSuccess, api.SubCodeProcessed))
		return []*api.Push{reserve, capture, refund, cancel}
	}
	want := "closed captured 24.95 refunded 10.00 [MUG c0 x2; TEE c1 x0; SHIP c0 x1]"
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}} {
		for _, orderFirst := range []bool{true, false} {
			db := openTest(t)
			ps := build(&gw{clock: t0})
			if orderFirst {
				if _, err := db.PutOrder(t.Context(), shopOrder("SHOP-5")); err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range order {
				push(t, db, ps[i])
			}
			if !orderFirst {
				if _, err := db.PutOrder(t.Context(), shopOrder("SHOP-5")); err != nil {
					t.Fatal(err)
				}
			}
			r, err := db.Reservation(t.Context(), "SHOP-5")
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s captured %s refunded %s [", r.State(), r.CapturedAmount.StringFixed(2), r.RefundedAmount.StringFixed(2))
			for i, l := range r.Lines {
				if i > 0 {
					got += "; "
				}
				got += fmt.Sprintf("%s c%d x%d", l.ArticleNumber, l.Captured, l.Cancelled)
			}
			got += "]"
			if got != want {
				t.Errorf("pushes in order %v, order first %v:\n got %s\nwant %s", order, orderFirst, got, want)
			}
			if sums, _ := db.LoadReservationSummaries(t.Context()); len(sums) != 1 {
				t.Errorf("pushes in order %v: %d reservations, want 1", order, len(sums))
			}
		}
	}
}

// An operator may name a transaction by key or by the merchant's invoice of
// its payment, as long as the invoice names one.
func TestResolveTransaction(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	one := newScenario(t, db, g, "INV-ONE")
	one.reserve([]api.Article{{Number: "A", Title: "A", Price: dec("10"), Quantity: 2, Vat: dec("21")}}, true)
	capKey := one.capture("10", true, api.CaptureLine{ArticleNumber: "A", Quantity: 1})
	two := newScenario(t, db, g, "INV-TWO")
	two.reserve([]api.Article{{Number: "A", Title: "A", Price: dec("10"), Quantity: 2, Vat: dec("21")}}, true)
	k1 := two.capture("10", true, api.CaptureLine{ArticleNumber: "A", Quantity: 1})
	two.capture("10", true)
	gcKey := g.key()
	push(t, db, txPush(gcKey, "GC-7", "customgiftcard", api.TypeGiftCardPay, dec("5"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil))
	// An invoice that holds GC-7 is not GC-7 (the search finds it; the
	// exact match keeps it out).
	push(t, db, txPush(g.key(), "GC-77", "customgiftcard", api.TypeGiftCardPay, dec("6"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil))
	for _, tc := range []struct{ ref, want, err string }{
		{capKey, capKey, ""},
		{"INV-ONE", capKey, ""},
		{k1, k1, ""},
		{"INV-TWO", "", "the invoice has 2 payments"},
		{"GC-7", gcKey, ""},
		{"NOPE", "", "not found (no transaction has it as key"},
	} {
		got, err := db.ResolveTransaction(t.Context(), tc.ref)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.ref, err, tc.err)
		case tc.err == "" && (err != nil || got.Key != tc.want):
			t.Errorf("%s: %v %v, want %s", tc.ref, got, err, tc.want)
		}
	}
	if txs, err := db.TransactionsFor(t.Context(), "INV-TWO"); err != nil || len(txs) != 2 {
		t.Fatalf("transactions of an invoice: %d %v", len(txs), err)
	}
}

// An invoice that names several reservations resolves to the one still
// open, and is refused (naming them) when that does not decide.
func TestReservationByAmbiguousInvoice(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	var ss []*scenario
	for i := 0; i < 2; i++ {
		s := newScenario(t, db, g, "T-SAME")
		s.reserve([]api.Article{{Number: "A", Title: "A", Price: dec("10"), Quantity: 1, Vat: dec("21")}}, true)
		ss = append(ss, s)
	}
	_, err := db.Reservation(t.Context(), "T-SAME")
	if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), ss[0].resNum) || !strings.Contains(err.Error(), ss[1].resNum) {
		t.Fatalf("two open reservations under one invoice: %v", err)
	}
	ss[0].cancel(true)
	r, err := db.Reservation(t.Context(), "T-SAME")
	if err != nil || r.Key != ss[1].resKey {
		t.Fatalf("one open reservation left: %v %v", r, err)
	}
	if r, err := db.Reservation(t.Context(), ss[0].resNum); err != nil || r.Key != ss[0].resKey {
		t.Fatalf("by number: %v %v", r, err)
	}
}
