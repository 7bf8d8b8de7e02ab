package outbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/pushrelay"
	"paydesk/store"
)

var (
	t0    = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	creds = api.Credentials{WebsiteKey: "WEBSHOP1", SecretKey: "shop-secret"}
)

// clock is a test clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// shop is a shop endpoint that answers as told and keeps the bodies it
// answered 200, checking each one's signature.
type shop struct {
	t      *testing.T
	mu     sync.Mutex
	status int
	got    [][]byte
	empty  int
	srv    *http.Server
	addr   string
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(body) == 0 {
		s.empty++
	}
	if _, err := api.VerifierFor(creds).Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.EscapedPath(), body); err != nil {
		s.t.Errorf("forward not signed for the shop: %v", err)
	}
	w.WriteHeader(s.status)
	fmt.Fprintf(w, "answer %d\x1b[31m", s.status)
	if s.status == http.StatusOK {
		s.got = append(s.got, body)
	}
}

// up serves on s.addr (a fixed port, so the shop can go down and come back).
func (s *shop) up() {
	s.t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		s.t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
}

func (s *shop) down() { _ = s.srv.Close() }

func (s *shop) answer(code int) { s.mu.Lock(); s.status = code; s.mu.Unlock() }

func (s *shop) received() ([][]byte, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.got...), s.empty
}

func push(t *testing.T, key, invoice string, code int, at time.Time) (*api.Push, []byte) {
	t.Helper()
	p := &api.Push{Transaction: &api.TransactionPush{Key: key, Invoice: invoice, ServiceCode: api.ServiceDeferred,
		Status: api.Status{Code: api.Code{Code: code}, DateTime: api.NewDateTime(at, true)}, IsTest: true, Currency: "EUR",
		AmountDebit: api.NewAmount(decimal.RequireFromString("10")), TransactionType: api.TypeDeferredPay, MutationType: api.MutationDeferred}}
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

func openStore(t *testing.T, path string, c *clock, forward ...string) *store.DB {
	t.Helper()
	db, err := store.Open(path, store.Options{NoSync: true, Now: c.Now, ForwardTo: forward})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newWorker(t *testing.T, db *store.DB, c *clock) *Worker {
	t.Helper()
	s := pushrelay.Sender{Credentials: creds} // signed on the wall clock: the shop checks its own
	w, err := New(Config{Store: db, Send: s.Send, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A shop that answers 500 first, then refuses connections, then comes
// back gets every push exactly once (answered 200), in order per key,
// signed, never an empty body, from a worker that was restarted on a
// reopened store in between; every attempt is recorded, its answer
// excerpt inert; the retries follow the schedule.
func TestShopDownThenBack(t *testing.T) {
	c := &clock{now: t0}
	sh := &shop{t: t, status: http.StatusInternalServerError, addr: "127.0.0.1:0"}
	sh.up()
	defer sh.down()
	endpoint := "http://" + sh.addr + "/push"
	path := filepath.Join(t.TempDir(), "listen.db")
	db := openStore(t, path, c, endpoint)
	ctx := context.Background()
	var bodies [][]byte
	for i, k := range []string{"K1", "K1", "K2"} {
		p, b := push(t, k, "INV-"+k, []int{api.StatusPendingProcessing, api.StatusSuccess, api.StatusSuccess}[i], t0.Add(time.Duration(i)*time.Second))
		if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}

	next, err := newWorker(t, db, c).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(DefaultSchedule[0]); !next.Equal(want) {
		t.Fatalf("after 500s next = %v, want %v", next, want)
	}
	// Not due yet: nothing is sent.
	c.Set(t0.Add(DefaultSchedule[0] - time.Second))
	if _, err := newWorker(t, db, c).RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	sh.down() // connections refused
	c.Set(t0.Add(DefaultSchedule[0]))
	next, err = newWorker(t, db, c).RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := c.Now().Add(DefaultSchedule[1]); !next.Equal(want) {
		t.Fatalf("after refused next = %v, want %v", next, want)
	}

	// A restart: the store reopened, a new worker; the shop is back.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openStore(t, path, c, endpoint)
	defer db.Close()
	sh.answer(http.StatusOK)
	sh.up()
	c.Set(next)
	if next, err = newWorker(t, db, c).RunOnce(ctx); err != nil || !next.IsZero() {
		t.Fatalf("RunOnce = %v, %v; want nothing left", next, err)
	}
	got, empty := sh.received()
	if empty != 0 {
		t.Fatalf("%d empty forwards", empty)
	}
	if len(got) != 3 {
		t.Fatalf("shop got %d pushes answered 200, want 3 (each once)", len(got))
	}
	// In order per key: K1's first push before its second.
	pos := map[string]int{}
	for i, b := range got {
		pos[string(b)] = i
	}
	for _, b := range bodies {
		if _, ok := pos[string(b)]; !ok {
			t.Fatalf("shop never got %s", b)
		}
	}
	if pos[string(bodies[0])] > pos[string(bodies[1])] {
		t.Fatal("K1's second push reached the shop before its first")
	}
	all, err := db.Deliveries(ctx, store.DeliveryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range all {
		if d.State != store.DeliveryDelivered {
			t.Fatalf("delivery %d is %s", d.ID, d.State)
		}
	}
	first := all[len(all)-1] // K1's first push: 500, refused, 200
	if len(first.Attempts) != 3 || first.Attempts[0].Status != 500 || first.Attempts[1].Error == "" || first.Attempts[2].Status != 200 {
		t.Fatalf("attempts of K1's first push = %+v", first.Attempts)
	}
	if ex := first.Attempts[0].Excerpt; ex == "" || containsControl(ex) {
		t.Fatalf("excerpt %q: want the answer, inert", ex)
	}
	if !first.Attempts[1].At.Equal(t0.Add(DefaultSchedule[0])) {
		t.Fatalf("second attempt at %v", first.Attempts[1].At)
	}
}

func containsControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// A delivery that fails every step of the schedule is given up (failed)
// and no longer holds back the next push for its key; a schedule with a
// step that is not positive is refused.
func TestScheduleRunsOut(t *testing.T) {
	c := &clock{now: t0}
	db := openStore(t, filepath.Join(t.TempDir(), "listen.db"), c, "http://shop.test/push")
	defer db.Close()
	ctx := context.Background()
	for i := range 2 {
		p, b := push(t, "K1", "INV", []int{api.StatusPendingProcessing, api.StatusSuccess}[i], t0.Add(time.Duration(i)*time.Second))
		if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
			t.Fatal(err)
		}
	}
	var sent []uint64
	var cur uint64
	send := func(_ context.Context, _ string, body []byte) pushrelay.Answer {
		sent = append(sent, cur)
		return pushrelay.Answer{Status: 503}
	}
	steps := []time.Duration{time.Second, time.Minute}
	w, err := New(Config{Store: db, Send: send, Now: c.Now, Schedule: steps,
		Report: func(d store.Delivery, _ store.Attempt, _ store.AttemptOutcome) { cur = d.ID }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at       time.Time
		wantNext time.Time
	}{
		{t0, t0.Add(time.Second)},
		{t0.Add(time.Second), t0.Add(time.Second + time.Minute)},
		// the third attempt of delivery 1 is the last: given up, delivery 2 goes at once (and fails)
		{t0.Add(time.Second + time.Minute), t0.Add(2*time.Second + time.Minute)},
	}
	for i, tt := range tests {
		c.Set(tt.at)
		next, err := w.RunOnce(ctx)
		if err != nil || !next.Equal(tt.wantNext) {
			t.Fatalf("step %d: next = %v, %v; want %v", i, next, err, tt.wantNext)
		}
	}
	ds, err := db.Deliveries(ctx, store.DeliveryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if ds[1].State != store.DeliveryFailed || len(ds[1].Attempts) != 3 || ds[0].State != store.DeliveryPending || len(ds[0].Attempts) != 1 {
		t.Fatalf("deliveries = %+v / %+v", ds[1], ds[0])
	}
	if _, err := New(Config{Store: db, Send: send, Schedule: []time.Duration{0}}); err == nil {
		t.Fatal("a zero step: no error")
	}
}

// Run sends what is recorded when kicked, without waiting for a timer.
func TestRunKicked(t *testing.T) {
	c := &clock{now: t0}
	db := openStore(t, filepath.Join(t.TempDir(), "listen.db"), c, "http://shop.test/push")
	defer db.Close()
	got := make(chan []byte, 1)
	w, err := New(Config{Store: db, Now: c.Now, Send: func(_ context.Context, _ string, b []byte) pushrelay.Answer {
		got <- b
		return pushrelay.Answer{Status: 200}
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	never := func(time.Duration) Timer { return stopped{} } // only a kick wakes it
	go func() { defer close(done); w.Run(ctx, never) }()
	p, b := push(t, "K1", "INV", api.StatusSuccess, t0)
	if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
		t.Fatal(err)
	}
	w.Kick()
	select {
	case sent := <-got:
		if string(sent) != string(b) {
			t.Fatalf("sent %s", sent)
		}
	case <-time.After(time.Minute): // only a stuck test waits this long
		t.Fatal("not sent after a kick")
	}
	cancel()
	<-done
}

type stopped struct{}

func (stopped) C() <-chan time.Time { return nil }
func (stopped) Stop() bool          { return false }

// Parallel attempts run at once for a batch of different keys, never
// more, and each delivery is sent exactly once.
func TestParallelSendersShareTheBatch(t *testing.T) {
	for _, parallel := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(parallel), func(t *testing.T) {
			c := &clock{now: t0}
			db := openStore(t, filepath.Join(t.TempDir(), "listen.db"), c, "http://shop.test/push")
			defer db.Close()
			ctx := context.Background()
			const n = 10
			for i := range n {
				p, b := push(t, fmt.Sprintf("K%02d", i), "INV", api.StatusSuccess, t0)
				if _, err := db.ApplyPush(ctx, store.PushRecord{Body: b, Signature: store.SignatureValid}, p); err != nil {
					t.Fatal(err)
				}
			}
			var mu sync.Mutex
			inFlight, most := 0, 0
			sent := map[string]int{}
			full := make(chan struct{}) // closed once parallel attempts are in flight together
			w, err := New(Config{Store: db, Now: c.Now, Parallel: parallel, Send: func(_ context.Context, _ string, b []byte) pushrelay.Answer {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				sent[string(b)]++
				if inFlight == parallel {
					select {
					case <-full:
					default:
						close(full)
					}
				}
				mu.Unlock()
				select {
				case <-full:
				case <-time.After(time.Minute): // only a stuck test waits this long
					t.Errorf("never %d attempts in flight together", parallel)
				}
				mu.Lock()
				inFlight--
				mu.Unlock()
				return pushrelay.Answer{Status: 200}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if most != parallel || len(sent) != n {
				t.Fatalf("at most %d in flight (want %d), %d pushes sent (want %d)", most, parallel, len(sent), n)
			}
			for b, k := range sent {
				if k != 1 {
					t.Errorf("sent %d times: %s", k, b)
				}
			}
		})
	}
}
