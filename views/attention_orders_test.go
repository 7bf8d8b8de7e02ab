package views

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store"
)

// Orders and pushes that have not met show on the attention tab: an order
// waiting for its Reserve push past the wait, and a reservation that can be
// captured but whose order never came.
func TestAttentionOrderRows(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		s    store.Summary
		want string // "" when no row
	}{
		{"order waiting an hour", store.Summary{Key: store.PlaceholderPrefix + "SHOP-1", Invoice: "SHOP-1", State: store.StateAwaitingCustomer,
			Amount: decimal.RequireFromString("54.90"), Currency: "EUR", Customer: "Jürgen Müller", Created: now.Add(-time.Hour)},
			"order of 54.90 EUR arrived 1h ago, its Reserve push has not"},
		{"order just arrived", store.Summary{Key: store.PlaceholderPrefix + "SHOP-2", Invoice: "SHOP-2", State: store.StateAwaitingCustomer, Created: now.Add(-time.Minute)}, ""},
		{"push without order", store.Summary{Key: "K3", ReservationNumber: "R3", Invoice: "SHOP-3", State: store.StateReserved, LinesUnknown: true, Created: now.Add(-2 * time.Hour)},
			"its order never reached paydesk"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !orderMismatch(tc.s) {
				t.Fatal("not taken as a mismatch")
			}
			row, ok := orderRow(tc.s, now)
			if ok != (tc.want != "") || (ok && (!strings.Contains(row.What, tc.want) || row.Kind != AttnOrder)) {
				t.Fatalf("row %+v ok %v, want %q", row, ok, tc.want)
			}
		})
	}
	for _, s := range []store.Summary{
		{Key: "K4", State: store.StateReserved},                             // lines known
		{Key: "K5", State: store.StateCaptured, LinesUnknown: true},         // nothing left to do
		{Key: "K6", State: store.StateAwaitingCustomer, LinesUnknown: true}, // paydesk's own, waiting for the customer
	} {
		if orderMismatch(s) {
			t.Errorf("%s taken as a mismatch", s.Key)
		}
	}
}
