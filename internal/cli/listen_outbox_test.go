package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

const outboxChildEnv = "PAYDESK_OUTBOX_CHILD" // the listen arguments, joined by "\x1f"

// TestOutboxListenChild is the `paydesk listen` process that
// TestOutboxSurvivesKill kills; it does nothing unless started by it.
func TestOutboxListenChild(t *testing.T) {
	spec := os.Getenv(outboxChildEnv)
	if spec == "" {
		t.Skip("runs only as a child of TestOutboxSurvivesKill")
	}
	env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
	os.Exit(Main(context.Background(), IO{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(k string) string { return env[k] }},
		strings.Split(spec, "\x1f")))
}

// outboxShop is a shop on a fixed address that can answer 500, be down
// (connections refused) and come back; it keeps the bodies it answered
// 200, in the order they came.
type outboxShop struct {
	mu     sync.Mutex
	status int
	seen   int // requests, whatever the answer
	got    [][]byte
	empty  int
	srv    *http.Server
	addr   string
}

func (s *outboxShop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen++
	if len(body) == 0 {
		s.empty++
	}
	w.WriteHeader(s.status)
	if s.status == http.StatusOK {
		s.got = append(s.got, body)
	}
}

func (s *outboxShop) up(t *testing.T, status int) {
	t.Helper()
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s}
	go func() { _ = s.srv.Serve(ln) }()
}

func (s *outboxShop) down() { _ = s.srv.Close() }

func (s *outboxShop) counts() (seen int, got [][]byte, empty int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen, append([][]byte(nil), s.got...), s.empty
}

// startListen starts `paydesk listen` in a child process and returns it
// with the address it listens on.
func startListen(t *testing.T, args []string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutboxListenChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), outboxChildEnv+"="+strings.Join(args, "\x1f"))
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`listening on http://(\S+)`)
	for deadline := time.Now().Add(stuckAfter); ; time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return cmd, m[1], out
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no address printed: %s", out.String())
		}
	}
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// waitFor polls cond until it holds; the deadline only ends a stuck test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(stuckAfter); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// The test: a shop that answers 500 first, then refuses
// connections, gets every push exactly once per delivery and in order per
// key, with a kill -9 of paydesk listen in between (after the gateway had
// its 200s); never an empty forward, never an order.
func TestOutboxSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills processes")
	}
	shop := &outboxShop{addr: "127.0.0.1:0"}
	shop.up(t, http.StatusInternalServerError)
	dbPath := filepath.Join(t.TempDir(), "listen.db")
	args := []string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", dbPath,
		"--forward-to", "http://" + shop.addr + "/push", "--forward-retries", strings.TrimSuffix(strings.Repeat("20ms,", 200), ",")}
	cmd, addr, out := startListen(t, args)
	creds := api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}
	send := func(url string, body []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", api.Sign(creds, http.MethodPost, api.HostPath(url), body, api.NewNonce(), time.Now().Unix()).String())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d", url, resp.StatusCode)
		}
	}
	var bodies [][]byte
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for i, k := range []string{"K1", "K1", "K2", "K1"} {
		code := []int{api.StatusPendingProcessing, api.StatusPendingInput, api.StatusSuccess, api.StatusSuccess}[i]
		p := &api.Push{Transaction: &api.TransactionPush{Key: k, Invoice: "INV-" + k, ServiceCode: api.ServiceDeferred,
			Status: api.Status{Code: api.Code{Code: code}, DateTime: api.NewDateTime(at.Add(time.Duration(i)*time.Minute), true)}, IsTest: true,
			Currency: "EUR", AmountDebit: api.NewAmount(decimal.RequireFromString("10")), TransactionType: api.TypeDeferredPay, MutationType: api.MutationDeferred}}
		b, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		send("http://"+addr+"/push", b)
		bodies = append(bodies, b)
	}
	waitFor(t, "the shop to be tried", func() bool { s, _, _ := shop.counts(); return s >= 2 })
	shop.down() // now refused
	waitFor(t, "a refused attempt recorded", func() bool { return strings.Contains(out.String(), "no answer") })
	kill9(t, cmd)

	shop.up(t, http.StatusOK)
	defer shop.down()
	cmd, _, out = startListen(t, args)
	// Delivered is the shop's 200 recorded: a kill between the two would
	// send that push again (at least once), which this test is not about.
	waitFor(t, "every push delivered", func() bool { return strings.Count(out.String(), "(delivered)") >= len(bodies) })
	kill9(t, cmd)

	_, got, empty := shop.counts()
	if empty != 0 {
		t.Errorf("%d empty forwards", empty)
	}
	if len(got) != len(bodies) {
		t.Fatalf("the shop got %d pushes answered 200, want %d (each once)", len(got), len(bodies))
	}
	var k1 []string
	for _, b := range got {
		if bytes.Contains(b, []byte(`"Key":"K1"`)) {
			k1 = append(k1, string(b))
		}
	}
	want := []string{string(bodies[0]), string(bodies[1]), string(bodies[3])}
	if fmt.Sprint(k1) != fmt.Sprint(want) {
		t.Errorf("K1's pushes reached the shop in another order:\n%s\nwant\n%s", k1, want)
	}
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ds, err := db.Deliveries(context.Background(), store.DeliveryQuery{})
	if err != nil || len(ds) != len(bodies) {
		t.Fatalf("deliveries: %d, %v", len(ds), err)
	}
	for _, d := range ds {
		if d.State != store.DeliveryDelivered || len(d.Attempts) < 1 {
			t.Errorf("delivery %d: %s after %d attempts", d.ID, d.State, len(d.Attempts))
		}
	}
}
