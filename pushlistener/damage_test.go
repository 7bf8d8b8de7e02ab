package pushlistener

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"paydesk/store"
)

// TestDamagedCacheStopsPushes (issue 24): once the cache under a running
// listener is found damaged, every push is answered 500 — so the gateway
// sends it again later — with what happened in the answer, and none is
// stored; the old code went on taking the pushes whose pages it could still
// write.
func TestDamagedCacheStopsPushes(t *testing.T) {
	var logged bytes.Buffer
	db, srv := openServer(t, store.Options{NoSync: true}, Config{Logf: func(f string, a ...any) {
		logged.WriteString(strings.TrimSpace(strings.ReplaceAll(f, "%v", "")) + "\n")
	}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	post := func(n int) (int, string) {
		t.Helper()
		resp, err := http.DefaultClient.Do(signedPost(t, hs.URL+"/push", encode(t, giftCardPush(n, 1000)), creds, time.Now().Unix()))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(1); code != http.StatusOK {
		t.Fatalf("push to a sound cache: %d %s", code, body)
	}
	// A bad sector, or another program, overwrites the cache's pages under
	// the running listener (all but the two meta pages).
	f, err := os.OpenFile(db.Path(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	page := os.Getpagesize()
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, int(fi.Size())-2*page), int64(2*page)); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	for n := 2; n <= 4; n++ {
		code, body := post(n)
		if code != http.StatusInternalServerError || !strings.Contains(body, "cache is damaged") || !strings.Contains(body, "paydesk db check") {
			t.Fatalf("push %d to a damaged cache: %d %q", n, code, body)
		}
		if strings.Contains(body, db.Path()) {
			t.Fatalf("the answer names the cache's path: %q", body)
		}
	}
}
