package ops

import (
	"strings"
	"testing"
	"time"
)

// Two test reservations made in the same instant have two invoices (the
// invoice was the second alone, and two in one second collided).
func TestTestReservationsInTheSameInstantDiffer(t *testing.T) {
	now := time.Date(2026, 11, 25, 16, 31, 54, 0, time.UTC)
	seen := map[string]bool{}
	for range 50 {
		inv := TestReservation(now, "EUR").Invoice
		if !strings.HasPrefix(inv, "T-20261125-163154-") {
			t.Fatalf("invoice %q does not start with the time", inv)
		}
		if seen[inv] {
			t.Fatalf("invoice %q made twice in the same instant", inv)
		}
		seen[inv] = true
	}
	if got := TestReservationWith(now, "", "x").Invoice; got != "T-20261125-163154-x" {
		t.Fatalf("TestReservationWith invoice %q", got)
	}
}
