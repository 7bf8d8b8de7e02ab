package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"paydesk/internal/burst"
	"paydesk/internal/pushrelay"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// DefaultSchedule is the wait before each retry: the first within
// seconds, then over about three days, as the gateway family retries a
// push it could not deliver (eleven retries over three days).
var DefaultSchedule = []time.Duration{
	10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute,
	time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 24 * time.Hour,
}

// MaxExcerpt bounds the answer's excerpt kept with an attempt.
const MaxExcerpt = 200

// Store is what the worker needs of the store (*store.DB).
type Store interface {
	NextDeliveries(ctx context.Context, now time.Time, limit int) ([]store.DueDelivery, time.Time, error)
	RecordAttempts(ctx context.Context, recs []store.AttemptRecord) error
}

// SendFunc posts a push body to an endpoint (pushrelay.Sender.Send).
type SendFunc func(ctx context.Context, target string, body []byte) pushrelay.Answer

// Config configures a Worker.
type Config struct {
	Store Store
	Send  SendFunc
	// Schedule is the wait before each retry; nil means DefaultSchedule.
	// After its last step a delivery is given up (failed) until resent.
	Schedule []time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Report gets every attempt (from the worker's goroutine); nil: none.
	Report func(d store.Delivery, a store.Attempt, out store.AttemptOutcome)
	// Logf reports the store's errors; nil: none.
	Logf func(format string, args ...any)
	// Parallel is how many attempts run at once (0: DefaultParallel). They
	// are for different keys or endpoints: the order per key holds
	// whatever it is.
	Parallel int
	// Burst is the rate of pushes stored (a second, as told by Arrived)
	// from which Run yields to them: while it lasts, Run sends one batch
	// and then rests Rest times as long as the batch took, so that the
	// gateway's pushes, which wait for their 200, get most of the CPU and
	// the shop's copies follow when the burst ends (0: DefaultBurst; < 0:
	// never yield).
	Burst int
	// Rest is how many times as long as a batch took Run rests after it
	// during a burst (0: DefaultRest).
	Rest int
	// Hold is how long a burst holds every delivery back before Run sends
	// its batches and rests (0: DefaultHold; < 0: no hold).
	Hold time.Duration
}

// DefaultHold is Config.Hold's default. A burst of a few seconds (a batch
// of captures, a gateway catching up) is answered with all the CPU there
// is, and its copies follow at once when it ends; one that lasts longer
// sends a fifth of the time, so the shop is never more than this behind
// for want of a turn.
const DefaultHold = 30 * time.Second

// DefaultBurst is Config.Burst's default: a gateway pushes a busy shop a
// few a second; hundreds a second is a burst (a batch of captures, a
// gateway catching up after an outage, a load test).
const DefaultBurst = 200

// DefaultRest is Config.Rest's default: during a burst the deliveries
// take about a fifth of the time the worker would give them.
const DefaultRest = 4

// The rest after a batch during a burst, whatever the batch took: at
// least minRest (a batch of a cheap shop takes microseconds, and resting
// that long would not let the batch fill up), at most maxRest (the shop
// still gets a trickle).
const (
	minRest = 20 * time.Millisecond
	maxRest = time.Second
)

// burstWindow is the span over which the rate of pushes is counted
// (internal/burst): Run is busy while the pushes of the current and the
// previous window reach Burst × burstWindow.
const burstWindow = burst.Window

// DefaultParallel is Config.Parallel's default.
const DefaultParallel = 4

// Worker sends the due deliveries.
type Worker struct {
	cfg  Config
	kick chan struct{}

	meter burst.Meter // the pushes told of (Arrived)

	mu    sync.Mutex
	began time.Time // when the burst under way began; zero: none
}

// New makes a worker; Run starts it.
func New(cfg Config) (*Worker, error) {
	if cfg.Store == nil || cfg.Send == nil {
		return nil, errors.New("outbox: a store and a sender are needed")
	}
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultSchedule
	}
	for i, d := range cfg.Schedule {
		if d <= 0 {
			return nil, fmt.Errorf("outbox: retry schedule step %d is %s: must be positive", i+1, d)
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = DefaultParallel
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	if cfg.Rest <= 0 {
		cfg.Rest = DefaultRest
	}
	if cfg.Hold == 0 {
		cfg.Hold = DefaultHold
	}
	return &Worker{cfg: cfg, kick: make(chan struct{}, 1)}, nil
}

// Kick tells the worker that deliveries may have been recorded: it looks
// at once instead of at its next due time. It never blocks.
func (w *Worker) Kick() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Arrived tells the worker that n pushes were stored (a commit's count):
// it counts them towards the burst rate and kicks it.
func (w *Worker) Arrived(n int) {
	w.meter.Add(w.cfg.Now(), n)
	w.Kick()
}

// busy says whether pushes arrive at Burst a second or more, and holding
// whether the burst began less than Config.Hold ago.
func (w *Worker) busy() (busy, holding bool) {
	if w.cfg.Burst < 0 {
		return false, false
	}
	now := w.cfg.Now()
	busy = w.meter.Busy(now, w.cfg.Burst)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !busy:
		w.began = time.Time{}
	case w.began.IsZero():
		w.began = now
	}
	return busy, busy && w.cfg.Hold > 0 && now.Sub(w.began) < w.cfg.Hold
}

// batch is how many due deliveries one read of the store returns.
const batch = 256

// RunOnce sends every delivery due now, again until none is due (a
// delivered push lets the next for its key go), and returns when the next
// one is due (zero: none waits).
func (w *Worker) RunOnce(ctx context.Context) (time.Time, error) {
	next, _, _, err := w.run(ctx, false)
	return next, err
}

// run is RunOnce; with yield it returns after a batch while a burst
// lasts, with yielded true (more may be due), and at once, sending
// nothing, while the burst holds (held true).
func (w *Worker) run(ctx context.Context, yield bool) (next time.Time, yielded, held bool, err error) {
	for {
		if yield {
			if _, holding := w.busy(); holding {
				return time.Time{}, true, true, nil
			}
		}
		due, next, err := w.cfg.Store.NextDeliveries(ctx, w.cfg.Now(), batch)
		if err != nil {
			return time.Time{}, false, false, err
		}
		if len(due) == 0 {
			return next, false, false, nil
		}
		// NextDeliveries gives at most one delivery per key and endpoint:
		// they may go at once. What came of them is recorded in one commit.
		recs := make([]store.AttemptRecord, len(due))
		done := make([]bool, len(due))
		// Parallel senders take the batch's deliveries in turn: a goroutine
		// per delivery grew a fresh stack for every push sent (measured: a
		// tenth of the worker's CPU under load).
		var taken atomic.Int64
		var wg sync.WaitGroup
		for range min(w.cfg.Parallel, len(due)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(taken.Add(1)) - 1; i < len(due); i = int(taken.Add(1)) - 1 {
					recs[i], done[i] = w.attempt(ctx, due[i])
				}
			}()
		}
		wg.Wait()
		var keep []store.AttemptRecord
		var kept []store.Delivery
		for i := range recs {
			if done[i] {
				keep, kept = append(keep, recs[i]), append(kept, due[i].Delivery)
			}
		}
		// Recorded even when the run is being stopped: the shop has them.
		if err := w.cfg.Store.RecordAttempts(context.WithoutCancel(ctx), keep); err != nil {
			return time.Time{}, false, false, err
		}
		if w.cfg.Report != nil {
			for i, r := range keep {
				w.cfg.Report(kept[i], r.Attempt, r.Outcome)
			}
		}
		if err := ctx.Err(); err != nil {
			return time.Time{}, false, false, err
		}
		if yield {
			if busy, _ := w.busy(); busy {
				return time.Time{}, true, false, nil
			}
		}
	}
}

// attempt sends one delivery and says what came of it; ok is false when
// the attempt was cut short by the worker's stop (not the shop's answer:
// it stays due, and the next run sends it again).
func (w *Worker) attempt(ctx context.Context, d store.DueDelivery) (store.AttemptRecord, bool) {
	rec := store.AttemptRecord{ID: d.ID}
	if len(d.Body) == 0 {
		// Never an empty forward: a shop's verifier throws on it.
		rec.Attempt = store.Attempt{At: w.cfg.Now(), Error: "the push's body is gone from the store: nothing to send"}
		rec.Outcome = store.AttemptOutcome{GaveUp: true}
		return rec, true
	}
	if ctx.Err() != nil {
		return rec, false
	}
	at := w.cfg.Now()
	ans := w.cfg.Send(ctx, d.Endpoint, d.Body)
	if ans.Err != nil && ctx.Err() != nil {
		return rec, false
	}
	a := store.Attempt{At: at, Status: ans.Status, Latency: ans.Duration,
		Excerpt: textsafe.Bound(textsafe.Clean(ans.Excerpt), MaxExcerpt)}
	if ans.Err != nil {
		a.Error = textsafe.Bound(textsafe.Clean(ans.Err.Error()), MaxExcerpt)
	}
	var out store.AttemptOutcome
	switch {
	case ans.OK():
		out.Delivered = true
	case d.Tries >= len(w.cfg.Schedule):
		out.GaveUp = true
	default:
		out.NextAt = w.cfg.Now().Add(w.cfg.Schedule[d.Tries])
	}
	rec.Attempt, rec.Outcome = a, out
	return rec, true
}

// Timer is the clock's timer, a seam for tests.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// retryOnError is how long Run waits after the store failed.
const retryOnError = 5 * time.Second

// idle is the longest Run waits without a kick: another process sharing
// a team's database may record deliveries it is not told of.
const idle = time.Minute

// Run sends deliveries until ctx ends: at once, when kicked, and when the
// next is due. While pushes arrive at Config.Burst a second or more it
// yields to them: for Config.Hold it sends nothing, then a batch and a
// rest that no kick cuts short (see Config.Burst); when the burst ends it
// sends the rest at once, in order per key as ever. newTimer nil means the real clock's timers.
func (w *Worker) Run(ctx context.Context, newTimer func(time.Duration) Timer) {
	if newTimer == nil {
		newTimer = func(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }
	}
	for ctx.Err() == nil {
		wait := idle
		start := w.cfg.Now()
		next, yielded, held, err := w.run(ctx, w.cfg.Burst >= 0)
		kick := w.kick
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if w.cfg.Logf != nil {
				w.cfg.Logf("outbox: %v", err)
			}
			wait = retryOnError
		case held:
			wait = burstWindow // to see the burst end, or outlast the hold
			kick = nil
		case yielded:
			wait = min(max(time.Duration(w.cfg.Rest)*w.cfg.Now().Sub(start), minRest), maxRest)
			kick = nil // the pushes kick it all the time: it rests all the same
		case !next.IsZero():
			wait = min(max(next.Sub(w.cfg.Now()), 0), idle)
		}
		t := newTimer(wait)
		select {
		case <-ctx.Done():
		case <-kick:
		case <-t.C():
		}
		t.Stop()
	}
}
