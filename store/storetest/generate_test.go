package storetest

import (
	"path/filepath"
	"testing"
	"time"

	"paydesk/store"
)

func TestGenerate(t *testing.T) {
	now := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	db, err := store.Open(filepath.Join(t.TempDir(), "gen.db"), store.Options{NoSync: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Generate(db, 2000, 7); err != nil {
		t.Fatal(err)
	}
	sums, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 2000 {
		t.Fatalf("%d reservations, want 2000", len(sums))
	}
	states := map[store.State]int{}
	for _, s := range sums {
		states[s.State]++
		if s.Amount.Sign() <= 0 || s.Invoice == "" || s.Customer == "" {
			t.Fatalf("thin row %+v", s)
		}
	}
	for _, st := range []store.State{store.StateAwaitingCustomer, store.StateReserved, store.StatePartlyCaptured,
		store.StateCaptured, store.StateCancelled, store.StateClosed, store.StateDeclined} {
		if states[st] == 0 {
			t.Errorf("no %s reservation among %v", st, states)
		}
	}
}
