package pushlistener

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pushload"
	"paydesk/store"
)

var creds = api.Credentials{WebsiteKey: "testWebsiteKey", SecretKey: "testSecretKey"}

// giftCardPush is a gift card payment push with key number n.
func giftCardPush(n int, cents int64) *api.Push { return pushload.GiftCardPush(n, cents) }

func encode(t testing.TB, p *api.Push) []byte {
	t.Helper()
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signedPost builds a push request to url signed as the gateway signs it.
func signedPost(t testing.TB, url string, body []byte, c api.Credentials, ts int64) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", api.Sign(c, http.MethodPost, api.HostPath(url), body, api.NewNonce(), ts).String())
	return req
}

// openServer opens a cache in a temporary folder (closed when the test
// ends) and a listener on it that verifies with creds; cfg supplies the
// rest of its configuration.
func openServer(t testing.TB, opts store.Options, cfg Config) (*store.DB, *Server) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "listen.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	cfg.DB, cfg.Verifier = db, api.VerifierFor(creds)
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return db, srv
}

// startListener starts a listener on its own server (Serve: net/http
// behind the connection cap), or as a bare handler behind httptest's server
// (ServeHTTP) when viaNetHTTP is set, and returns its cache and push URL.
func startListener(t testing.TB, opts store.Options, observe func(Event), viaNetHTTP bool) (*store.DB, string) {
	t.Helper()
	db, srv := openServer(t, opts, Config{Observe: observe, Logf: t.Logf, RejectLines: 1000})
	if viaNetHTTP {
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		return db, hs.URL + "/push"
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return db, "http://" + addr.String() + "/push"
}

// TestListener posts good and bad pushes to the listener on its own server
// and as a bare handler: both must answer and store alike.
func TestListener(t *testing.T) {
	for _, viaNetHTTP := range []bool{false, true} {
		name := map[bool]string{false: "Serve", true: "handler"}[viaNetHTTP]
		t.Run(name, func(t *testing.T) { testListener(t, viaNetHTTP) })
	}
}

func testListener(t *testing.T, viaNetHTTP bool) {
	var events []Event
	var mu sync.Mutex
	db, url := startListener(t, store.Options{NoSync: true}, func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() }, viaNetHTTP)
	changes, cancel := db.Subscribe()
	defer cancel()
	now := time.Now().Unix()
	good := encode(t, giftCardPush(1, 2500))
	big := append([]byte(`{"Transaction":{"Key":"X","Pad":"`), bytes.Repeat([]byte("x"), MaxBody)...)
	big = append(big, `"}}`...)

	tests := []struct {
		name    string
		req     *http.Request
		status  int
		verdict string
		reason  string // part of the rejection reason
	}{
		{"signed push is stored", signedPost(t, url, good, creds, now), 200, store.SignatureValid, ""},
		{"the same push again is answered 200", signedPost(t, url, good, creds, now), 200, store.SignatureValid, ""},
		{"wrong secret", signedPost(t, url, encode(t, giftCardPush(2, 100)), api.Credentials{WebsiteKey: creds.WebsiteKey, SecretKey: "nope"}, now), 401, store.SignatureMismatch, "signature does not match"},
		{"unknown website key", signedPost(t, url, encode(t, giftCardPush(3, 100)), api.Credentials{WebsiteKey: "other", SecretKey: "x"}, now), 401, store.SignatureUnknown, "unknown website key"},
		{"stale timestamp", signedPost(t, url, encode(t, giftCardPush(4, 100)), creds, now-3600), 401, store.SignatureStale, "timestamp outside"},
		{"timestamp that overflowed the skew check", signedPost(t, url, encode(t, giftCardPush(7, 100)), creds, now+9223372037), 401, store.SignatureStale, "timestamp outside"},
		{"signed over another URL", signedPost(t, strings.Replace(url, "/push", "/other", 1), encode(t, giftCardPush(5, 100)), creds, now), 404, "", ""},
		{"malformed body, signed", signedPost(t, url, []byte(`{"Transaction":{"Key":`), creds, now), 400, store.SignatureValid, "malformed body"},
		{"neither envelope, signed", signedPost(t, url, []byte(`{"Foo":{}}`), creds, now), 400, store.SignatureValid, "neither a DataRequest"},
		{"body over 1 MiB", signedPost(t, url, big, creds, now), 413, store.SignatureUnchecked, "larger than 1 MiB"},
	}
	// A push signed for /other but posted to /push.
	tests[6].req.URL.Path = "/push"
	tests[6].status, tests[6].verdict, tests[6].reason = 401, store.SignatureMismatch, "signature does not match"
	missing := signedPost(t, url, encode(t, giftCardPush(6, 100)), creds, now)
	missing.Header.Del("Authorization")
	tests = append(tests, struct {
		name    string
		req     *http.Request
		status  int
		verdict string
		reason  string
	}{"no Authorization header", missing, 401, store.SignatureMissing, "no Authorization header"})

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("HTTP %d, want %d", resp.StatusCode, tc.status)
			}
			mu.Lock()
			e := events[len(events)-1]
			mu.Unlock()
			if e.Record.Signature != tc.verdict || !strings.Contains(e.Record.Reason, tc.reason) || e.Record.Rejected != (tc.status != 200) {
				t.Errorf("event: signature %q rejected %v reason %q; want %q, %q", e.Record.Signature, e.Record.Rejected, e.Record.Reason, tc.verdict, tc.reason)
			}
		})
	}
	pushes, err := db.Pushes(t.Context(), 0, 0)
	if err != nil || len(pushes) != 1 || pushes[0].Key != giftCardPush(1, 0).Key() || !bytes.Equal(pushes[0].Body, good) {
		t.Fatalf("stored pushes = %d, %v", len(pushes), err)
	}
	if pushes[0].Header.Get("Authorization") == "" || pushes[0].Signature != store.SignatureValid {
		t.Errorf("stored push lacks its headers or verdict: %+v", pushes[0])
	}
	// One entry per source and kind: the two mismatches, the two stale
	// timestamps and the two signed malformed bodies share theirs.
	rejected, err := db.RejectedPushes(t.Context(), 0)
	if err != nil || len(rejected) != len(tests)-5 {
		t.Fatalf("rejected = %d, %v; want %d", len(rejected), err, len(tests)-5)
	}
	if r := rejected[len(rejected)-1]; r.Signature != store.SignatureUnknown || r.Count != 1 || r.Key != "" {
		t.Errorf("oldest rejected entry = key %q verdict %q ×%d", r.Key, r.Signature, r.Count)
	}
	var total uint64
	for _, r := range rejected {
		total += r.Count
		if len(r.Body) > store.MaxRejectedExcerpt {
			t.Errorf("rejected entry keeps %d bytes of body", len(r.Body))
		}
	}
	if total != uint64(len(tests)-2) {
		t.Errorf("rejected entries count %d requests, want %d", total, len(tests)-2)
	}
	if _, err := db.Transaction(t.Context(), giftCardPush(2, 0).Key()); err == nil {
		t.Error("a push with a bad signature was applied")
	}
	select {
	case c := <-changes:
		if c.Pushes != 1 || len(c.Transactions) != 1 {
			t.Errorf("first change = %+v", c)
		}
	case <-time.After(stuckAfter):
		t.Error("no change notification after the push was stored")
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET = %d", resp.StatusCode)
	}
}

// TestListenerConfiguredPushURL: with PushURL set the signature covers that
// URL, not the address the request arrived on (a proxy in between).
func TestListenerConfiguredPushURL(t *testing.T) {
	const public = "https://shop.example/hooks/paydesk"
	_, srv := openServer(t, store.Options{NoSync: true}, Config{PushURL: public})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	body := encode(t, giftCardPush(9, 100))
	req := signedPost(t, hs.URL+"/whatever", body, creds, time.Now().Unix())
	req.Header.Set("Authorization", api.Sign(creds, "POST", api.HostPath(public), body, "n1", time.Now().Unix()).String())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
}

func TestListenAndServeShutsDown(t *testing.T) {
	_, srv := openServer(t, store.Options{NoSync: true}, Config{})
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	// Listen has bound the port: the push waits in its backlog until
	// Serve accepts it, however late that is.
	url := "http://" + addr.String() + "/push"
	client := &http.Client{Timeout: stuckAfter}
	resp, err := client.Do(signedPost(t, url, encode(t, giftCardPush(1, 100)), creds, time.Now().Unix()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HTTP %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(stuckAfter):
		t.Fatal("Serve did not return after the context ended")
	}
}
