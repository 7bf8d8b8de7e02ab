package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/pushlistener"
	"paydesk/store"
)

func TestParseChaos(t *testing.T) {
	c, err := ParseChaos("seed=7, dup=0.2,reorder=20%,drop=0.1,delay=50ms/0.3,slow=2s,5xx=5%,492=0.05")
	if err != nil {
		t.Fatal(err)
	}
	want := Chaos{Seed: 7, Duplicate: 0.2, Reorder: 0.2, Drop: 0.1, Delay: 50 * time.Millisecond, DelayRate: 0.3,
		Slow: 2 * time.Second, SlowRate: 1, Fail5xx: 0.05, Fail492: 0.05}
	if *c != want {
		t.Fatalf("got %+v, want %+v", *c, want)
	}
	again, err := ParseChaos(c.String())
	if err != nil || *again != want {
		t.Fatalf("String does not round-trip: %q → %+v %v", c.String(), again, err)
	}
	for _, bad := range []string{"dup=2", "drop=x", "nope=1", "delay=forever", "seed=-1", "reorder"} {
		if _, err := ParseChaos(bad); err == nil {
			t.Errorf("ParseChaos(%q) accepted", bad)
		}
	}
}

// delivery is one push as a receiver got it.
type delivery struct{ key, kind, sum string }

// recorder answers every push 200 and records the sequence, optionally
// handing it on to another handler (a push listener).
type recorder struct {
	mu   sync.Mutex
	seq  []delivery
	next http.Handler
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p, err := api.DecodePush(body)
	if err != nil {
		http.Error(w, "bad push", http.StatusBadRequest)
		return
	}
	sum := sha256.Sum256(body)
	rc.mu.Lock()
	rc.seq = append(rc.seq, delivery{p.Key(), p.Kind(), hex.EncodeToString(sum[:8])})
	rc.mu.Unlock()
	if rc.next != nil {
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		rc.next.ServeHTTP(w, r)
	}
}

func (rc *recorder) sequence() []delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]delivery(nil), rc.seq...)
}

// chaosRun drives a fixed script of requests against a sandbox with the
// given chaos, then lets it deliver everything to h, and returns the
// sandbox's emission order (the plan without chaos).
func chaosRun(t *testing.T, chaos *Chaos, now time.Time, h http.Handler) {
	t.Helper()
	push := httptest.NewServer(h)
	t.Cleanup(push.Close)
	clock := func() time.Time { return now }
	sb, err := New(Config{Credentials: []api.Credentials{testCreds}, PushURL: push.URL + "/push", Seed: 99, Now: clock,
		RetryBase: 5 * time.Millisecond, Chaos: chaos})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(sb)
	t.Cleanup(gw.Close)
	cl, err := api.NewClient(api.Config{BaseURL: gw.URL, Credentials: testCreds, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	must := func(r *api.Response, err error) *api.Response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The whole script runs before the sender starts, so the plan depends
	// on the seed and the requests only, not on timing.
	for i := 0; i < 3; i++ {
		r := must(cl.Send(ctx, reserveOp(fmt.Sprintf("INV-CH-%d", i), "Jansen")))
		if err := sb.Approve(ctx, r.Key); err != nil {
			t.Fatal(err)
		}
		st := must(cl.DataRequestStatus(ctx, r.Key))
		number := st.Param(api.PReservationNumber)
		switch i {
		case 0: // captured in two parts, the first refunded in part
			c1 := must(cl.Send(ctx, api.Capture{Currency: "EUR", Invoice: "INV-CH-0", ReservationNumber: number, Amount: dec("20"),
				Lines: []api.CaptureLine{{ArticleNumber: "A1", Quantity: 2}}}))
			must(cl.Send(ctx, api.Capture{Currency: "EUR", Invoice: "INV-CH-0", ReservationNumber: number, Amount: dec("10.45")}))
			must(cl.Send(ctx, api.Refund{Currency: "EUR", Invoice: "INV-CH-0", OriginalTransactionKey: c1.Key, Amount: dec("10")}))
		case 1: // cancelled
			must(cl.Send(ctx, api.CancelReservation{Currency: "EUR", Invoice: "INV-CH-1", ReservationNumber: number}))
		case 2: // updated, then captured in full
			must(cl.Send(ctx, api.UpdateReservation{Currency: "EUR", Invoice: "INV-CH-2", ReservationNumber: number,
				Billing: api.Address{Email: "other@example.com"}}))
			must(cl.Send(ctx, api.Capture{Currency: "EUR", Invoice: "INV-CH-2", ReservationNumber: number, Amount: dec("30.45")}))
		}
	}
	g := must(cl.Send(ctx, api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-CH-GC", Amount: dec("25"), Card: testCard("1000")}))
	must(cl.Send(ctx, api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-CH-GC", Amount: dec("15"),
		Card: testCard("2000"), GroupTransaction: g.RequiredAction.PayRemainderDetails.GroupTransaction}))

	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(runCtx) }()
	waitFor(t, "every push delivered", func() bool { return sb.PendingPushes() == 0 && (sb.chaos == nil || !sb.chaosBusy()) })
	cancel()
	<-done
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
}

func (s *Sandbox) chaosBusy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chaos.busy || len(s.chaos.fifo) > 0 || len(s.chaos.held) > 0
}

var testChaos = Chaos{Seed: 42, Duplicate: 0.3, Reorder: 0.3, Drop: 0.2}

// The same seed and the same requests give the same deliveries, with
// duplicates and pushes out of order among them.
func TestChaosIsDeterministic(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	var plain, a, b recorder
	chaosRun(t, nil, now, &plain)
	c := testChaos
	chaosRun(t, &c, now, &a)
	c = testChaos
	chaosRun(t, &c, now, &b)
	sa, sb, sp := a.sequence(), b.sequence(), plain.sequence()
	if fmt.Sprint(sa) != fmt.Sprint(sb) {
		t.Fatalf("same seed, different deliveries:\n%v\n%v", sa, sb)
	}
	seen := map[delivery]int{}
	for _, d := range sa {
		seen[d]++
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	if dups == 0 || len(seen) != len(sp) {
		t.Fatalf("%d deliveries of %d pushes (%d duplicated); without chaos %d pushes", len(sa), len(seen), dups, len(sp))
	}
	firsts := []delivery{}
	for _, d := range sa {
		if seen[d] > 0 {
			firsts = append(firsts, d)
			seen[d] = 0
		}
	}
	if fmt.Sprint(firsts) == fmt.Sprint(sp) {
		t.Fatal("chaos delivered every push in order")
	}
	c = Chaos{Seed: 43, Duplicate: 0.3, Reorder: 0.3, Drop: 0.2}
	var other recorder
	chaosRun(t, &c, now, &other)
	if fmt.Sprint(other.sequence()) == fmt.Sprint(sa) {
		t.Fatal("another seed gave the same deliveries")
	}
	t.Logf("%d pushes, %d deliveries with chaos", len(sp), len(sa))
}

// paydesk's own push listener ends in the same state whether the pushes
// came in order and once, or duplicated and out of order.
func TestListenerSameStateUnderChaos(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	state := func(chaos *Chaos) string {
		db, err := store.Open(filepath.Join(t.TempDir(), "paydesk.db"), store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ln, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(testCreds)})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{next: ln}
		chaosRun(t, chaos, now, rec)
		return storeState(t, db)
	}
	plain := state(nil)
	c := testChaos
	chaotic := state(&c)
	if plain != chaotic {
		t.Fatalf("the listener's state differs under chaos\nwithout:\n%s\nwith:\n%s", plain, chaotic)
	}
	if strings.Count(plain, "\n") < 8 {
		t.Fatalf("too little state to compare:\n%s", plain)
	}
}

// storeState renders what the cache knows, in a stable order.
func storeState(t *testing.T, db *store.DB) string {
	t.Helper()
	var lines []string
	txs, err := db.Transactions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range txs {
		lines = append(lines, fmt.Sprintf("tx %s %s %s status=%d amount=%s refunded=%s", x.Key, x.Kind, x.Invoice,
			x.Status.Code, x.Amount.String(), x.Refunded.String()))
	}
	sums, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		r, err := db.Reservation(t.Context(), s.Key)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("res %s %s %s state=%s captured=%s cancelled=%v", r.Key, r.ReservationNumber, r.Invoice,
			r.State(), r.CapturedAmount.String(), r.Cancelled))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// Request chaos: the same seed answers the same requests with the same
// 503s and 492s, and neither creates anything.
func TestChaosRequests(t *testing.T) {
	outcomes := func() string {
		e := newEnv(t, func(c *Config) {
			c.Chaos = &Chaos{Seed: 5, Fail5xx: 0.3, Fail492: 0.3, Slow: time.Millisecond, SlowRate: 0.5}
		})
		var out []string
		for i := 0; i < 20; i++ {
			r, err := e.giftPay("voucherb", testCard("100"), "1")
			switch {
			case api.IsOutcomeUnknown(err):
				out = append(out, "503")
			case err != nil && r != nil && r.Status.Code.Code == api.StatusTechnicalFailure:
				if _, err := e.client.Status(context.Background(), r.Key); err == nil {
					t.Fatalf("a 492 created %s", r.Key)
				}
				out = append(out, "492")
			case err == nil:
				out = append(out, "190")
			default:
				t.Fatalf("request %d: %v", i, err)
			}
		}
		return strings.Join(out, " ")
	}
	a, b := outcomes(), outcomes()
	if a != b || !strings.Contains(a, "503") || !strings.Contains(a, "492") || !strings.Contains(a, "190") {
		t.Fatalf("outcomes\n%s\n%s", a, b)
	}
}

// With chaos on, a push the receiver keeps failing is tried again and
// again, and given up after the usual number of tries.
func TestChaosRetriesAndGivesUp(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Chaos = &Chaos{Seed: 1} })
	e.rc.setDown(true)
	resp, err := e.giftPay("voucherb", testCard("1000"), "5")
	if err != nil {
		t.Fatal(err)
	}
	// Given up, the push is dead and out of the outbox and of chaos's
	// hands: no later try can come.
	waitFor(t, "the push to give up", func() bool {
		e.sb.mu.Lock()
		dead := len(e.sb.dead) == 1
		e.sb.mu.Unlock()
		return dead && !e.sb.chaosBusy()
	})
	if n := e.rc.attemptCount(); n != maxTries {
		t.Fatalf("%d attempts, want %d", n, maxTries)
	}
	e.rc.setDown(false)
	if err := e.sb.Resend(resp.Key); err != nil {
		t.Fatal(err)
	}
	e.rc.nextFor(resp.Key)
}

// Chaos does not change the push retry schedule: a push the shop did not
// take waits for the backoff (here an hour), not for the next push or
// chaosHoldMax, and the later pushes go past it.
func TestChaosKeepsTheRetrySchedule(t *testing.T) {
	var logMu sync.Mutex
	var logs []string
	e := newEnv(t, func(c *Config) {
		c.Chaos = &Chaos{Seed: 1}
		c.RetryBase = time.Hour
		c.Logf = func(format string, args ...any) {
			logMu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			logMu.Unlock()
		}
	})
	e.rc.mu.Lock()
	e.rc.failNext = 1
	e.rc.mu.Unlock()
	first, err := e.giftPay("voucherb", testCard("1000"), "5")
	if err != nil {
		t.Fatal(err)
	}
	retryLogged := func() bool {
		logMu.Lock()
		defer logMu.Unlock()
		for _, l := range logs {
			if strings.Contains(l, first.Key) && strings.Contains(l, "try 2 of 10 in 1h0m0s") {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(2 * time.Minute); !retryLogged(); time.Sleep(5 * time.Millisecond) { // the deadline only ends a stuck test
		if time.Now().After(deadline) {
			logMu.Lock()
			t.Fatalf("no retry in an hour logged for %s: %q", first.Key, logs)
		}
	}
	var keys []string
	for _, amount := range []string{"6", "7"} {
		r, err := e.giftPay("voucherb", testCard("1000"), amount)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, r.Key)
	}
	for _, want := range keys {
		if got := e.rc.next().push.Key(); got != want {
			t.Fatalf("push of %s delivered, want %s (the failed %s waits an hour)", got, want, first.Key)
		}
	}
}
