package pushlistener

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// FuzzServeHTTP drives the handler with arbitrary requests, signed
// (reaching the decoder) or not: it never panics, answers one of the
// statuses it documents, stores a push only when it answers 200, and keeps
// no more of a rejected body than the excerpt.
func FuzzServeHTTP(f *testing.F) {
	f.Add("POST", "/push", "", []byte(`{"Transaction":{"Key":"AB","Status":{"Code":{"Code":190}}}}`), true)
	f.Add("POST", "/push", "hmac k:s:n:1", []byte(`{}`), false)
	f.Add("GET", "/", "", []byte(nil), false)
	f.Add("POST", "/push?x=1", "", []byte(`{"DataRequest":{"Key":"1","Invoice":"=1+1\u200b"}}`), true)
	f.Add("POST", "/orders", "hmac testWebsiteKey:AAAA:n:99999999999999999", bytes.Repeat([]byte("x"), 600), false)
	db, srv := openServer(f, store.Options{NoSync: true}, Config{Now: time.Now})
	f.Fuzz(func(t *testing.T, method, path, auth string, body []byte, sign bool) {
		req, err := http.NewRequest(method, "http://127.0.0.1:8801"+path, bytes.NewReader(body))
		if err != nil || req.URL.Path == "" {
			return
		}
		if sign {
			auth = api.Sign(creds, req.Method, api.HostPath("http://127.0.0.1:8801"+req.URL.RequestURI()), body, "n", time.Now().Unix()).String()
		}
		req.Header.Set("Authorization", auth)
		before, err := db.Counts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		after, _ := db.Counts(t.Context())
		switch w.Code {
		case 200:
		case 400, 401, 405, 413, 500:
			if after.Pushes != before.Pushes {
				t.Fatalf("HTTP %d but a push was stored", w.Code)
			}
		default:
			t.Fatalf("HTTP %d", w.Code)
		}
		if w.Code == 200 && !sign {
			t.Fatalf("an unsigned request was answered 200")
		}
	})
	_ = srv.Flush(f.Context())
	if rej, err := db.RejectedPushes(context.Background(), 0); err == nil {
		for _, r := range rej {
			if len(r.Body) > store.MaxRejectedExcerpt {
				f.Errorf("rejected entry keeps %d bytes of body", len(r.Body))
			}
		}
	}
}
