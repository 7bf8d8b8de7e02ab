package pushlistener

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// A listener on a cache file opened with its push inbox (as paydesk
// listen opens it), each push posted once and some twice: every post is
// answered 200, each push is stored once, and every post is reported once
// its push was applied — "applied" for the first, "duplicate" of it for
// the repeat, with the push's ID.
func TestFileInboxListenerReportsEachPost(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "listen.db"), store.Options{PushInbox: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if !db.IngestsPushes() {
		t.Fatal("a file opened with its push inbox does not ingest pushes")
	}
	var (
		mu       sync.Mutex
		events   = map[string][]Event{}
		reported sync.WaitGroup
	)
	srv, err := New(Config{DB: db, Verifier: api.VerifierFor(creds), Logf: t.Logf, Observe: func(e Event) {
		mu.Lock()
		events[e.Record.Key] = append(events[e.Record.Key], e)
		mu.Unlock()
		reported.Done()
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	const pushes = 300
	var wg sync.WaitGroup
	codes := map[int]int{}
	post := func(n int) {
		defer wg.Done()
		body := encode(t, giftCardPush(n, int64(100+n)))
		resp, err := http.DefaultClient.Do(signedPost(t, hs.URL+"/push", body, creds, time.Now().Unix()))
		if err != nil {
			t.Error(err)
			reported.Done()
			return
		}
		resp.Body.Close()
		mu.Lock()
		codes[resp.StatusCode]++
		mu.Unlock()
	}
	posts := 0
	for n := 1; n <= pushes; n++ {
		for rep := 0; rep < 1+n%3/2; rep++ { // every third push twice
			posts++
			wg.Add(1)
			reported.Add(1)
			go post(n)
		}
	}
	wg.Wait()
	if codes[http.StatusOK] != posts {
		t.Fatalf("answers %v, want %d × 200", codes, posts)
	}
	reported.Wait() // every post reported: the test hangs (and times out) otherwise
	for n := 1; n <= pushes; n++ {
		key := giftCardPush(n, 0).Key()
		checkOutcomes(t, key, events[key])
		if len(events[key]) != 1+n%3/2 || events[key][0].Record.ID == 0 {
			t.Errorf("push %s: %d reports (want %d), the first as push %d", key, len(events[key]), 1+n%3/2, events[key][0].Record.ID)
		}
	}
	log, err := db.Pushes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != pushes {
		t.Errorf("push log: %d records, want %d", len(log), pushes)
	}
}
