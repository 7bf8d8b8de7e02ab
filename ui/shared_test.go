package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/store"
)

func sharedTestStore(t *testing.T) (*store.DB, *SharedStore) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "cache.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSharedStore(db)
	t.Cleanup(func() {
		_ = db.Close()
		s.Stop()
	})
	return db, s
}

func putReservation(t *testing.T, db *store.DB, n int) {
	t.Helper()
	r := &store.Reservation{Key: fmt.Sprintf("%032d", n), ReservationNumber: fmt.Sprintf("R%07d", n), Invoice: fmt.Sprintf("INV-%d", n),
		Currency: "EUR", Created: time.Date(2026, 11, 26, 9, 0, n, 0, time.UTC)}
	if err := db.PutReservations(t.Context(), []*store.Reservation{r}); err != nil {
		t.Fatal(err)
	}
}

// TestSharedStoreReadsOncePerChange: consoles asking for the same read
// between two changes share one read, fifty at once too; a change makes
// the next ask read again.
func TestSharedStoreReadsOncePerChange(t *testing.T) {
	db, s := sharedTestStore(t)
	ch, stop := s.Subscribe()
	defer stop()
	var reads atomic.Int64
	read := func(context.Context) (int, error) { reads.Add(1); return 1, nil }
	for _, step := range []struct {
		name      string
		change    bool
		askers    int
		wantReads int64
	}{
		{"the first ask reads", false, 1, 1},
		{"asked again before a change", false, 1, 1},
		{"fifty consoles at once", false, 50, 1},
		{"after a change", true, 1, 2},
		{"fifty after the next change", true, 50, 3},
	} {
		if step.change {
			putReservation(t, db, int(reads.Load()))
			select {
			case <-ch:
			case <-time.After(sharedStuck):
				t.Fatal("no change handed on")
			}
		}
		var wg sync.WaitGroup
		for i := 0; i < step.askers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if v, err := shared(t.Context(), s, "k", read); v != 1 || err != nil {
					t.Errorf("%s: %v %v", step.name, v, err)
				}
			}()
		}
		wg.Wait()
		if got := reads.Load(); got != step.wantReads {
			t.Errorf("%s: %d reads; want %d", step.name, got, step.wantReads)
		}
	}
}

// TestSharedStoreNeverStale: a console that reloads for a change it was
// handed sees that change, even when the read was shared just before it.
func TestSharedStoreNeverStale(t *testing.T) {
	db, s := sharedTestStore(t)
	ch, stop := s.Subscribe()
	defer stop()
	for i := 1; i <= 20; i++ {
		if _, err := s.Counts(t.Context()); err != nil { // shared before the change
			t.Fatal(err)
		}
		putReservation(t, db, i)
		select {
		case <-ch:
		case <-time.After(sharedStuck):
			t.Fatal("no change handed on")
		}
		n, err := s.Counts(t.Context())
		if err != nil || n.Reservations != i {
			t.Fatalf("after reservation %d was handed on, the count reads %d (%v): a read from before the change", i, n.Reservations, err)
		}
	}
	// The slices are each console's own.
	p1, _ := s.ReservationPage(t.Context(), store.PageQuery{Limit: 10})
	p2, _ := s.ReservationPage(t.Context(), store.PageQuery{Limit: 10})
	if len(p1.Rows) == 0 || &p1.Rows[0] == &p2.Rows[0] {
		t.Errorf("two consoles were handed one slice of rows (%d rows)", len(p1.Rows))
	}
}

// sharedStuck only ends a stuck test.
const sharedStuck = time.Minute

// TestSharedReadGivenUpByAll: a shared read goes on while one console
// still waits for it, and is cancelled — and forgotten, so the next ask
// reads afresh — once every console waiting has given up (each typed a
// new filter).
func TestSharedReadGivenUpByAll(t *testing.T) {
	_, s := sharedTestStore(t)
	started, ended := make(chan struct{}, 2), make(chan error, 2)
	var reads atomic.Int64
	slow := func(ctx context.Context) (int, error) {
		if reads.Add(1) > 1 {
			return 2, nil // the read after the one given up
		}
		started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return 0, ctx.Err()
	}
	a, stopA := context.WithCancel(t.Context())
	b, stopB := context.WithCancel(t.Context())
	defer stopA()
	defer stopB()
	gotA, gotB := make(chan error, 1), make(chan error, 1)
	go func() { _, err := shared(a, s, "count", slow); gotA <- err }()
	<-started
	go func() { _, err := shared(b, s, "count", slow); gotB <- err }()
	// b waits for the same read (no second read starts): wait until it
	// is counted among the waiters.
	for {
		s.mu.Lock()
		n := s.reads["count"].waiters
		s.mu.Unlock()
		if n == 2 {
			break
		}
		runtime.Gosched()
	}
	stopA()
	if err := <-gotA; !errors.Is(err, context.Canceled) {
		t.Fatalf("the console that gave up got %v, want context.Canceled", err)
	}
	select {
	case err := <-ended:
		t.Fatalf("the read ended (%v) while a console still waits for it", err)
	default:
	}
	stopB()
	if err := <-gotB; !errors.Is(err, context.Canceled) {
		t.Fatalf("the second console got %v, want context.Canceled", err)
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("the read given up by all ended with %v, want context.Canceled", err)
	}
	if v, err := shared(t.Context(), s, "count", slow); v != 2 || err != nil {
		t.Fatalf("the next ask: %d, %v; want a read of its own (2)", v, err)
	}
}
