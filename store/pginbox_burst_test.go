package store

import (
	"sync"
	"testing"
	"time"

	"paydesk/internal/pgtest"
)

func TestApplierRest(t *testing.T) {
	for _, tc := range []struct {
		took, want time.Duration
	}{
		{0, minApplierRest},
		{time.Millisecond, minApplierRest},
		{10 * time.Millisecond, 40 * time.Millisecond},
		{100 * time.Millisecond, 400 * time.Millisecond},
		{time.Second, maxApplierRest},
	} {
		if got := applierRest(tc.took); got != tc.want {
			t.Errorf("applierRest(%v) = %v, want %v", tc.took, got, tc.want)
		}
	}
}

// restRecorder replaces an inbox's rest: it records each rest and returns
// at once.
type restRecorder struct {
	mu    sync.Mutex
	rests []time.Duration
}

func (r *restRecorder) sleep(_ <-chan struct{}, d time.Duration) bool {
	r.mu.Lock()
	r.rests = append(r.rests, d)
	r.mu.Unlock()
	return true
}

func (r *restRecorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.rests...)
}

// The applier yields to a burst of pushes ingested by another listener
// (told by the NOTIFY's count) or by its own process, and applies without
// a rest when the pushes trickle in; either way every push is applied once.
func TestInboxApplierYieldsToBurst(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	for _, tc := range []struct {
		name     string
		own      bool // the applier's process ingests (else the other listener)
		stopped  bool // the clock stands still: every arrival is in one window
		pushes   int
		wantRest bool
	}{
		{"burst at the other listener", false, true, 120, true},
		{"burst at its own listener", true, true, 120, true},
		{"a trickle", false, false, 120, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			applier, other := openShared2(t)
			var rec restRecorder
			var mu sync.Mutex
			tick := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			applier.inbox.clock = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				if !tc.stopped {
					tick = tick.Add(time.Second) // each look a new window: never a burst
				}
				return tick
			}
			applier.inbox.sleep = rec.sleep
			applier.StartApplier(t.Logf)
			waitLease(t, "the applier to take the inbox's lock", applier.inbox.holding.Load)
			in := other
			if tc.own {
				in = applier
			}
			ps := inboxPushes(tc.pushes)
			for _, p := range ps {
				ingest(t, in, p, nil)
			}
			waitApplied(t, applier, 2*time.Minute)
			checkOnce(t, applier, ps)
			rests := rec.got()
			if tc.wantRest != (len(rests) > 0) {
				t.Fatalf("the applier rested %d times (%v); want rests: %v", len(rests), rests, tc.wantRest)
			}
			for _, d := range rests {
				if d < minApplierRest || d > maxApplierRest {
					t.Errorf("a rest of %v, want %v–%v", d, minApplierRest, maxApplierRest)
				}
			}
		})
	}
}
