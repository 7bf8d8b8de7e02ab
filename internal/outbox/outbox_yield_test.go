package outbox

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pushrelay"
	"paydesk/store"
)

// timerAsk is one timer Run asked for; the test fires it by sending on c.
type timerAsk struct {
	d time.Duration
	c chan time.Time
}

type askedTimer struct{ c chan time.Time }

func (a askedTimer) C() <-chan time.Time { return a.c }
func (a askedTimer) Stop() bool          { return true }

// askingTimers hands every timer Run asks for to the test, which decides
// when (if ever) it fires: no wall clock in the worker's waits.
func askingTimers(ctx context.Context) (func(time.Duration) Timer, <-chan timerAsk) {
	asks := make(chan timerAsk)
	return func(d time.Duration) Timer {
		a := timerAsk{d: d, c: make(chan time.Time)}
		select {
		case asks <- a:
		case <-ctx.Done():
		}
		return askedTimer{a.c}
	}, asks
}

// recorder is a shop in memory: every body it was sent, in order.
type recorder struct {
	mu   sync.Mutex
	got  [][]byte
	sent chan struct{} // a token per body, for a test that waits for one
}

func (r *recorder) send(_ context.Context, _ string, b []byte) pushrelay.Answer {
	r.mu.Lock()
	r.got = append(r.got, b)
	r.mu.Unlock()
	select {
	case r.sent <- struct{}{}:
	default:
	}
	return pushrelay.Answer{Status: 200}
}

func (r *recorder) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.got) }

func nextAsk(t *testing.T, asks <-chan timerAsk, what string) timerAsk {
	t.Helper()
	select {
	case a := <-asks:
		return a
	case <-time.After(time.Minute): // only a stuck test waits this long
		t.Fatalf("no timer asked for: %s", what)
		return timerAsk{}
	}
}

// While pushes arrive faster than Config.Burst the worker yields to them:
// one batch, then a rest that a kick (the next commit of pushes) does not
// cut short; when the burst is over it sends the rest at once. Nothing is
// lost, nothing sent twice, and the order per key holds.
func TestBurstYieldsThenCatchesUp(t *testing.T) {
	c := &clock{now: t0}
	db := openStore(t, filepath.Join(t.TempDir(), "listen.db"), c, "http://shop.test/push")
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var chain [][]byte // the pushes of key K, in the order they were stored
	const unique = 300
	for i := range unique + 3 {
		key, code := fmt.Sprintf("U%03d", i), api.StatusSuccess
		if i%101 == 0 { // K's pushes among the others
			key, code = "K", []int{api.StatusPendingInput, api.StatusSuccess, api.StatusCancelledByMerchant}[i/101]
		}
		p, b := push(t, key, "INV", code, t0.Add(time.Duration(i)*time.Second))
		if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
			t.Fatal(err)
		}
		if key == "K" {
			chain = append(chain, b)
		}
	}
	shop := &recorder{}
	w, err := New(Config{Store: db, Now: c.Now, Send: shop.send, Hold: -1}) // no hold: TestBurstHoldsThenYields
	if err != nil {
		t.Fatal(err)
	}
	w.Arrived(unique + 3) // within one window: a burst
	newTimer, asks := askingTimers(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, newTimer) }()
	defer func() { cancel(); <-done }()

	rest := nextAsk(t, asks, "after the first batch")
	if got := shop.count(); got != batch || rest.d != minRest {
		t.Fatalf("during a burst: %d sent before a wait of %s; want one batch (%d) and a rest of %s", got, rest.d, batch, minRest)
	}
	w.Arrived(1) // the burst goes on: a kick, which must not end the rest
	select {
	case rest.c <- c.Now():
	case a := <-asks:
		t.Fatalf("a kick cut the rest short: %d sent, a new wait of %s asked for", shop.count(), a.d)
	}
	rest = nextAsk(t, asks, "after the second batch")
	if got := shop.count(); got <= batch || got >= unique+3 || rest.d != minRest {
		t.Fatalf("still a burst: %d sent before a wait of %s; want a second batch, then a rest of %s", got, rest.d, minRest)
	}

	c.Set(t0.Add(2 * burstWindow)) // no push for two windows: the burst is over
	rest.c <- c.Now()
	after := nextAsk(t, asks, "after the catch-up")
	if after.d != idle {
		t.Errorf("after the burst it waits %s, want %s (nothing left due)", after.d, idle)
	}
	shop.mu.Lock()
	defer shop.mu.Unlock()
	if len(shop.got) != unique+3 {
		t.Fatalf("%d sent, want %d", len(shop.got), unique+3)
	}
	seen := map[string]int{}
	var gotChain [][]byte
	for _, b := range shop.got {
		seen[string(b)]++
		for _, k := range chain {
			if bytes.Equal(b, k) {
				gotChain = append(gotChain, b)
			}
		}
	}
	for b, n := range seen {
		if n != 1 {
			t.Errorf("sent %d times: %.60s", n, b)
		}
	}
	for i := range chain {
		if i >= len(gotChain) || !bytes.Equal(gotChain[i], chain[i]) {
			t.Fatalf("key K's pushes out of order: %d of %d as stored", i, len(chain))
		}
	}
}

// A steady trickle (below Config.Burst) is sent as each push arrives,
// without a rest and without waiting for any timer: a push reaches the
// shop as soon as the commit that stored it kicks the worker.
func TestTrickleSentAtOnce(t *testing.T) {
	c := &clock{now: t0}
	db := openStore(t, filepath.Join(t.TempDir(), "listen.db"), c, "http://shop.test/push")
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	shop := &recorder{sent: make(chan struct{}, 1)}
	w, err := New(Config{Store: db, Now: c.Now, Send: shop.send})
	if err != nil {
		t.Fatal(err)
	}
	newTimer, asks := askingTimers(ctx)
	var waits []time.Duration
	var mu sync.Mutex
	go func() { // the timers asked for are kept, never fired
		for a := range asks {
			mu.Lock()
			waits = append(waits, a.d)
			mu.Unlock()
		}
	}()
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, newTimer) }()
	const n = 20
	for i := range n {
		// 20 a second, each in a commit of its own, for a second.
		c.Set(t0.Add(time.Duration(i) * 50 * time.Millisecond))
		p, b := push(t, fmt.Sprintf("T%02d", i), "INV", api.StatusSuccess, c.Now())
		if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
			t.Fatal(err)
		}
		w.Arrived(1)
		select {
		case <-shop.sent:
		case <-time.After(time.Minute): // only a stuck test waits this long
			t.Fatalf("push %d not sent after its kick (%d sent)", i, shop.count())
		}
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for _, d := range waits {
		if d != idle {
			t.Errorf("a trickle made the worker wait %s (a rest?), want only the idle wait %s", d, idle)
		}
	}
}

// For Config.Hold from a burst's start the worker sends nothing at all —
// it looks again every burst window, and a kick does not wake it — so the
// gateway's pushes get the CPU; a burst that outlasts the hold gets a
// batch and a rest, as without one; when it ends every push goes, once,
// in order.
func TestBurstHoldsThenYields(t *testing.T) {
	c := &clock{now: t0}
	db := openStore(t, filepath.Join(t.TempDir(), "listen.db"), c, "http://shop.test/push")
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 300
	for i := range n {
		p, b := push(t, fmt.Sprintf("H%03d", i), "INV", api.StatusSuccess, t0.Add(time.Duration(i)*time.Second))
		if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
			t.Fatal(err)
		}
	}
	shop := &recorder{}
	const hold = time.Second
	w, err := New(Config{Store: db, Now: c.Now, Send: shop.send, Hold: hold})
	if err != nil {
		t.Fatal(err)
	}
	w.Arrived(n)
	newTimer, asks := askingTimers(ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, newTimer) }()
	defer func() { cancel(); <-done }()

	// The burst goes on: 100 pushes a window (400 a second).
	for now := t0; now.Sub(t0) < hold; now = now.Add(burstWindow) {
		a := nextAsk(t, asks, "while the burst holds")
		if got := shop.count(); got != 0 || a.d != burstWindow {
			t.Fatalf("%s into the burst: %d sent, a wait of %s; want none sent and a look every %s", now.Sub(t0), got, a.d, burstWindow)
		}
		c.Set(now.Add(burstWindow))
		w.Arrived(100) // a kick too, which must not end the wait
		select {
		case a.c <- c.Now():
		case b := <-asks:
			t.Fatalf("a kick cut the hold's wait short: a new wait of %s", b.d)
		}
	}
	rest := nextAsk(t, asks, "after the hold")
	if got := shop.count(); got != batch || rest.d != minRest {
		t.Fatalf("the burst outlasted the hold: %d sent before a wait of %s; want a batch (%d) and a rest of %s", got, rest.d, batch, minRest)
	}
	c.Set(c.Now().Add(2 * burstWindow)) // no push for two windows: the burst is over
	rest.c <- c.Now()
	if after := nextAsk(t, asks, "after the catch-up"); after.d != idle {
		t.Errorf("after the burst it waits %s, want %s (nothing left due)", after.d, idle)
	}
	shop.mu.Lock()
	defer shop.mu.Unlock()
	seen := map[string]int{}
	for _, b := range shop.got {
		seen[string(b)]++
	}
	if len(shop.got) != n || len(seen) != n {
		t.Fatalf("%d sent, %d distinct; want each of %d once", len(shop.got), len(seen), n)
	}
}
