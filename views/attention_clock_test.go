package views

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// The rows the attention tab keeps between changes are the rows it would
// build afresh at every instant, as the clock passes each edge it
// decides alone: a window's day at midnight, an order's wait and the
// unit of its age, a rejected push's day, a learned push's week, a
// request's expiry. A tab that keeps its rows until the clock changes one
// never shows a stale one.
func TestAttentionRowsFollowTheClock(t *testing.T) {
	start := time.Date(2026, 11, 23, 23, 59, 57, 0, time.UTC) // midnight in 3 s
	var windows []store.Summary
	for i := range 12 {
		windows = append(windows, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: start.AddDate(0, 0, -9-i%7).Add(-time.Duration(i) * time.Minute)})
	}
	var orders []store.Summary
	for i, ago := range []time.Duration{29*time.Minute + 58*time.Second, 59*time.Minute + 59*time.Second, 47*time.Hour + 59*time.Minute + 59*time.Second,
		14*24*time.Hour - time.Second, 365*24*time.Hour - 3*time.Second} {
		orders = append(orders, store.Summary{Key: fmt.Sprintf("%sSHOP-%d", store.PlaceholderPrefix, i), Invoice: fmt.Sprintf("SHOP-%d", i),
			State: store.StateAwaitingCustomer, Amount: decimal.NewFromInt(5), Currency: "EUR", Created: start.Add(-ago)})
	}
	seconds := []time.Duration{0, 500 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second, time.Second, time.Second}
	tests := []struct {
		name  string
		in    []any
		steps []time.Duration
	}{
		{"windows at midnight", []any{ReservationRowsMsg{Full: true, Rows: NewReservationRows(windows)}},
			append(seconds, time.Hour, 23*time.Hour, 24*time.Hour, 6*24*time.Hour)},
		{"orders' waits and ages", []any{ReservationRowsMsg{Full: true, Rows: NewReservationRows(orders)}},
			append(seconds, 17*time.Second, 58*time.Second, time.Minute, 59*time.Minute)},
		{"a rejected push's day", []any{PushRowsMsg{Full: true, Rows: []*PushRow{{Push: &store.PushRecord{ID: 1, Rejected: true, Key: "BAD1",
			Reason: "signature", ReceivedAt: start.Add(-24*time.Hour + 2*time.Second)}}}}}, seconds},
		{"a learned push's week", []any{PushRowsMsg{Full: true, Rows: []*PushRow{{Push: &store.PushRecord{ID: 2, RemoteAddr: store.ProvenanceSync,
			Applied: true, Kind: "Capture", Invoice: "SHOP-9", ReceivedAt: start.Add(-learnedDays*24*time.Hour + 3*time.Second)}}}}}, seconds},
		{"a request's expiry", []any{ApprovalsMsg{List: []*store.Approval{
			{ID: 1, State: store.ApprovalPending, Kind: "refund", Amount: decimal.NewFromInt(150), Currency: "EUR", Requester: "alice", Expires: start.Add(4 * time.Second)},
			{ID: 2, State: store.ApprovalPending, Kind: "refund", Amount: decimal.NewFromInt(200), Currency: "EUR", Requester: "alice", Expires: start.Add(48 * time.Hour)},
		}}}, seconds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start
			kept := NewAttention(NewContext(func() time.Time { return now }))
			for _, m := range tt.in {
				kept.Update(m)
			}
			for _, step := range tt.steps {
				now = now.Add(step)
				// The fresh tab takes its inputs when the kept one took them
				// (a reservation's row is kept from a day before its warning).
				at := start
				fresh := NewAttention(NewContext(func() time.Time { return at }))
				for _, m := range tt.in {
					fresh.Update(m)
				}
				at = now
				if got, want := kept.build(), fresh.build(); !reflect.DeepEqual(got, want) {
					t.Fatalf("at +%s the kept rows differ from the rows built afresh:\nkept  %+v\nfresh %+v", now.Sub(start), got, want)
				}
				if got, want := kept.Count(), len(fresh.build()); got != want {
					t.Fatalf("at +%s the count is %d, the rows %d", now.Sub(start), got, want)
				}
			}
		})
	}
}

// While neither its inputs nor what the clock decides change, the tab
// keeps its rows: the console's redraw each second (for the ages) does
// not build them again. A change builds them at once.
func TestAttentionRowsKeptWhileNothingChanges(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	a := NewAttention(NewContext(func() time.Time { return now }))
	var sums []store.Summary
	for i := range 40 {
		sums = append(sums, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: now.AddDate(0, 0, -11-i%4)})
	}
	a.Update(ReservationRowsMsg{Full: true, Rows: NewReservationRows(sums)})
	first := a.build()
	for s := 1; s <= 120; s++ {
		now = now.Add(time.Second)
		if again := a.build(); len(again) != len(first) || &again[0] != &first[0] {
			t.Fatalf("at +%ds the rows were built again though nothing changed", s)
		}
	}
	a.Update(ReservationRowsMsg{Rows: NewReservationRows([]store.Summary{{Key: "K00", State: store.StateCaptured, Created: now}})})
	if again := a.build(); len(again) != len(first)-1 {
		t.Fatalf("after a capture %d rows, want %d", len(again), len(first)-1)
	}
}

// A change that makes no row of the tab (an accepted push, a gift card
// payment paid in full, a payment, a reservation far from its window's
// end, one on the tab read again as it was, the journal, the requests or
// the deliveries read again as they were) leaves the rows as built; one
// that makes a row builds them again.
func TestAttentionRowsKeptThroughChangesElsewhere(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	a := NewAttention(NewContext(func() time.Time { return now }))
	var sums []store.Summary
	for i := range 20 {
		sums = append(sums, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: now.AddDate(0, 0, -11-i%4)})
	}
	a.Update(ReservationRowsMsg{Full: true, Rows: NewReservationRows(sums)})
	gift := func(key string, rest int64) *TransactionRow {
		return &TransactionRow{Tx: &store.Transaction{Key: key, Kind: store.KindGiftCardPay, Invoice: "GC-" + key, Currency: "EUR", Created: now,
			Amount: decimal.NewFromInt(30), RemainderAmount: decimal.NewFromInt(rest), Status: store.Status{Code: api.StatusSuccess}}}
	}
	elsewhere := []struct {
		name string
		msg  any
	}{
		{"an accepted push", PushRowsMsg{Rows: []*PushRow{{Push: &store.PushRecord{ID: 1, Applied: true, Key: "A1", ReceivedAt: now}}}}},
		{"a gift card payment paid in full", TransactionRowsMsg{Rows: []*TransactionRow{gift("G1", 0)}}},
		{"a capture", TransactionRowsMsg{Rows: []*TransactionRow{{Tx: &store.Transaction{Key: "P1", Kind: store.KindCapture, Created: now}}}}},
		{"a reservation far from its window's end", ReservationRowsMsg{Rows: NewReservationRows([]store.Summary{{Key: "NEW", State: store.StateReserved, Created: now}})}},
		{"a reservation on the tab read again as it was", ReservationRowsMsg{Rows: NewReservationRows([]store.Summary{sums[0], sums[1]})}},
		{"the journal read again as it was", AttentionOpsMsg{}},
		{"the requests read again as they were", ApprovalsMsg{}},
		{"the deliveries read again as they were", DeliveriesMsg{}},
	}
	rows := a.build()
	for _, e := range elsewhere {
		a.Update(e.msg)
		if again := a.build(); len(again) != len(rows) || &again[0] != &rows[0] {
			t.Fatalf("after %s the rows were built again", e.name)
		}
		if got := a.Count(); got != len(rows) {
			t.Fatalf("after %s the count is %d, want %d", e.name, got, len(rows))
		}
	}
	here := []struct {
		name string
		msg  any
	}{
		{"a rejected push", PushRowsMsg{Rows: []*PushRow{{Push: &store.PushRecord{ID: 2, Rejected: true, Key: "BAD", ReceivedAt: now}}}}},
		{"a gift card payment with a remainder", TransactionRowsMsg{Rows: []*TransactionRow{gift("G2", 20)}}},
		{"a reservation at its window's end", ReservationRowsMsg{Rows: NewReservationRows([]store.Summary{{Key: "OLD", ReservationNumber: "R-OLD",
			State: store.StateReserved, Remaining: decimal.NewFromInt(5), Currency: "EUR", Created: now.AddDate(0, 0, -13)}})}},
		{"a reservation captured", ReservationRowsMsg{Rows: NewReservationRows([]store.Summary{{Key: "K00", State: store.StateCaptured, Created: now}})}},
		{"an unknown outcome in the journal", AttentionOpsMsg{Ops: []*store.PendingOp{{ID: 7, State: store.OpOutcomeUnknown, Target: "K05", Created: now}}}},
	}
	want := len(rows)
	for i, h := range here {
		a.Update(h.msg)
		want += []int{1, 1, 1, -1, 1}[i]
		if got := len(a.build()); got != want {
			t.Fatalf("after %s %d rows, want %d", h.name, got, want)
		}
		if got := a.Count(); got != want {
			t.Fatalf("after %s the count is %d, want %d", h.name, got, want)
		}
	}
}

// Gift card payments regrouped as they come (a reload brings only the
// changed ones): a group's rest shows until a later payment pays it, a
// payment moved to another group leaves the first, and the rows are
// those of a tab given every payment at once.
func TestAttentionRemaindersAsPaymentsCome(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	pay := func(key, group string, min int, rest int64) *TransactionRow {
		return &TransactionRow{Tx: &store.Transaction{Key: key, Group: group, Kind: store.KindGiftCardPay, Invoice: "GC-" + key, Currency: "EUR",
			Created: now.Add(time.Duration(min) * time.Minute), Amount: decimal.NewFromInt(10), RemainderAmount: decimal.NewFromInt(rest),
			Status: store.Status{Code: api.StatusSuccess}}}
	}
	steps := []struct {
		name string
		rows []*TransactionRow
		want int // remainder rows
	}{
		{"a first part", []*TransactionRow{pay("A1", "A", 0, 20)}, 1},
		{"another group's first part", []*TransactionRow{pay("B1", "B", 1, 5)}, 2},
		{"A paid to the end", []*TransactionRow{pay("A2", "A", 2, 0)}, 1},
		{"a payment alone, paid in full", []*TransactionRow{pay("C1", "", 3, 0)}, 1},
		{"B1 moved to group A (its rest no longer B's)", []*TransactionRow{pay("B1", "A", 1, 5)}, 0},
	}
	a := NewAttention(NewContext(func() time.Time { return now }))
	var all []*TransactionRow
	for _, st := range steps {
		a.Update(TransactionRowsMsg{Rows: st.rows})
		all = append(all, st.rows...)
		if got := len(a.remainderRows()); got != st.want {
			t.Fatalf("%s: %d remainder rows, want %d: %+v", st.name, got, st.want, a.remainderRows())
		}
		fresh := NewAttention(NewContext(func() time.Time { return now }))
		byKey := map[string]*TransactionRow{}
		for _, r := range all {
			byKey[r.Tx.Key] = r
		}
		var latest []*TransactionRow
		for _, r := range byKey {
			latest = append(latest, r)
		}
		fresh.Update(TransactionRowsMsg{Full: true, Rows: latest})
		if got, want := a.build(), fresh.build(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: rows %+v; a tab given every payment at once shows %+v", st.name, got, want)
		}
	}
}
