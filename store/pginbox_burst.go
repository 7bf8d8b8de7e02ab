package store

import (
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
)

// applierRest is how long the applier rests after a batch that took took,
// during a burst.
func applierRest(took time.Duration) time.Duration {
	return min(max(inboxRest*took, minApplierRest), maxApplierRest)
}

// restAfterBatch is what the applier rests after a batch that took took:
// nothing unless pushes are arriving in a burst.
func (ib *inbox) restAfterBatch(took time.Duration) time.Duration {
	if !ib.burst.Busy(ib.clock(), inboxBurst) {
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
