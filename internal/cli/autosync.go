package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"paydesk/internal/gwsync"
)

// defaultSyncEvery is how often the console (and paydesk serve) ask the
// gateway what they were not told: often enough that a capture made in the
// back office shows the same morning, rarely enough that a day of
// reservations costs the gateway a few thousand lookups.
const defaultSyncEvery = 15 * time.Minute

// parseSyncEvery reads sync-every: a duration ("15m", "1h"), "0" or "off"
// for never. Below a minute is refused: a lookup per open invoice each time.
func parseSyncEvery(v string) (time.Duration, error) {
	switch strings.TrimSpace(v) {
	case "":
		return defaultSyncEvery, nil
	case "0", "off":
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("sync-every = %q: a duration of a minute or more (15m, 1h), or 0 for never", v)
	}
	return d, nil
}

// syncStartDelay is how long after the start the first run waits: on a
// large cache a run reads every reservation and transaction a page at a
// time, and at start that competed with the console's first frame.
const syncStartDelay = 20 * time.Second

// at is a channel that has fired already.
func at(t time.Time) <-chan time.Time {
	c := make(chan time.Time, 1)
	c <- t
	return c
}

// autoSync runs sync once first fires (what happened while paydesk was not
// running) and then on every tick until ctx ends; report gets each run's
// result. A run's failure is reported and the next tick tries again: a
// lookup only reads.
func autoSync(ctx context.Context, first, tick <-chan time.Time, run func(context.Context) (gwsync.Result, error), report func(gwsync.Result, error)) {
	select {
	case <-ctx.Done():
		return
	case <-first:
	}
	for {
		res, err := run(ctx)
		if ctx.Err() != nil {
			return
		}
		report(res, err)
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
	}
}

// syncLine is what the log and the console's status line say of a run;
// "" when there is nothing to say.
func syncLine(res gwsync.Result, err error) string {
	switch {
	case err != nil:
		return "sync: " + clean(err.Error())
	case len(res.Failed) > 0:
		return fmt.Sprintf("sync: learned %d from the gateway; %d lookups failed (asked again next time)", len(res.Learned), len(res.Failed))
	case len(res.Learned) > 0:
		return fmt.Sprintf("sync: learned %d from the gateway that no push told (see Attention)", len(res.Learned))
	}
	return ""
}

// startAutoSync runs autoSync in the background of the runtime every
// every (0: never); say gets the lines worth showing. It stops when the
// runtime closes.
func (r *runtime) startAutoSync(every time.Duration, say func(string)) {
	if every <= 0 || r.svc == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := time.NewTicker(every)
	done := make(chan struct{})
	go func() {
		defer close(done)
		autoSync(ctx, time.After(syncStartDelay), t.C, func(ctx context.Context) (gwsync.Result, error) { return r.svc.Sync(ctx, time.Time{}) },
			func(res gwsync.Result, err error) {
				line := syncLine(res, err)
				if line == "" {
					r.logf("sync: asked about %d invoices, learned nothing new", res.Invoices)
					return
				}
				r.logf("%s", line)
				if say != nil {
					say(line)
				}
			})
	}()
	r.closers = append(r.closers, func() { cancel(); t.Stop(); <-done })
}
