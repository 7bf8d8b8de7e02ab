package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pushload"
	"paydesk/internal/testcert"
	"paydesk/store"
)

// TestListenForwardToHungShopStops: with --forward-to a shop that never
// answers and pushes queued for it, the context's end (SIGTERM) stops
// paydesk listen within a few seconds; the pushes were stored before they
// were answered, and their deliveries stay in the outbox for the next
// start. The old listener forwarded its whole queue first, each push up to
// the client's 10 s timeout.
func TestListenForwardToHungShopStops(t *testing.T) {
	hung := make(chan struct{})
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer shop.Close()
	defer close(hung)

	dbPath := filepath.Join(t.TempDir(), "listen.db")
	env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
	var stdout, stderr lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
			[]string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", dbPath, "--forward-to", shop.URL + "/push"})
	}()
	addr := awaitListening(t, &stderr)
	url := "http://" + addr + "/push"
	creds := api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}
	const n = 5
	for i := range n {
		body, _ := pushload.GiftCardPush(i+1, 100).Encode()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Authorization", api.Sign(creds, http.MethodPost, api.HostPath(url), body, api.NewNonce(), time.Now().Unix()).String())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("push %d: HTTP %d", i, resp.StatusCode)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("paydesk listen still running 30 s after its context ended, forwarding to a shop that never answers")
	}
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err := db.Counts(t.Context()); err != nil || c.Pushes != uint64(n) {
		t.Errorf("pushes stored: %+v %v, want %d", c, err, n)
	}
	// None was delivered; the outbox keeps every one for the next start.
	ds, err := db.Deliveries(context.Background(), store.DeliveryQuery{})
	if err != nil || len(ds) != n {
		t.Fatalf("deliveries: %d, %v; want %d", len(ds), err, n)
	}
	for _, d := range ds {
		if d.State != store.DeliveryPending {
			t.Errorf("delivery %d is %s after a stop, want pending", d.ID, d.State)
		}
	}
}

// TestListenTLSKeyReadableByOthers: a TLS key that group or others may
// read is refused at start, naming the file and the rule (the old
// listener served with it).
func TestListenTLSKeyReadableByOthers(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := testcert.Files(t, dir)
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
	var stdout, stderr lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Main(ctx, IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
		[]string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", filepath.Join(dir, "listen.db"), "--tls-cert", cert, "--tls-key", key})
	msg := stderr.String()
	if code == 0 || !strings.Contains(msg, key) || !strings.Contains(msg, "0644") || !strings.Contains(msg, "chmod 600") {
		t.Errorf("exit %d with a TLS key of mode 0644: %s", code, msg)
	}
}
