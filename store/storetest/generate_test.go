package storetest

import (
	"path/filepath"
	"slices"
	"strings"
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

// TestGrow: Grow writes the reservations Generate writes (the same keys,
// invoices, states and amounts), created in the order of their invoices.
func TestGrow(t *testing.T) {
	now := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	read := func(fill func(*store.DB, int, int64) error) []store.Summary {
		db, err := store.Open(filepath.Join(t.TempDir(), "gen.db"), store.Options{NoSync: true, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := fill(db, 1500, 7); err != nil {
			t.Fatal(err)
		}
		sums, err := db.LoadReservationSummaries(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(sums, func(a, b store.Summary) int { return strings.Compare(a.Invoice, b.Invoice) })
		return sums
	}
	bulk, grown := read(Generate), read(Grow)
	if len(bulk) != 1500 || len(grown) != len(bulk) {
		t.Fatalf("%d reservations grown, %d generated, want 1500", len(grown), len(bulk))
	}
	for i, g := range grown {
		b := bulk[i]
		if g.Key != b.Key || g.State != b.State || !g.Amount.Equal(b.Amount) || !g.Captured.Equal(b.Captured) || g.Customer != b.Customer {
			t.Fatalf("grown %+v, generated %+v", g, b)
		}
		if i > 0 && g.Created.Before(grown[i-1].Created) {
			t.Errorf("%s created %s, before %s (%s)", g.Invoice, g.Created, grown[i-1].Invoice, grown[i-1].Created)
		}
		if g.Created.After(now) || g.Created.Before(now.Add(-span)) {
			t.Errorf("%s created %s, outside the 20 days", g.Invoice, g.Created)
		}
	}
}
