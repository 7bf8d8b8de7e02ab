package sandbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"paydesk/api"
)

// Chaos makes the sandbox behave like a gateway on a bad day, so a shop's
// push handling can be tested against it: pushes duplicated, reordered,
// delayed and lost (and then retried, as the family retries a push that
// was not answered 200), requests answered slowly, with a 503 or with a 492.
// Every choice comes from a generator seeded with Seed and drawn in the
// order pushes are made and requests arrive, so the same seed and the same
// requests give the same sequence of deliveries. With chaos on, pushes are
// delivered one at a time in that sequence.
type Chaos struct {
	Seed uint64
	// Duplicate is the share of pushes delivered twice.
	Duplicate float64
	// Reorder is the share of pushes held back until the next push has
	// been delivered.
	Reorder float64
	// Drop is the share of pushes whose first delivery is lost; the push is
	// delivered again after the next one.
	Drop float64
	// Delay, at DelayRate, is a pause before a delivery.
	Delay     time.Duration
	DelayRate float64
	// Slow, at SlowRate, is a pause before a request is answered.
	Slow     time.Duration
	SlowRate float64
	// Fail5xx is the share of gateway requests answered 503 before
	// anything is done; Fail492 the share answered with status 492
	// (technical failure), nothing created.
	Fail5xx float64
	Fail492 float64
}

// ParseChaos reads a chaos spec: comma-separated key=value pairs, e.g.
// "seed=7,dup=0.2,reorder=0.2,drop=10%,delay=50ms/0.3,slow=2s/0.1,5xx=0.05,492=0.05".
// Rates are fractions (0.2) or percentages (20%); delay and slow take a
// duration and, after a slash, a rate (default 1).
func ParseChaos(spec string) (*Chaos, error) {
	c := &Chaos{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("chaos %q: want key=value", item)
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		var err error
		switch k {
		case "seed":
			c.Seed, err = strconv.ParseUint(v, 10, 64)
		case "dup", "duplicate":
			c.Duplicate, err = parseRate(v)
		case "reorder":
			c.Reorder, err = parseRate(v)
		case "drop":
			c.Drop, err = parseRate(v)
		case "delay":
			c.Delay, c.DelayRate, err = parseTimed(v)
		case "slow":
			c.Slow, c.SlowRate, err = parseTimed(v)
		case "5xx", "503":
			c.Fail5xx, err = parseRate(v)
		case "492":
			c.Fail492, err = parseRate(v)
		default:
			return nil, fmt.Errorf("chaos: unknown key %q (seed, dup, reorder, drop, delay, slow, 5xx, 492)", k)
		}
		if err != nil {
			return nil, fmt.Errorf("chaos %s: %w", k, err)
		}
	}
	return c, nil
}

func parseRate(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("rate %q: not a number", v)
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > 1 {
		return 0, fmt.Errorf("rate %q: must be from 0 to 1 (or 0%% to 100%%)", v)
	}
	return f, nil
}

func parseTimed(v string) (time.Duration, float64, error) {
	d, r, hasRate := strings.Cut(v, "/")
	dur, err := time.ParseDuration(d)
	if err != nil || dur < 0 || dur > time.Minute {
		return 0, 0, fmt.Errorf("duration %q: want e.g. 50ms, at most 1m", d)
	}
	rate := 1.0
	if hasRate {
		if rate, err = parseRate(r); err != nil {
			return 0, 0, err
		}
	}
	return dur, rate, nil
}

// String renders the spec ParseChaos reads.
func (c *Chaos) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return fmt.Sprintf("seed=%d,dup=%s,reorder=%s,drop=%s,delay=%s/%s,slow=%s/%s,5xx=%s,492=%s", c.Seed,
		f(c.Duplicate), f(c.Reorder), f(c.Drop), c.Delay, f(c.DelayRate), c.Slow, f(c.SlowRate), f(c.Fail5xx), f(c.Fail492))
}

// chaosHoldMax is how long a held-back push waits for a next push before it
// goes anyway.
const chaosHoldMax = 300 * time.Millisecond

// chaosDelivery is one planned delivery of a push.
type chaosDelivery struct {
	e     *outboxEntry
	lost  bool // the attempt is lost on the way
	delay time.Duration
	at    time.Time // a retry: not before then
}

// chaosState is the sandbox's chaos: its generators and delivery plan.
// Guarded by Sandbox.mu.
type chaosState struct {
	cfg      Chaos
	pushRNG  *rand.Rand
	reqRNG   *rand.Rand
	fifo     []chaosDelivery
	held     []chaosDelivery
	retries  []chaosDelivery // failed deliveries waiting for their backoff
	lastPlan time.Time
	busy     bool
}

func newChaosState(c Chaos) *chaosState {
	return &chaosState{cfg: c, pushRNG: rand.New(rand.NewPCG(c.Seed, 1)), reqRNG: rand.New(rand.NewPCG(c.Seed, 2))}
}

// plan schedules a new push. Every push draws the same four numbers, so
// one setting does not shift the choices of another.
func (cs *chaosState) plan(e *outboxEntry, now time.Time) {
	r := cs.pushRNG
	dup, reorder, drop, delayed := r.Float64() < cs.cfg.Duplicate, r.Float64() < cs.cfg.Reorder,
		r.Float64() < cs.cfg.Drop, r.Float64() < cs.cfg.DelayRate
	d := chaosDelivery{e: e}
	if delayed {
		d.delay = cs.cfg.Delay
	}
	released := cs.held
	cs.held = nil
	if drop {
		cs.fifo = append(cs.fifo, chaosDelivery{e: e, lost: true})
	}
	sends := []chaosDelivery{d}
	if dup {
		sends = append(sends, d)
	}
	if reorder || drop {
		cs.held = append(cs.held, sends...)
	} else {
		cs.fifo = append(cs.fifo, sends...)
	}
	cs.fifo = append(cs.fifo, released...)
	cs.lastPlan = now
}

// next takes the next delivery due; wait says when to look again.
func (cs *chaosState) next(now time.Time) (chaosDelivery, bool, time.Duration) {
	if cs.busy {
		return chaosDelivery{}, false, time.Hour
	}
	retryWait := time.Hour
	pending := cs.retries[:0]
	for _, d := range cs.retries {
		if w := d.at.Sub(now); w > 0 {
			retryWait = min(retryWait, w)
			pending = append(pending, d)
			continue
		}
		cs.fifo = append(cs.fifo, d)
	}
	cs.retries = pending
	if len(cs.fifo) == 0 && len(cs.held) > 0 {
		if wait := cs.lastPlan.Add(chaosHoldMax).Sub(now); wait > 0 {
			return chaosDelivery{}, false, min(wait, retryWait)
		}
		cs.fifo, cs.held = cs.held, nil
	}
	if len(cs.fifo) == 0 {
		return chaosDelivery{}, false, retryWait
	}
	d := cs.fifo[0]
	cs.fifo = cs.fifo[1:]
	cs.busy = true
	return d, true, 0
}

// request draws the fate of one gateway request.
func (cs *chaosState) request() (slow time.Duration, fail5xx, fail492 bool) {
	r := cs.reqRNG
	s, f5, f4 := r.Float64() < cs.cfg.SlowRate, r.Float64() < cs.cfg.Fail5xx, r.Float64() < cs.cfg.Fail492
	if s {
		slow = cs.cfg.Slow
	}
	return slow, f5, f4
}

// runChaos is Run with chaos on: one delivery at a time, in plan order.
func (s *Sandbox) runChaos(ctx context.Context) error {
	sendCtx := context.WithoutCancel(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		d, ok, wait := s.chaos.next(time.Now())
		var target string
		var creds api.Credentials
		if ok {
			target, creds = s.targetOf(d.e), s.credsFor(d.e.WebsiteKey)
			if target == "" { // no push URL yet: keep it first in line
				s.chaos.fifo = append([]chaosDelivery{d}, s.chaos.fifo...)
				s.chaos.busy, ok, wait = false, false, time.Hour
			}
		}
		s.mu.Unlock()
		if ok {
			s.chaosDeliver(sendCtx, d, target, creds)
			continue
		}
		if !s.nap(ctx, timer, wait) {
			return nil
		}
	}
}

func (s *Sandbox) chaosDeliver(ctx context.Context, d chaosDelivery, target string, creds api.Credentials) {
	if d.lost {
		s.logf("%s push %s to %s: chaos: lost on the way", s.now().Format(time.RFC3339), d.e.TxKey, sanitize(target, 200))
		s.mu.Lock()
		s.chaos.busy = false
		s.mu.Unlock()
		return
	}
	if d.delay > 0 {
		t := time.NewTimer(d.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	code, err := s.post(ctx, target, creds, d.e.Body)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("answered HTTP %d", code)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chaos.busy = false
	if s.closed {
		return
	}
	if err == nil {
		s.logf("%s push %s to %s: acknowledged", s.now().Format(time.RFC3339), d.e.TxKey, sanitize(target, 200))
		if s.inOutbox(d.e) {
			s.outboxRemove(d.e)
			s.deleteOutbox(d.e.Seq)
			_ = s.flushLocked()
		}
		return
	}
	if !s.inOutbox(d.e) {
		return // a duplicate of a push already acknowledged
	}
	d.e.Tries++
	d.e.LastError = sanitize(err.Error(), 300)
	if d.e.Tries >= maxTries {
		s.outboxRemove(d.e)
		d.e.Dead = true
		s.dead[d.e.Seq] = d.e
		s.saveOutbox(d.e)
		_ = s.flushLocked()
		s.logf("%s push %s to %s: %s; gave up after %d tries (Resend to try again)", s.now().Format(time.RFC3339),
			d.e.TxKey, sanitize(target, 200), d.e.LastError, d.e.Tries)
		return
	}
	// A push the shop did not take waits for the same backoff as without
	// chaos: chaos changes what the shop sees, not the gateway's retries.
	delay := s.cfg.RetryBase << (d.e.Tries - 1)
	d.e.NextAt = time.Now().Add(delay)
	s.logf("%s push %s to %s: %s; try %d of %d in %s", s.now().Format(time.RFC3339), d.e.TxKey,
		sanitize(target, 200), d.e.LastError, d.e.Tries+1, maxTries, delay)
	s.saveOutbox(d.e)
	s.chaos.retries = append(s.chaos.retries, chaosDelivery{e: d.e, delay: d.delay, at: d.e.NextAt})
}

func (s *Sandbox) inOutbox(e *outboxEntry) bool {
	for _, x := range s.queues[e.TxKey] {
		if x == e {
			return true
		}
	}
	return false
}

// chaosRequest applies the request chaos; it reports whether the request
// was answered already.
func (s *Sandbox) chaosRequest(w http.ResponseWriter, ex *exchange) (fail492, answered bool) {
	if s.chaos == nil {
		return false, false
	}
	s.mu.Lock()
	slow, fail5xx, fail492 := s.chaos.request()
	s.mu.Unlock()
	if slow > 0 {
		time.Sleep(slow)
	}
	if fail5xx {
		ex.http, ex.reason = http.StatusServiceUnavailable, "chaos: 503"
		plain(w, ex.http, "Service unavailable", ex.reason)
		return false, true
	}
	return fail492, false
}

// forget drops the planned deliveries of a key (Resend plans them anew).
func (cs *chaosState) forget(key string) {
	keep := func(ds []chaosDelivery) []chaosDelivery {
		out := ds[:0]
		for _, d := range ds {
			if d.e.TxKey != key {
				out = append(out, d)
			}
		}
		return out
	}
	cs.fifo, cs.held, cs.retries = keep(cs.fifo), keep(cs.held), keep(cs.retries)
}
