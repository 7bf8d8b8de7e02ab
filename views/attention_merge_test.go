package views

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// TestAttentionRemaindersMergedIn: a stream of gift card payments with a
// rest to pay changes the remainders alone; the tab merges them into the
// rows it built (not built again: every console over SSH built all its
// rows at every reload), and the rows are those of a tab built afresh
// from the same inputs, in the same order, ties included.
func TestAttentionRemaindersMergedIn(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ctx := func() *Context { return NewContext(func() time.Time { return now }) }
	var sums []store.Summary
	for i := range 30 {
		sums = append(sums, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: now.AddDate(0, 0, -11-i%4).Add(-time.Duration(i) * time.Minute)})
	}
	gift := func(i int, rest int64) *TransactionRow {
		return &TransactionRow{Tx: &store.Transaction{Key: fmt.Sprintf("G%03d", i), Kind: store.KindGiftCardPay, Invoice: fmt.Sprintf("GC-%d", i%7),
			Currency: "EUR", Created: now.Add(-time.Duration(i%5) * time.Hour), Amount: decimal.NewFromInt(30),
			RemainderAmount: decimal.NewFromInt(rest), Status: store.Status{Code: api.StatusSuccess}}}
	}
	// A row from elsewhere of a remainder's kind, time and subject: it
	// ties with the remainder of GC-0 and goes after it.
	extra := AttentionExtraMsg{Rows: []AttentionRow{{Kind: AttnRemainder, When: now, Subject: "GC-0", What: "from elsewhere"}}}
	inputs := []any{ReservationRowsMsg{Full: true, Rows: NewReservationRows(sums)}, extra}
	kept := NewAttention(ctx())
	for _, m := range inputs {
		kept.Update(m)
	}
	kept.build()
	base := kept.base
	for i := range 40 {
		m := TransactionRowsMsg{Rows: []*TransactionRow{gift(i, int64(i%3)*5)}}
		inputs = append(inputs, m)
		kept.Update(m)
		got := kept.build()
		if &kept.base[0] != &base[0] {
			t.Fatalf("after gift card payment %d the rows were built again", i)
		}
		fresh := NewAttention(ctx())
		for _, m := range inputs {
			fresh.Update(m)
		}
		if want := fresh.build(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after gift card payment %d the rows differ from those built afresh:\ngot  %+v\nwant %+v", i, got, want)
		}
		// One stable sort of the rows in the order they are made: the
		// remainders before the rows from elsewhere.
		var others, elsewhere []AttentionRow
		for _, r := range fresh.base {
			if r.What == "from elsewhere" {
				elsewhere = append(elsewhere, r)
			} else {
				others = append(others, r)
			}
		}
		want := append(append(others, fresh.remainderRows()...), elsewhere...)
		slices.SortStableFunc(want, compareAttentionRows)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after gift card payment %d the rows are not in the order of one sort:\ngot  %+v\nwant %+v", i, got, want)
		}
		if kept.Count() != len(got) {
			t.Fatalf("after gift card payment %d the count is %d, the rows %d", i, kept.Count(), len(got))
		}
	}
}
