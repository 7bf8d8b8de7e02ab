package pushlistener

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/store"
)

// checkOutcomes checks what was reported of one push's posts: one
// "applied", the others "duplicate" of it, all under one push ID.
func checkOutcomes(t *testing.T, key string, events []Event) {
	t.Helper()
	applied, dups := 0, 0
	var id uint64
	for _, e := range events {
		switch word, _ := e.Result.Outcome(); word {
		case store.OutcomeApplied:
			applied++
		case store.OutcomeDuplicate:
			dups++
		default:
			t.Errorf("push %s reported %q", key, word)
		}
		if id != 0 && e.Record.ID != id {
			t.Errorf("push %s reported as push %d and %d", key, id, e.Record.ID)
		}
		id = e.Record.ID
	}
	if applied != 1 || dups != len(events)-1 {
		t.Errorf("push %s: %d applied, %d duplicates in %d reports", key, applied, dups, len(events))
	}
}

// Two listeners on one PostgreSQL database (two handles, as two processes
// would have), each push posted to both at once and some twice to each:
// every post is answered 200, each push is stored once, and each listener
// reports every post it answered once the push was applied — one
// "applied" per push in all, the other posts "duplicate" of that push.
func TestPGInboxTwoListenersEachPushOnce(t *testing.T) {
	url := pgtest.Fresh(t)
	type seen struct {
		mu     sync.Mutex
		events map[string][]Event
		n      int
	}
	var all seen
	all.events = map[string][]Event{}
	var urls []string
	var dbs []*store.DB
	for i := 0; i < 2; i++ {
		db, err := store.Open(url, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		srv, err := New(Config{DB: db, Verifier: api.VerifierFor(creds), Logf: t.Logf, Observe: func(e Event) {
			all.mu.Lock()
			defer all.mu.Unlock()
			if e.Record.Key != "" {
				all.events[e.Record.Key] = append(all.events[e.Record.Key], e)
				all.n++
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		urls, dbs = append(urls, hs.URL+"/push"), append(dbs, db)
	}

	const pushes = 200
	posts := 0
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for n := 1; n <= pushes; n++ {
		times := 1 + n%2 // odd pushes twice to each listener
		for _, u := range urls {
			for rep := 0; rep < times; rep++ {
				posts++
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := encode(t, giftCardPush(n, pgPushCents(n)))
					resp, err := http.DefaultClient.Do(signedPost(t, u, body, creds, time.Now().Unix()))
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
					mu.Lock()
					codes[resp.StatusCode]++
					mu.Unlock()
				}()
			}
		}
	}
	wg.Wait()
	if codes[http.StatusOK] != posts {
		t.Fatalf("answers %v, want %d × 200", codes, posts)
	}
	deadline := time.Now().Add(stuckAfter)
	for {
		all.mu.Lock()
		n := all.n
		all.mu.Unlock()
		if n == posts {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listeners reported %d of %d posts within %v", n, posts, stuckAfter)
		}
		time.Sleep(20 * time.Millisecond)
	}
	all.mu.Lock()
	defer all.mu.Unlock()
	for n := 1; n <= pushes; n++ {
		key := giftCardPush(n, 0).Key()
		checkOutcomes(t, key, all.events[key])
	}
	for _, db := range dbs {
		log, err := db.Pushes(t.Context(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != pushes {
			t.Errorf("push log: %d records, want %d", len(log), pushes)
		}
	}
}
