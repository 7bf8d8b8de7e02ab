package report

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// Each figure lands on the day (or service) it happened, in its currency;
// what is outside the days, failed or still awaiting the customer counts
// nowhere; the totals add the rows.
func TestBuild(t *testing.T) {
	loc := time.UTC
	day := func(d int) time.Time { return time.Date(2026, 11, d, 10, 0, 0, 0, loc) }
	d := decimal.RequireFromString
	ok := func(at time.Time) store.Status { return store.Status{Code: api.StatusSuccess, Time: at} }
	in := Input{
		Summaries: []store.Summary{
			{Key: "R1", State: store.StateReserved, Amount: d("100"), Currency: "EUR", Created: day(24)},
			{Key: "R2", State: store.StateAwaitingCustomer, Amount: d("50"), Currency: "EUR", Created: day(24)},
			{Key: "R3", State: store.StateReserved, Amount: d("70"), Currency: "EUR", Created: day(10)}, // before the days
			{Key: "R4", State: store.StateReserved, Amount: d("300"), Currency: "SEK", Created: day(25)},
		},
		Transactions: []*store.Transaction{
			{Key: "C1", Kind: store.KindCapture, ServiceCode: "deferredkp", Amount: d("60"), Currency: "EUR", Status: ok(day(24)), OpID: 1},
			{Key: "C2", Kind: store.KindCapture, ServiceCode: "deferredkp", Amount: d("40"), Currency: "EUR", Status: store.Status{Code: 490}},
			{Key: "F1", Kind: store.KindRefund, ServiceCode: "deferredkp", Amount: d("15"), Currency: "EUR", Status: ok(day(25)), OpID: 2},
			{Key: "G1", Kind: store.KindGiftCardPay, ServiceCode: "voucherb", Amount: d("10"), Currency: "EUR", Status: ok(day(25))},
		},
		Ops:     map[uint64]*store.PendingOp{1: {ID: 1, Operator: "anna"}, 2: {ID: 2, Operator: "bram"}},
		Reasons: map[uint64]string{2: "return"},
	}
	rep := Build(in, ByDay, day(24), day(25), loc)
	want := map[[2]string]Figures{
		{"2026-11-24", "EUR"}: {Reserved: d("100"), Captured: d("60"), Captures: 1},
		{"2026-11-25", "EUR"}: {Refunded: d("15"), Refunds: 1, GiftCardPaid: d("10")},
		{"2026-11-25", "SEK"}: {Reserved: d("300")},
	}
	if len(rep.Rows) != len(want) {
		t.Fatalf("rows %+v", rep.Rows)
	}
	for _, r := range rep.Rows {
		w, ok := want[[2]string{r.Group, r.Currency}]
		if !ok || !r.Reserved.Equal(w.Reserved) || !r.Captured.Equal(w.Captured) || !r.Refunded.Equal(w.Refunded) ||
			!r.GiftCardPaid.Equal(w.GiftCardPaid) || r.Captures != w.Captures || r.Refunds != w.Refunds {
			t.Errorf("row %+v, want %+v", r, w)
		}
	}
	if len(rep.Totals) != 2 || rep.Totals[0].Currency != "EUR" || !rep.Totals[0].Captured.Equal(d("60")) ||
		!rep.Totals[0].RefundedBy["return"].Equal(d("15")) {
		t.Fatalf("totals %+v", rep.Totals)
	}
	byOp := Build(in, ByOperator, day(24), day(25), loc)
	ops := map[string]bool{}
	for _, r := range byOp.Rows {
		ops[r.Group] = true
	}
	if !ops["anna"] || !ops["bram"] || !ops["-"] {
		t.Fatalf("by operator: %+v", byOp.Rows)
	}
	bySvc := Build(in, ByService, day(24), day(25), loc)
	for _, r := range bySvc.Rows {
		if r.Group == "voucherb" && !r.GiftCardPaid.Equal(d("10")) {
			t.Fatalf("by service: %+v", r)
		}
	}
}

// The payouts reconcile recorded count on their day, the newest record of
// a payout reference replacing older ones; by operator or service they
// have a group of their own ("-"); days outside the report do not count.
func TestSettlements(t *testing.T) {
	d := decimal.RequireFromString
	e := func(id uint64, action, ref, cur, day, amount string) store.AuditEntry {
		return store.AuditEntry{ID: id, Action: action, Target: ref, Currency: cur, Result: day, Amount: d(amount)}
	}
	audit := []store.AuditEntry{ // newest first, as the store reads them
		e(9, AuditSettlementFee, "PO-1", "EUR", "2026-11-24", "0.75"),
		e(8, AuditSettlement, "PO-1", "EUR", "2026-11-24", "300.00"),
		e(7, "reconcile", "a.csv", "", "matched 3", "0"),
		e(6, AuditSettlement, "PO-2", "EUR", "2026-11-25", "50.00"),
		e(5, AuditSettlementFee, "PO-2", "EUR", "2026-11-25", "0.25"),
		e(4, AuditSettlementFee, "PO-1", "EUR", "2026-11-24", "0.50"),
		e(3, AuditSettlement, "PO-1", "EUR", "2026-11-24", "200.00"),
		e(2, AuditSettlement, "PO-0", "EUR", "2026-11-01", "99.00"),
		e(1, AuditSettlement, "PO-1", "SEK", "2026-11-24", "1000.00"),
	}
	got := Settlements(audit)
	want := []Settlement{
		{Reference: "PO-0", Currency: "EUR", Day: "2026-11-01", Gross: d("99.00")},
		{Reference: "PO-1", Currency: "EUR", Day: "2026-11-24", Gross: d("300.00"), Fees: d("0.75")},
		{Reference: "PO-1", Currency: "SEK", Day: "2026-11-24", Gross: d("1000.00")},
		{Reference: "PO-2", Currency: "EUR", Day: "2026-11-25", Gross: d("50.00"), Fees: d("0.25")},
	}
	if len(got) != len(want) {
		t.Fatalf("Settlements: %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Reference != w.Reference || g.Currency != w.Currency || g.Day != w.Day || !g.Gross.Equal(w.Gross) || !g.Fees.Equal(w.Fees) {
			t.Errorf("settlement %d: %+v, want %+v", i, g, w)
		}
	}
	from, to := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		by    By
		group string
		want  map[string][2]string // currency → settled, fees
	}{
		{ByDay, "2026-11-24", map[string][2]string{"EUR": {"300", "0.75"}, "SEK": {"1000", "0"}}},
		{ByDay, "2026-11-25", map[string][2]string{"EUR": {"50", "0.25"}}},
		{ByOperator, "-", map[string][2]string{"EUR": {"350", "1"}, "SEK": {"1000", "0"}}},
	} {
		rep := Build(Input{Settlements: got}, tc.by, from, to, time.UTC)
		seen := 0
		for _, r := range rep.Rows {
			if r.Group != tc.group {
				continue
			}
			w, ok := tc.want[r.Currency]
			if !ok || !r.Settled.Equal(d(w[0])) || !r.Fees.Equal(d(w[1])) {
				t.Errorf("by %s, %s %s: settled %s fees %s, want %v", tc.by, tc.group, r.Currency, r.Settled, r.Fees, w)
			}
			seen++
		}
		if seen != len(tc.want) {
			t.Errorf("by %s: %d rows for %s, want %d: %+v", tc.by, seen, tc.group, len(tc.want), rep.Rows)
		}
	}
}
