package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/store"
)

// startServe runs `paydesk serve` in this process until the test ends (or
// stop is called) and returns its stderr once the banner is printed.
func startServe(t *testing.T, env map[string]string, args ...string) (stderr *lockedBuffer, stop func()) {
	t.Helper()
	stderr = &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: io.Discard, Stderr: stderr, Getenv: func(k string) string { return env[k] }}, append([]string{"serve"}, args...))
	}()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve stopped with exit %d: %s", code, stderr.String())
		}
	}
	t.Cleanup(stop)
	waitFor(t, "serve's banner", func() bool {
		select {
		case code := <-done:
			once = true // ended: nothing left to stop
			t.Fatalf("serve ended with exit %d: %s", code, stderr.String())
		default:
		}
		return strings.Contains(stderr.String(), "Ctrl-C stops it.")
	})
	return stderr, stop
}

// forwardedOnce waits until every push the store of env holds is delivered
// (asked through the owner, as any command on this machine would), then
// checks that the shop got each exactly once, after one attempt, never an
// empty body. It returns how many.
func forwardedOnce(t *testing.T, env map[string]string, shop *outboxShop) int {
	t.Helper()
	ctx := context.Background()
	var pushes int
	var ds []deliveryJSON
	waitFor(t, "every push delivered to the shop", func() bool {
		code, out, errs := runEnv(t, ctx, env, nil, false, "pushes", "--json", "--limit", "0")
		if code != 0 {
			t.Fatalf("pushes: exit %d %s", code, errs)
		}
		pushes = 0
		for _, p := range decodeJSON[[]pushJSON](t, out) {
			if !p.Rejected {
				pushes++
			}
		}
		code, out, errs = runEnv(t, ctx, env, nil, false, "deliveries", "--json", "--limit", "0")
		if code != 0 {
			t.Fatalf("deliveries: exit %d %s", code, errs)
		}
		ds = decodeJSON[[]deliveryJSON](t, out)
		if pushes == 0 || len(ds) != pushes {
			return false
		}
		for _, d := range ds {
			if d.State != "delivered" {
				return false
			}
		}
		return true
	})
	for _, d := range ds {
		if len(d.Attempts) != 1 {
			t.Errorf("delivery %d of push %d: %d attempts, want 1", d.ID, d.Push, len(d.Attempts))
		}
	}
	_, got, empty := shop.counts()
	if empty != 0 {
		t.Errorf("%d empty forwards", empty)
	}
	seen := map[string]int{}
	for _, b := range got {
		seen[string(b)]++
	}
	for b, n := range seen {
		if n != 1 {
			t.Errorf("the shop got a push %d times: %.120s", n, b)
		}
	}
	if len(got) != pushes {
		t.Errorf("the shop got %d pushes, the store holds %d", len(got), pushes)
	}
	return pushes
}

// TestServeForwardsPushes: `paydesk serve` with shop endpoints — the
// flag, or forward-to in the config file — delivers every push it
// receives to the shop, once, from its outbox, as paydesk listen does.
func TestServeForwardsPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve and the embedded sandbox")
	}
	for _, how := range []string{"flag", "config"} {
		t.Run(how, func(t *testing.T) {
			shop := &outboxShop{addr: "127.0.0.1:0"}
			shop.up(t, http.StatusOK)
			defer shop.down()
			endpoint := "http://" + shop.addr + "/push"
			dir := shortTemp(t)
			env := cliEnv(dir)
			env["XDG_RUNTIME_DIR"] = shortTemp(t)
			args := []string{"--listen", "127.0.0.1:0"}
			if how == "flag" {
				args = append(args, "--forward-to", endpoint)
			} else {
				if err := os.MkdirAll(filepath.Join(dir, "paydesk"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "paydesk", "config.toml"), []byte("forward-to = [\""+endpoint+"\"]\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			stderr, stop := startServe(t, env, args...)
			if want := "forwarding to:  " + endpoint; !strings.Contains(stderr.String(), want) {
				t.Errorf("the banner does not say %q:\n%s", want, stderr.String())
			}
			code, out, errs := runEnv(t, context.Background(), env, nil, false, "test-reservation", "--approve", "--json")
			if code != 0 {
				t.Fatalf("test-reservation through serve: exit %d %s %s", code, out, errs)
			}
			n := forwardedOnce(t, env, shop)
			stop()
			if _, got, _ := shop.counts(); len(got) != n {
				t.Errorf("after the stop the shop has %d pushes, want %d", len(got), n)
			}
		})
	}
}

// TestConsoleForwardsPushes: the console's process (the runtime it starts)
// delivers the pushes it receives to the shop as serve does; commands run
// through it (its socket) to make a push and to look.
func TestConsoleForwardsPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the console's runtime and the embedded sandbox")
	}
	shop := &outboxShop{addr: "127.0.0.1:0"}
	shop.up(t, http.StatusOK)
	defer shop.down()
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["XDG_RUNTIME_DIR"] = shortTemp(t)
	set, err := parseSettings(t, env, "--listen", "127.0.0.1:0", "--forward-to", "http://"+shop.addr+"/push")
	if err != nil {
		t.Fatal(err)
	}
	set.console = true // as runConsole sets it
	con, err := startConsole(context.Background(), set, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	defer con.close()
	if con.hub == nil {
		t.Fatal("the console serves no socket")
	}
	code, out, errs := runEnv(t, context.Background(), env, nil, false, "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation through the console: exit %d %s %s", code, out, errs)
	}
	forwardedOnce(t, env, shop)
	con.close()
	logText, err := os.ReadFile(filepath.Join(dir, "paydesk", "paydesk.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`forward #\d+ \S+ -> http://` + regexp.QuoteMeta(shop.addr) + `/push: 200 OK in \S+ \(delivered\)`).Match(logText) {
		t.Errorf("paydesk.log has no delivered attempt:\n%s", bytes.TrimSpace(logText))
	}
}

// TestSharedDatabaseForwardsOnce: paydesk listen (a process of its own,
// given the shop's endpoint, which the database then keeps) and paydesk
// serve on one PostgreSQL database (given none: it forwards to the
// database's), both receiving pushes: the shop gets every push once —
// one worker sends at a time (the store's outbox lease), the other waits.
// Then listen is killed (kill -9) while it holds the lease: serve's worker
// takes over and delivers what serve receives after, once.
func TestSharedDatabaseForwardsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	dsn := pgtest.Fresh(t)
	shop := &outboxShop{addr: "127.0.0.1:0"}
	shop.up(t, http.StatusOK)
	defer shop.down()
	endpoint := "http://" + shop.addr + "/push"
	creds := api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}

	// listen first: its worker takes the lease, serve's waits for it.
	cmd, listenAddr, listenOut := startListen(t, []string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", dsn, "--forward-to", endpoint})
	defer func() {
		if cmd.ProcessState == nil {
			kill9(t, cmd)
		}
	}()
	waitFor(t, "listen's banner", func() bool { return strings.Contains(listenOut.String(), "socket:") })
	dir := shortTemp(t)
	env := cliEnv(dir)
	env["PAYDESK_SECRET_KEY"] = "s3cret"
	stderr, _ := startServe(t, env, "--db", dsn, "--gateway", "http://127.0.0.1:9", "--mode", "test", "--website-key", "WK",
		"--listen", "127.0.0.1:0")
	if !strings.Contains(stderr.String(), "forwarding to:  "+endpoint) {
		t.Errorf("serve given no forward-to does not forward to the database's endpoint:\n%s", stderr.String())
	}
	m := regexp.MustCompile(`push listener:  (http://\S+/push)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("serve names no push listener:\n%s", stderr.String())
	}
	serveURL := m[1]

	send := func(url string, i int) {
		t.Helper()
		at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
		p := &api.Push{Transaction: &api.TransactionPush{Key: fmt.Sprintf("K%d", i%3), Invoice: fmt.Sprintf("INV-%d", i), ServiceCode: api.ServiceDeferred,
			Status: api.Status{Code: api.Code{Code: api.StatusPendingProcessing}, DateTime: api.NewDateTime(at, true)}, IsTest: true,
			Currency: "EUR", AmountDebit: api.NewAmount(decimal.RequireFromString("10")), TransactionType: api.TypeDeferredPay, MutationType: api.MutationDeferred}}
		body, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", api.Sign(creds, http.MethodPost, api.HostPath(url), body, api.NewNonce(), time.Now().Unix()).String())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("push %d to %s: HTTP %d", i, url, resp.StatusCode)
		}
	}
	db, err := store.Open(dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	delivered := func(want int) {
		t.Helper()
		var ds []*store.Delivery
		waitFor(t, fmt.Sprintf("%d pushes delivered", want), func() bool {
			if ds, err = db.Deliveries(context.Background(), store.DeliveryQuery{}); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, d := range ds {
				if d.State == store.DeliveryDelivered {
					n++
				}
			}
			return n == want
		})
		if len(ds) != want {
			t.Errorf("%d deliveries recorded for %d pushes (one endpoint)", len(ds), want)
		}
		for _, d := range ds {
			if len(d.Attempts) != 1 {
				t.Errorf("delivery %d: %d attempts, want 1", d.ID, len(d.Attempts))
			}
		}
		_, got, empty := shop.counts()
		seen := map[string]int{}
		for _, b := range got {
			seen[string(b)]++
		}
		if len(got) != want || len(seen) != want || empty != 0 {
			t.Fatalf("the shop got %d pushes (%d different, %d empty), want %d once each", len(got), len(seen), empty, want)
		}
	}
	const each = 20
	for i := range each {
		send("http://"+listenAddr+"/push", 2*i)
		send(serveURL, 2*i+1)
	}
	delivered(2 * each)

	kill9(t, cmd) // its session ends, and with it the lease
	for i := range each {
		send(serveURL, 2*each+i)
	}
	delivered(3 * each)
}
