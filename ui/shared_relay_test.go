package ui

import (
	"context"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/store"
)

// TestSharedStoreGathersAStream: the first change after a quiet spell is
// handed on at once; the changes that follow it within the relay's window
// are handed on as one (merged), so that the consoles reloading for them
// share their reads; until then a read stays shared. Stopping hands on
// what was gathered.
func TestSharedStoreGathersAStream(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "cache.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	s := newSharedStore(db, time.Hour) // the stream outlasts the test: only Stop ends its gathering
	ch, unsubscribe := s.Subscribe()
	defer unsubscribe()
	var reads atomic.Int64
	read := func(context.Context) (int, error) { reads.Add(1); return 1, nil }

	putReservation(t, db, 1)
	select {
	case c := <-ch:
		if len(c.Reservations) != 1 {
			t.Fatalf("first change %+v, want reservation 1", c)
		}
	case <-time.After(sharedStuck):
		t.Fatal("the first change was not handed on at once")
	}
	_, _ = shared(t.Context(), s, "k", read)
	putReservation(t, db, 2)
	putReservation(t, db, 3)
	_, _ = shared(t.Context(), s, "k", read)
	if got := reads.Load(); got != 1 {
		t.Errorf("%d reads while the stream is gathered; want 1, shared", got)
	}
	s.Stop()
	var got []store.Change
	for c := range ch {
		got = append(got, c)
	}
	if len(got) != 1 || !slices.Equal(got[0].Reservations, []string{"00000000000000000000000000000002", "00000000000000000000000000000003"}) {
		t.Fatalf("handed on after the first: %+v; want the two reservations as one change", got)
	}
}
