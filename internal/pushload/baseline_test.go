package pushload

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"paydesk/api"
)

// TestBaselines: both baselines answer the load tool's pushes 200, and the
// plain receiver stores each one and refuses a bad signature.
func TestBaselines(t *testing.T) {
	creds := api.Credentials{WebsiteKey: "K", SecretKey: "S"}
	db, err := bolt.Open(filepath.Join(t.TempDir(), "plain.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plain, err := PlainReceiver(db, api.VerifierFor(creds))
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]http.Handler{"noop": NoopHandler(), "plain": plain} {
		srv := httptest.NewServer(h)
		addr := strings.TrimPrefix(srv.URL, "http://")
		reqs, err := Prepare(Plan{Addr: addr, Credentials: creds, Pushes: 200})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), addr, reqs, 8)
		srv.Close()
		if err != nil || res.Statuses[200] != 200 {
			t.Fatalf("%s: %v %v", name, res.Statuses, err)
		}
	}
	n := 0
	_ = db.View(func(tx *bolt.Tx) error { n = tx.Bucket([]byte("pushes")).Stats().KeyN; return nil })
	if n != 200 {
		t.Errorf("plain receiver stored %d pushes", n)
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/push", strings.NewReader("{}"))
	r.Header.Set("Authorization", "hmac K:AAAA:n:1")
	plain.ServeHTTP(w, r)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("bad signature: %d", w.Code)
	}
}
