package pushlistener

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// TestOverlongFields: what a client sends is bounded before it reaches the
// cache or a log, and an input the listener can never store is refused
// with a 4xx (which the gateway does not retry), never a 500 "try again"
// (which it retries for ever). The old listener answered a signed push
// with a 40,000-character key or invoice 500 and logged the whole key.
func TestOverlongFields(t *testing.T) {
	var logged strings.Builder
	_, srv := openServer(t, store.Options{NoSync: true}, Config{Logf: func(f string, a ...any) { fmt.Fprintf(&logged, f+"\n", a...) }})
	addr := serve(t, srv)
	url := "http://" + addr + "/push"
	long := strings.Repeat("A", 40000)
	now := time.Now().Unix()
	push := func(mod func(*api.Push)) *http.Request {
		p := giftCardPush(7, 100)
		mod(p)
		return signedPost(t, url, encode(t, p), creds, now)
	}
	withAuth := func(h string) *http.Request {
		req := signedPost(t, url, encode(t, giftCardPush(8, 100)), creds, now)
		req.Header.Set("Authorization", h)
		return req
	}
	tests := []struct {
		name   string
		req    *http.Request
		status int
		reason string // in the answer
	}{
		{"signed push, 40,000-character key", push(func(p *api.Push) { p.Transaction.Key = long }), http.StatusBadRequest, "Transaction.Key of 40000 bytes, at most 1024"},
		{"signed push, 40,000-character invoice", push(func(p *api.Push) { p.Transaction.Invoice = long }), http.StatusBadRequest, "Transaction.Invoice of 40000 bytes"},
		{"2,000-character website key", withAuth(fmt.Sprintf("hmac %s:sig:nonce:%d", strings.Repeat("K", 2000), now)), http.StatusUnauthorized, "bytes, at most 1024"},
		{"40,000-character website key", withAuth(fmt.Sprintf("hmac %s:sig:nonce:%d", long, now)), http.StatusRequestHeaderFieldsTooLarge, ""},
		{"signed order, 40,000-character invoice", signedPost(t, "http://"+addr+"/orders", shopReserve(t, long, 1), creds, now), http.StatusBadRequest, ""},
		{"signed push, 1,024-character key", push(func(p *api.Push) { p.Transaction.Key = strings.Repeat("B", 1024) }), http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.reason) || len(b) > 1000 {
				t.Errorf("HTTP %d %.300q, want %d with %q", resp.StatusCode, b, tc.status, tc.reason)
			}
		})
	}
	if l := logged.String(); len(l) > 2000 {
		t.Errorf("the log took %d bytes of the request: %.200s…", len(l), l)
	}
}
