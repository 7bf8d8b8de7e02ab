package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store"
)

// TestAttentionCountFloor: when the read of the tab's reservations was
// capped, the count says so ("3+") as long as what it left out needs a
// person: a reservation as near its window's end as the rows counted, or
// an order mismatch. A reservation left out that is not yet near its
// window's end leaves the count exact, until the clock brings it near.
func TestAttentionCountFloor(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var sums []store.Summary
	for i := range 3 {
		sums = append(sums, store.Summary{Key: fmt.Sprintf("K%02d", i), ReservationNumber: fmt.Sprint("R", i), State: store.StateReserved,
			Remaining: decimal.NewFromInt(10), Currency: "EUR", Created: now.AddDate(0, 0, -12)})
	}
	for _, tc := range []struct {
		name   string
		beyond AttentionBeyond
		later  time.Duration // the clock moves on this much
		want   string
	}{
		{"nothing left out", AttentionBeyond{}, 0, "3"},
		{"a reservation past its window left out", AttentionBeyond{Created: now.AddDate(0, 0, -12)}, 0, "3+"},
		{"order mismatches left out", AttentionBeyond{Orders: true}, 0, "3+"},
		{"a reservation left out not yet near its window's end", AttentionBeyond{Created: now.AddDate(0, 0, -10)}, 0, "3"},
		{"the same a day later", AttentionBeyond{Created: now.AddDate(0, 0, -10)}, 24 * time.Hour, "3+"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := now
			a := NewAttention(NewContext(func() time.Time { return at }))
			a.SetSize(120, 20)
			a.Update(AttentionReservationsMsg{Rows: NewReservationRows(sums), Beyond: tc.beyond})
			at = now.Add(tc.later)
			if got := a.CountText(); got != tc.want {
				t.Errorf("CountText() = %q, want %q", got, tc.want)
			}
			if view := a.View(); !strings.Contains(view, tc.want+" open") {
				t.Errorf("the tab does not say %q:\n%s", tc.want+" open", view)
			}
		})
	}
}
