package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// The attention count the tab bar shows on every frame is counted without
// building the rows and kept for a second, but it always equals the rows
// the tab shows: after every change of its inputs and as the clock passes
// a window's end, an order's wait or a rejected push's day.
func TestAttentionCountFollowsRowsAndClock(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ctx := NewContext(func() time.Time { return now })
	a := NewAttention(ctx)
	var sums []store.Summary
	for i := range 40 {
		created := now.AddDate(0, 0, -9-i%8).Add(-time.Duration(i) * time.Minute) // 14-day window: 5 to -2 days left
		sums = append(sums, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: created})
	}
	sums = append(sums,
		store.Summary{Key: store.PlaceholderPrefix + "SHOP-1", Invoice: "SHOP-1", State: store.StateAwaitingCustomer, Created: now.Add(-29*time.Minute - 30*time.Second)},
		store.Summary{Key: "K-NOORDER", Invoice: "SHOP-2", State: store.StateReserved, LinesUnknown: true, Created: now})
	pushes := []*PushRow{
		{Push: &store.PushRecord{ID: 1, Rejected: true, Key: "BAD1", Reason: "signature", ReceivedAt: now.Add(-23*time.Hour - 59*time.Minute - 30*time.Second)}},
		{Push: &store.PushRecord{ID: 2, Rejected: true, Key: "BAD2", Reason: "signature", ReceivedAt: now.Add(-time.Hour)}},
		// What sync learned stays a week; what it found known is no row.
		{Push: &store.PushRecord{ID: 3, RemoteAddr: store.ProvenanceSync, Applied: true, Envelope: api.EnvelopeTransaction, Kind: api.TypeDeferredPay,
			Invoice: "SHOP-9", ReceivedAt: now.Add(-7*24*time.Hour + 30*time.Second)}},
		{Push: &store.PushRecord{ID: 4, RemoteAddr: store.ProvenanceSync, Applied: false, Kind: api.TypeDeferredPay, ReceivedAt: now}},
	}
	pay := &store.Transaction{Key: "GC1", Kind: store.KindGiftCardPay, Invoice: "GC-1", Currency: "EUR", Created: now.Add(-time.Hour),
		Amount: decimal.NewFromInt(30), RemainderAmount: decimal.NewFromInt(20), Status: store.Status{Code: api.StatusSuccess}}
	steps := []struct {
		name string
		msg  any
		tick time.Duration
	}{
		{name: "empty"},
		{name: "reservations", msg: ReservationRowsMsg{Full: true, Rows: NewReservationRows(sums)}},
		{name: "pushes", msg: PushRowsMsg{Full: true, Rows: pushes}},
		{name: "a gift card payment", msg: TransactionRowsMsg{Full: true, Rows: []*TransactionRow{{Tx: pay}}}},
		{name: "an operation", msg: AttentionOpsMsg{Ops: []*store.PendingOp{{ID: 7, Target: "K01"}}}},
		{name: "extra rows", msg: AttentionExtraMsg{Rows: []AttentionRow{{Kind: AttnOrder, Subject: "X"}}}},
		{name: "a reservation captured", msg: ReservationRowsMsg{Rows: NewReservationRows([]store.Summary{{Key: "K07", State: store.StateCaptured, Created: now}})}},
		{name: "half a second", tick: 500 * time.Millisecond},
		{name: "the order's wait and the push's day are over", tick: time.Second},
		{name: "the learned capture's week is over", tick: 30 * time.Second},
		{name: "a day", tick: 24 * time.Hour},
	}
	prev := -1
	for _, st := range steps {
		if st.msg != nil {
			a.Update(st.msg)
		}
		now = now.Add(st.tick)
		got, want := a.Count(), len(a.build())
		if got != want {
			t.Errorf("%s: count %d, the tab shows %d rows", st.name, got, want)
		}
		if st.msg != nil && st.name != "empty" && got == prev {
			t.Errorf("%s: count stayed %d", st.name, got)
		}
		prev = got
	}
}

// A capture sync learned from the gateway is a row that says what
// happened elsewhere; a push sync found known already is none.
func TestAttentionShowsWhatSyncLearned(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	a := NewAttention(NewContext(func() time.Time { return now }))
	a.Update(PushRowsMsg{Full: true, Rows: []*PushRow{
		{Push: &store.PushRecord{ID: 1, RemoteAddr: store.ProvenanceSync, Applied: true, Envelope: api.EnvelopeTransaction,
			Kind: api.TypeDeferredPay, Invoice: "SHOP-9", Amount: decimal.RequireFromString("12.5"), HasAmount: true, Currency: "EUR",
			Status: store.Status{Code: api.StatusSuccess, SubCode: "S001"}, ReceivedAt: now.Add(-time.Hour)}},
		{Push: &store.PushRecord{ID: 2, RemoteAddr: "192.0.2.1:4000", Applied: true, Envelope: api.EnvelopeTransaction,
			Kind: api.TypeDeferredPay, Invoice: "SHOP-8", ReceivedAt: now.Add(-time.Hour)}},
	}})
	rows := a.build()
	if len(rows) != 1 || rows[0].Kind != AttnLearned || rows[0].Subject != "SHOP-9" {
		t.Fatalf("rows %+v, want one learned-by-sync row for SHOP-9", rows)
	}
	if want := "capture 12.50 EUR 190 S001 Success happened at the gateway and no push told paydesk"; !strings.HasPrefix(rows[0].What, want) {
		t.Fatalf("row says %q, want it to start with %q", rows[0].What, want)
	}
}
