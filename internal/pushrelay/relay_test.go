package pushrelay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/pushload"
	"paydesk/pushlistener"
	"paydesk/store"
)

var creds = api.Credentials{WebsiteKey: "RELAYKEY", SecretKey: "relay-secret-not-real"}

// shop is a developer's shop: it verifies each push over its own URL, as
// the family's SDKs do, and answers with the next status of its script.
type shop struct {
	srv     *httptest.Server
	mu      sync.Mutex
	answers []int
	got     []string // key of each verified push
	bad     []string
}

func newShop(t *testing.T, answers ...int) *shop {
	sh := &shop{answers: answers}
	v := api.VerifierFor(creds)
	sh.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sh.mu.Lock()
		defer sh.mu.Unlock()
		if _, err := v.Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.Path, body); err != nil {
			sh.bad = append(sh.bad, err.Error())
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		p, err := api.DecodePush(body)
		if err != nil {
			http.Error(w, "bad push", http.StatusBadRequest)
			return
		}
		sh.got = append(sh.got, p.Key())
		code := http.StatusOK
		if len(sh.answers) > 0 {
			code, sh.answers = sh.answers[0], sh.answers[1:]
		}
		w.WriteHeader(code)
		if code == http.StatusInternalServerError {
			io.WriteString(w, "order 42: database is\nlocked \x1b[31m")
		} else {
			io.WriteString(w, "ok")
		}
	}))
	t.Cleanup(sh.srv.Close)
	return sh
}

func (sh *shop) url() string { return sh.srv.URL + "/buckaroo/push" }

// Every push the listener verified goes on to the shop, re-signed for the
// shop's URL; the shop's 500 and, for the gateway's next delivery, its 200
// are both shown beside the push.
func TestForwardShowsEveryAnswer(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	sh := newShop(t, http.StatusInternalServerError, http.StatusOK)
	var mu sync.Mutex
	var answers []Answer
	answered := make(chan struct{}, 10)
	fwd, err := NewForwarder(Sender{Credentials: creds}, sh.url(), func(a Answer) {
		mu.Lock()
		answers = append(answers, a)
		mu.Unlock()
		answered <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(creds), Observe: fwd.Observe})
	if err != nil {
		t.Fatal(err)
	}
	lsrv := httptest.NewServer(ln)
	t.Cleanup(lsrv.Close)

	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, PushURL: lsrv.URL + "/push", Seed: 3, RetryBase: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(sb)
	t.Cleanup(gw.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; sb.Close() })
	client, err := api.NewClient(api.Config{BaseURL: gw.URL, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Send(context.Background(), api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-FWD",
		Amount: decimal.NewFromInt(5), Card: api.Card{Provider: api.ProviderB, Number: api.TestCardNumber, PIN: "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, answered)
	// The developer has the gateway send it again (the shop failed it).
	if err := sb.Resend(resp.Key); err != nil {
		t.Fatal(err)
	}
	waitAnswer(t, answered)
	fwd.Close()

	mu.Lock()
	defer mu.Unlock()
	first, second := answers[0], answers[1]
	if first.Key != resp.Key || first.Status != 500 || first.OK() || second.Key != resp.Key || !second.OK() {
		t.Fatalf("answers %+v, want 500 then 200 for %s", answers, resp.Key)
	}
	line := first.String()
	if !strings.Contains(line, resp.Key+" V238 -> 500 Internal Server Error in ") || !strings.Contains(line, "order 42: database is locked") ||
		strings.ContainsAny(line, "\x1b\n") {
		t.Fatalf("report line %q", line)
	}
	if !strings.Contains(second.String(), "-> 200 OK") {
		t.Fatalf("report line %q", second.String())
	}
	if len(sh.bad) > 0 || len(sh.got) != 2 {
		t.Fatalf("shop saw %v, refused %v", sh.got, sh.bad)
	}
}

// A saved push, stale for the family's five-minute window, is replayed
// with a fresh signature; a key is fetched from a standalone sandbox first.
func TestReplay(t *testing.T) {
	sh := newShop(t)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(rc.Close)
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, PushURL: rc.URL, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	gw := httptest.NewServer(sb)
	t.Cleanup(gw.Close)
	client, err := api.NewClient(api.Config{BaseURL: gw.URL, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Send(context.Background(), api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-RPL",
		Amount: decimal.NewFromInt(5), Card: api.Card{Provider: api.ProviderB, Number: api.TestCardNumber, PIN: "1000"}})
	if err != nil {
		t.Fatal(err)
	}

	bodies, err := FetchFromSandbox(context.Background(), gw.URL, creds, resp.Key, nil)
	if err != nil || len(bodies) != 1 {
		t.Fatalf("FetchFromSandbox: %d %v", len(bodies), err)
	}
	if _, err := FetchFromSandbox(context.Background(), gw.URL, api.Credentials{WebsiteKey: creds.WebsiteKey, SecretKey: "wrong"}, resp.Key, nil); err == nil {
		t.Fatal("fetched with a wrong secret")
	}
	path := filepath.Join(t.TempDir(), "push-1-V238.json")
	if err := os.WriteFile(path, bodies[0], 0o600); err != nil {
		t.Fatal(err)
	}
	body, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := Replay(context.Background(), &out, Sender{Credentials: creds}, sh.url(), [][]byte{body}); code != 0 {
		t.Fatalf("Replay: exit %d: %s (shop refused %v)", code, out.String(), sh.bad)
	}
	if !strings.Contains(out.String(), resp.Key+" V238 -> 200 OK") {
		t.Fatalf("Replay printed %q", out.String())
	}
	// Replayed as saved, the stale signature is refused: the point of
	// re-signing.
	req, _ := http.NewRequest(http.MethodPost, sh.url(), bytes.NewReader(body))
	req.Header.Set("Authorization", api.Sign(creds, http.MethodPost, api.HostPath(sh.url()), body, "n", time.Now().Add(-2*time.Hour).Unix()).String())
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("stale push: %d", r.StatusCode)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Fatal("LoadFile of a missing file")
	}
}

func TestExcerpt(t *testing.T) {
	for in, want := range map[string]string{
		"ok":                        "ok",
		"  a\n\n b\x1b[2J\u2028c  ": "a b [2J c",
		strings.Repeat("x", 200):    strings.Repeat("x", maxExcerpt) + "…",
		"\xff\xfe bad utf8":         "bad utf8",
	} {
		if got := excerpt([]byte(in)); got != want {
			t.Errorf("excerpt(%q) = %q, want %q", in, got, want)
		}
	}
}

// waitAnswer waits for the forwarder's next answer; the deadline only ends
// a stuck test.
func waitAnswer(t *testing.T, answered <-chan struct{}) {
	t.Helper()
	select {
	case <-answered:
	case <-time.After(2 * time.Minute):
		t.Fatal("no answer from the forwarder")
	}
}

func TestReplayArg(t *testing.T) {
	sh := newShop(t, http.StatusServiceUnavailable)
	var out, errs bytes.Buffer
	if code := ReplayArg(context.Background(), &out, &errs, Sender{Credentials: creds}, "ftp://x", "f", ""); code != 2 {
		t.Fatalf("bad --to: exit %d", code)
	}
	if code := ReplayArg(context.Background(), &out, &errs, Sender{Credentials: creds}, sh.url(), "NOKEY", ""); code != 2 ||
		!strings.Contains(errs.String(), "--from") {
		t.Fatalf("key without a gateway: exit %d %s", code, errs.String())
	}
	body := []byte(`{"Transaction":{"Key":"K1","TransactionType":"V238","Status":{"Code":{"Code":190}}}}`)
	path := filepath.Join(t.TempDir(), "push.json")
	if err := os.WriteFile(path, body, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := ReplayArg(context.Background(), &out, &errs, Sender{Credentials: creds}, sh.url(), path, ""); code != 1 ||
		!strings.Contains(out.String(), "K1 V238 -> 503") {
		t.Fatalf("file replay to a failing shop: exit %d %q", code, out.String())
	}
	var lines bytes.Buffer
	PrintTo(&lines)(Answer{Key: "K", Status: 200})
	if !strings.HasPrefix(lines.String(), "forward K -> 200 OK") {
		t.Fatalf("PrintTo: %q", lines.String())
	}
}

// TestForwarderCloseIsBounded: with a shop that never answers and pushes
// queued, Close returns once its grace has run out, reporting the push in
// flight and the ones it gave up on (they are stored; the listener's stop
// must not wait for the shop). The old Close forwarded the whole queue,
// each push up to the client's 10 s timeout.
func TestForwarderCloseIsBounded(t *testing.T) {
	hung := make(chan struct{})
	arrived := make(chan struct{}, 16)
	sh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer sh.Close()
	defer close(hung)
	var mu sync.Mutex
	var answers []Answer
	fwd, err := NewForwarder(Sender{Credentials: creds}, sh.URL+"/push", func(a Answer) {
		mu.Lock()
		answers = append(answers, a)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	fwd.CloseGrace = 100 * time.Millisecond
	for i := range 5 {
		body, err := pushload.GiftCardPush(i+1, 100).Encode()
		if err != nil {
			t.Fatal(err)
		}
		fwd.Forward(body)
	}
	<-arrived // the first push is in flight, the rest queued
	closed := make(chan struct{})
	go func() { fwd.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close still waiting for a shop that never answers after 30 s")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(answers) != 2 || !errors.Is(answers[0].Err, ErrStopped) || !errors.Is(answers[1].Err, ErrStopped) ||
		!strings.HasPrefix(answers[1].Key, "4 more") {
		t.Errorf("answers %v, want the push in flight abandoned and 4 more not forwarded", answers)
	}
	fwd.Forward([]byte(`{}`)) // after Close: nothing, no panic
}

// Only pushes go on to the shop: an order posted to the listener's intake
// is not a push (its event carries no push body), and an empty body is
// never signed and sent — the family's push verifiers throw on it.
func TestForwardsOnlyPushes(t *testing.T) {
	push, err := pushload.GiftCardPush(7, 500).Encode()
	if err != nil {
		t.Fatal(err)
	}
	valid := store.PushRecord{Signature: store.SignatureValid, Body: push}
	tests := []struct {
		name string
		ev   pushlistener.Event
		want int // requests the shop gets
	}{
		{"a verified push", pushlistener.Event{HTTPStatus: http.StatusOK, Record: valid}, 1},
		{"an order to the intake", pushlistener.Event{HTTPStatus: http.StatusOK, Record: store.PushRecord{Signature: store.SignatureValid},
			Order: &pushlistener.OrderEvent{Invoice: "INV-1", Outcome: "imported"}}, 0},
		{"an order event that carries a body", pushlistener.Event{HTTPStatus: http.StatusOK, Record: valid,
			Order: &pushlistener.OrderEvent{Invoice: "INV-1", Outcome: "imported"}}, 0},
		{"an empty body", pushlistener.Event{HTTPStatus: http.StatusOK, Record: store.PushRecord{Signature: store.SignatureValid}}, 0},
		{"a rejected push", pushlistener.Event{HTTPStatus: http.StatusUnauthorized, Record: store.PushRecord{Rejected: true, Body: push}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			got := 0
			sh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got++
				mu.Unlock()
			}))
			t.Cleanup(sh.Close)
			fwd, err := NewForwarder(Sender{Credentials: creds}, sh.URL+"/push", func(Answer) {})
			if err != nil {
				t.Fatal(err)
			}
			fwd.Observe(tt.ev)
			fwd.Close() // forwards what is queued first
			mu.Lock()
			defer mu.Unlock()
			if got != tt.want {
				t.Fatalf("the shop got %d requests, want %d", got, tt.want)
			}
		})
	}
}

// TestDeliverKeepsTheConnection: a shop whose answer is longer than the
// excerpt read of it, or answered with nothing at all, still gets every
// push on one kept connection (the outbox sends thousands a second; a new
// connection per push cost both sides). The transport may dial once more
// when a request races its predecessor's return to the pool: a few
// connections pass, one per push does not.
func TestDeliverKeepsTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer int // bytes of the shop's answer
	}{
		{"empty answer", 0},
		{"answer beyond the excerpt", 10 << 10},
		{"answer of 100 KiB", 100 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			conns := 0
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				_, _ = w.Write(bytes.Repeat([]byte("x"), tc.answer))
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					mu.Lock()
					conns++
					mu.Unlock()
				}
			}
			srv.Start()
			defer srv.Close()
			s := Sender{Credentials: creds, HTTP: NewHTTPClient(1)}
			body := []byte(`{"Transaction":{"Key":"K1"}}`)
			const n = 20
			for i := range n {
				if a := s.Deliver(context.Background(), srv.URL+"/push", body); !a.OK() || a.Key != "" {
					t.Fatalf("push %d: %+v", i, a)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if conns > 4 {
				t.Errorf("%d pushes took %d connections, want the one kept (a few at most)", n, conns)
			}
		})
	}
}

// TestNewHTTPClientKeepsEverySendersConnection: as many idle connections
// per host as senders, so that none is closed after its push.
func TestNewHTTPClientKeepsEverySendersConnection(t *testing.T) {
	for _, n := range []int{1, 4, 16} {
		tr, ok := NewHTTPClient(n).Transport.(*http.Transport)
		if !ok || tr.MaxIdleConnsPerHost < n || tr.DisableKeepAlives {
			t.Errorf("NewHTTPClient(%d): transport %T keeps %d idle a host", n, tr, tr.MaxIdleConnsPerHost)
		}
	}
}
