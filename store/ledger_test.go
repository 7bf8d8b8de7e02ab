package store

import (
	"errors"
	"testing"
	"time"

	"paydesk/api"
)

func articles() []api.Article {
	return []api.Article{
		{Number: "A", Title: "Shirt", Type: api.ArticleTypeGeneral, Price: dec("19.99"), Quantity: 3, Vat: dec("21")},
		{Number: "B", Title: "Shoes", Type: api.ArticleTypeGeneral, Price: dec("89.95"), Quantity: 1, Vat: dec("21")},
		{Number: "D", Title: "Discount", Type: api.ArticleTypeGeneral, Price: dec("-5.00"), Quantity: 1, Vat: dec("21")},
		{Number: "S", Title: "Shipping", Type: api.ArticleTypeShipment, Price: dec("4.95"), Quantity: 1, Vat: dec("21")},
	}
}

// lineWant is captured/cancelled/refunded/remaining of one article.
type lineWant struct{ reserved, captured, cancelled, refunded, remaining int }

func TestLedger(t *testing.T) {
	cl := func(n string, q int) api.CaptureLine { return api.CaptureLine{ArticleNumber: n, Quantity: q} }
	tests := []struct {
		name      string
		run       func(s *scenario)
		state     State
		amount    string
		captured  string
		remaining string
		refunded  string
		lines     map[string]lineWant
	}{
		{
			name:  "reserved: 3 × 19.99 and a −5.00 discount add up exactly",
			run:   func(s *scenario) { s.reserve(articles(), true) },
			state: StateReserved, amount: "149.87", captured: "0", remaining: "149.87", refunded: "0",
			lines: map[string]lineWant{"A": {3, 0, 0, 0, 3}, "D": {1, 0, 0, 0, 1}},
		},
		{
			name:  "awaiting the customer until the Reserve push",
			run:   func(s *scenario) { s.reserve(articles(), false) },
			state: StateAwaitingCustomer, amount: "149.87", captured: "0", remaining: "149.87", refunded: "0",
		},
		{
			name: "two partial shipments, then the remainder cancelled",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				s.capture("39.98", true, cl("A", 2))
				s.capture("84.95", true, cl("B", 1), cl("D", 1))
				s.cancel(true)
			},
			state: StateClosed, amount: "149.87", captured: "124.93", remaining: "0", refunded: "0",
			lines: map[string]lineWant{"A": {3, 2, 1, 0, 0}, "B": {1, 1, 0, 0, 0}, "D": {1, 1, 0, 0, 0}, "S": {1, 0, 1, 0, 0}},
		},
		{
			name: "partial shipment leaves the reservation partly captured",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				s.capture("19.99", true, cl("A", 1))
			},
			state: StatePartlyCaptured, amount: "149.87", captured: "19.99", remaining: "129.88", refunded: "0",
			lines: map[string]lineWant{"A": {3, 1, 0, 0, 2}, "B": {1, 0, 0, 0, 1}},
		},
		{
			name: "partial shipment, then everything remaining",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				s.capture("19.99", true, cl("A", 1))
				s.capture("129.88", true)
			},
			state: StateCaptured, amount: "149.87", captured: "149.87", remaining: "0", refunded: "0",
			lines: map[string]lineWant{"A": {3, 3, 0, 0, 0}, "S": {1, 1, 0, 0, 0}},
		},
		{
			name: "refunds against a capture: partial by amount, then the rest",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				k := s.capture("59.97", true, cl("A", 3))
				s.refund(k, "19.99", true)
				s.refund(k, "39.98", true)
			},
			state: StatePartlyCaptured, amount: "149.87", captured: "59.97", remaining: "89.90", refunded: "59.97",
			lines: map[string]lineWant{"A": {3, 3, 0, 3, 0}, "B": {1, 0, 0, 0, 1}},
		},
		{
			name: "a partial refund is kept as an amount, not spread over lines",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				k := s.capture("149.87", true)
				s.refund(k, "10.01", true)
			},
			state: StateCaptured, amount: "149.87", captured: "149.87", remaining: "0", refunded: "10.01",
			lines: map[string]lineWant{"A": {3, 3, 0, 0, 0}},
		},
		{
			name:  "cancel of the whole reservation",
			run:   func(s *scenario) { s.reserve(articles(), true); s.cancel(true) },
			state: StateCancelled, amount: "149.87", captured: "0", remaining: "0", refunded: "0",
			lines: map[string]lineWant{"A": {3, 0, 3, 0, 0}, "D": {1, 0, 1, 0, 0}},
		},
		{
			name: "UpdateReservation lowers a quantity and drops a line",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				as := articles()
				as[0].Quantity = 2
				s.update([]api.Article{as[0], as[2], as[3]}, true)
			},
			state: StateReserved, amount: "39.93", captured: "0", remaining: "39.93", refunded: "0",
			lines: map[string]lineWant{"A": {2, 0, 0, 0, 2}, "S": {1, 0, 0, 0, 1}},
		},
		{
			name: "UpdateReservation after a partial shipment lowers a price",
			run: func(s *scenario) {
				s.reserve(articles(), true)
				s.capture("19.99", true, cl("A", 1))
				as := articles()
				as[0].Quantity = 2
				as[1].Price = dec("79.95")
				s.update(as, true)
				s.capture("99.89", true)
			},
			state: StateCaptured, amount: "119.88", captured: "119.88", remaining: "0", refunded: "0",
			lines: map[string]lineWant{"A": {2, 2, 0, 0, 0}, "B": {1, 1, 0, 0, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			s := newScenario(t, db, &gw{clock: t0}, "ORDER-1")
			tc.run(s)
			r := s.reservation()
			if got := r.State(); got != tc.state {
				t.Errorf("state = %s, want %s", got, tc.state)
			}
			for _, c := range []struct{ what, got, want string }{
				{"amount", r.Amount().String(), tc.amount},
				{"captured", r.CapturedAmount.String(), tc.captured},
				{"remaining", r.RemainingAmount().String(), tc.remaining},
				{"refunded", r.RefundedAmount.String(), tc.refunded},
			} {
				if !dec(c.got).Equal(dec(c.want)) {
					t.Errorf("%s = %s, want %s", c.what, c.got, c.want)
				}
			}
			for num, w := range tc.lines {
				var l *Line
				for i := range r.Lines {
					if r.Lines[i].ArticleNumber == num {
						l = &r.Lines[i]
					}
				}
				if l == nil {
					t.Errorf("line %s missing", num)
					continue
				}
				got := lineWant{l.Reserved, l.Captured, l.Cancelled, l.Refunded, l.Remaining()}
				if got != w {
					t.Errorf("line %s = %+v, want %+v", num, got, w)
				}
			}
			// The list row agrees with the record.
			sums, err := db.LoadReservationSummaries(t.Context())
			if err != nil || len(sums) != 1 {
				t.Fatalf("summaries = %d, %v", len(sums), err)
			}
			sm := sums[0]
			if sm.State != tc.state || !sm.Amount.Equal(dec(tc.amount)) || !sm.Remaining.Equal(dec(tc.remaining)) || !sm.Captured.Equal(dec(tc.captured)) {
				t.Errorf("summary %+v disagrees", sm)
			}
		})
	}
}

func TestCaptureAmountChecksRemaining(t *testing.T) {
	db := openTest(t)
	s := newScenario(t, db, &gw{clock: t0}, "ORDER-2")
	s.reserve(articles(), true)
	s.capture("39.98", true, api.CaptureLine{ArticleNumber: "A", Quantity: 2})
	r := s.reservation()
	got, err := r.CaptureAmount([]api.CaptureLine{{ArticleNumber: "A", Quantity: 1}, {ArticleNumber: "D", Quantity: 1}})
	if err != nil || !got.Equal(dec("14.99")) {
		t.Errorf("CaptureAmount = %s, %v; want 14.99", got, err)
	}
	if _, err := r.CaptureAmount([]api.CaptureLine{{ArticleNumber: "A", Quantity: 2}}); err == nil {
		t.Error("capturing 2 of the 1 left of A was accepted")
	}
	if _, err := r.CaptureAmount([]api.CaptureLine{{ArticleNumber: "X", Quantity: 1}}); err == nil {
		t.Error("capturing an unknown article was accepted")
	}
	if got, _ := r.CaptureAmount(nil); !got.Equal(dec("109.89")) {
		t.Errorf("full capture amount = %s, want 109.89", got)
	}
	if err := r.CanCancel(); err != nil {
		t.Errorf("CanCancel: %v", err)
	}
	txs, err := db.TransactionsFor(t.Context(), s.resNum)
	if err != nil || len(txs) != 1 {
		t.Fatalf("TransactionsFor = %d, %v", len(txs), err)
	}
	if !txs[0].Refundable().Equal(dec("39.98")) || txs[0].InvoiceNumber == "" {
		t.Errorf("capture %+v: refundable %s", txs[0], txs[0].Refundable())
	}
}

func TestDeclinedReserve(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	s := newScenario(t, db, g, "ORDER-3")
	s.reserve(articles(), false)
	push(t, db, dataPush(s.resKey, s.inv, api.ActionReserve, g.status(api.StatusRejected, "")))
	r := s.reservation()
	if r.State() != StateDeclined {
		t.Errorf("state = %s, want declined", r.State())
	}
	if r.CanCapture() == nil || r.CanCancel() == nil {
		t.Error("a declined reservation offers capture or cancel")
	}
}

func TestDaysLeft(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	created := time.Date(2026, 3, 1, 23, 30, 0, 0, loc)
	for _, tc := range []struct {
		now  time.Time
		want int
	}{
		{created.Add(10 * time.Minute), 14},
		{time.Date(2026, 3, 2, 0, 10, 0, 0, loc), 13},
		{time.Date(2026, 3, 15, 12, 0, 0, 0, loc), 0},
		{time.Date(2026, 3, 17, 12, 0, 0, 0, loc), -2},
	} {
		r := &Reservation{Created: created}
		if got := r.DaysLeft(tc.now); got != tc.want {
			t.Errorf("DaysLeft(%s) = %d, want %d", tc.now, got, tc.want)
		}
	}
}

func TestGiftCardRefundable(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	s := newScenario(t, db, g, "GC-1")
	id := s.begin(api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "GC-1", Amount: dec("25"),
		Card: api.Card{Provider: api.ProviderB, Number: "123", PIN: "9999"}, LastName: "Jansen", Email: "a@b.nl"})
	k := g.key()
	st := g.status(api.StatusSuccess, api.SubCodeProcessed)
	s.respond(id, &api.Response{Key: k, Status: st, Invoice: "GC-1", ServiceCode: "voucherb", Currency: "EUR",
		AmountDebit: api.NewAmount(dec("25")), TransactionType: api.Ptr(api.TypeGiftCardPay), MutationType: 2})
	op, err := db.Op(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if pin, _ := op.Request.Param(api.PVoucherBPIN); pin != masked {
		t.Errorf("stored PIN = %q, want it masked", pin)
	}
	if op.State != OpSettled || op.ResultKey != k {
		t.Errorf("op = %s %s", op.State, op.ResultKey)
	}
	rid := s.begin(api.GiftCardRefund{ServiceCode: "voucherb", Currency: "EUR", Invoice: "GC-1", OriginalTransactionKey: k, Amount: dec("10")})
	rk := g.key()
	s.respond(rid, &api.Response{Key: rk, Status: g.status(api.StatusSuccess, ""), ServiceCode: "voucherb", Currency: "EUR",
		AmountCredit: api.NewAmount(dec("10")), TransactionType: api.Ptr(api.TypeGiftCardRefund), MutationType: 2,
		RelatedTransactions: []api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: k}}})
	pay, err := db.Transaction(t.Context(), k)
	if err != nil {
		t.Fatal(err)
	}
	orig := pay.GiftCardOriginal(true)
	if !orig.Refunded.Equal(dec("10")) || orig.Provider != api.ProviderB || !orig.HasContact || !pay.Refundable().Equal(dec("15")) {
		t.Errorf("original = %+v, refundable %s", orig, pay.Refundable())
	}
	if _, err := db.Transaction(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing transaction: %v", err)
	}
}
