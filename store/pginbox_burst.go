package store

import (
	"sync"
	"time"
)

// The applier yields to an ingest burst. Applying a push costs the
// listener and the server about three times what ingesting it does
// (docs/store.md, "Two listeners into one PostgreSQL database"), and on a
// machine of a few cores an applier that runs flat out while pushes pour
// in takes the cores from the ingest the gateway waits on: measured, a
// third more CPU a push at ingest on both sides and a lower rate. While
// pushes arrive at inboxBurst a second or more (this process's commits and
// the other listeners', whose NOTIFY says how many they committed), the
// applier applies one batch and then rests inboxRest times as long as
// that batch took, between minApplierRest and maxApplierRest; the pushes
// wait durably in the inbox meanwhile, and a batch after a rest is larger,
// which is cheaper a push. When the burst ends (within two windows) it
// applies at full speed again. The same rule as the outbox worker's
// (internal/outbox, Config.Burst and Rest).
const (
	inboxBurst     = 200 // pushes a second
	inboxRest      = 4
	minApplierRest = 20 * time.Millisecond
	maxApplierRest = time.Second
	// inboxBurstWindow is the span over which arrivals are counted; busy
	// looks at the current window and the one before it.
	inboxBurstWindow = 250 * time.Millisecond
)

// burstMeter counts arrivals in two windows of inboxBurstWindow.
type burstMeter struct {
	mu       sync.Mutex
	window   int64 // the current window's number (Unix time / inboxBurstWindow)
	arrived  int   // arrivals in the current window
	previous int   // and in the one before it
}

// add counts n arrivals at now.
func (m *burstMeter) add(now time.Time, n int) {
	if n <= 0 {
		return
	}
	m.mu.Lock()
	m.roll(now)
	m.arrived += n
	m.mu.Unlock()
}

// busy says whether arrivals come at perSecond or more.
func (m *burstMeter) busy(now time.Time, perSecond int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(now)
	return float64(m.arrived+m.previous) >= float64(perSecond)*inboxBurstWindow.Seconds()
}

// roll moves the windows on to now's; m.mu is held.
func (m *burstMeter) roll(now time.Time) {
	win := now.UnixNano() / int64(inboxBurstWindow)
	switch {
	case win == m.window:
	case win == m.window+1:
		m.previous, m.arrived = m.arrived, 0
	default:
		m.previous, m.arrived = 0, 0
	}
	m.window = win
}

// applierRest is how long the applier rests after a batch that took took,
// during a burst.
func applierRest(took time.Duration) time.Duration {
	return min(max(inboxRest*took, minApplierRest), maxApplierRest)
}

// restAfterBatch is what the applier rests after a batch that took took:
// nothing unless pushes are arriving in a burst.
func (ib *inbox) restAfterBatch(took time.Duration) time.Duration {
	if !ib.burst.busy(ib.clock(), inboxBurst) {
		return 0
	}
	return applierRest(took)
}

// sleepFor waits d, and says false when the DB is closing or the
// applier's connection was lost meanwhile.
func (ib *inbox) sleepFor(lost <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ib.ctx.Done():
		return false
	case <-lost:
		return false
	case <-t.C:
		return true
	}
}
