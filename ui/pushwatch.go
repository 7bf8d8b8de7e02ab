package ui

import (
	"time"

	"paydesk/api"
	"paydesk/internal/ops"
)

// pushWait is how long an operation's push may take before the console
// says it is missing. The sandbox pushes within a second; a real gateway
// within seconds.
const pushWait = 15 * time.Second

// pushWatch notices operations whose push does not come: a gateway that
// pushes elsewhere (its push URL is not this console's listener) leaves
// the cache without the news, and nothing else would say so.
type pushWatch struct {
	since  map[string]time.Time // operation key → when its answer came
	warned bool                 // the status line said so for the current ones
}

// expect starts watching for the push of an operation's answer. A Reserve
// waits for the customer, not for a push; an answer that went wrong
// brings none.
func (w *pushWatch) expect(res ops.Result, at time.Time) {
	if !res.OK() || res.Key == "" || res.Action == api.ActionReserve {
		return
	}
	if w.since == nil {
		w.since = map[string]time.Time{}
	}
	w.since[res.Key] = at
}

// arrived stops watching for key.
func (w *pushWatch) arrived(key string) {
	delete(w.since, key)
	if len(w.since) == 0 {
		w.warned = false
	}
}

// late counts the operations waiting longer than pushWait for their push.
func (w *pushWatch) late(now time.Time) int {
	n := 0
	for _, t := range w.since {
		if now.Sub(t) >= pushWait {
			n++
		}
	}
	return n
}

// nextLate is the first instant after now at which late's count changes
// by the clock alone; false when nothing is watched.
func (w *pushWatch) nextLate(now time.Time) (time.Time, bool) {
	var next time.Time
	for _, t := range w.since {
		at := t.Add(pushWait)
		if !at.After(now) {
			continue // late already
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}
