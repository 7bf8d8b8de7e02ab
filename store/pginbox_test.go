package store

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// inboxPushes makes n distinct gift card pushes.
func inboxPushes(n int) []*api.Push {
	g := &gw{clock: t0}
	var ps []*api.Push
	for i := 0; i < n; i++ {
		ps = append(ps, txPush(g.key(), fmt.Sprintf("GC-%d", i), "customgiftcard", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil))
	}
	return ps
}

func ingest(t *testing.T, db *DB, p *api.Push, onApplied func(ApplyResult)) Ingested {
	t.Helper()
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	in, err := db.IngestPush(context.Background(), PushRecord{Body: body, Method: "POST", URL: "/push"}, p, onApplied)
	if err != nil {
		t.Error(err) // not Fatal: some callers run on goroutines of their own
	}
	return in
}

// waitApplied waits until the inbox has nothing waiting.
func waitApplied(t *testing.T, db *DB, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n, err := db.InboxWaiting(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pushes still waiting in the inbox after %v", n, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkOnce checks that each push is in the push log exactly once and
// created its transaction.
func checkOnce(t *testing.T, db *DB, ps []*api.Push) {
	t.Helper()
	c, err := db.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Pushes != uint64(len(ps)) || c.Transactions != len(ps) {
		t.Errorf("counts: %d pushes, %d transactions; want %d each", c.Pushes, c.Transactions, len(ps))
	}
	log, err := db.Pushes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range log {
		seen[r.Key]++
	}
	for _, p := range ps {
		if seen[p.Key()] != 1 {
			t.Errorf("push %s is in the push log %d times", p.Key(), seen[p.Key()])
		}
	}
	if len(log) != len(ps) {
		t.Errorf("push log holds %d records, want %d", len(log), len(ps))
	}
}

// Two handles on one database (two listeners), both running appliers,
// every push ingested by both at once and some twice by each: each push is
// in the inbox once, applied once, and every ingest call learns the
// outcome (applied, or a duplicate of the applied push).
func TestInboxTwoListenersStoreEachPushOnce(t *testing.T) {
	pgtest.OwnEngine(t)
	// These tests wait on the server most of their time: they run side by
	// side.
	t.Parallel()
	a, b := openShared2(t)
	a.StartApplier(t.Logf)
	b.StartApplier(t.Logf)
	ps := inboxPushes(300)
	var mu sync.Mutex
	outcomes := map[string][]ApplyResult{}
	var pending sync.WaitGroup
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b} {
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(ps); i += 4 {
					p := ps[i]
					for rep := 0; rep < 1+i%2; rep++ { // odd pushes twice per listener
						pending.Add(1)
						ingest(t, db, p, func(r ApplyResult) {
							mu.Lock()
							outcomes[p.Key()] = append(outcomes[p.Key()], r)
							mu.Unlock()
							pending.Done()
						})
					}
				}
			}()
		}
	}
	wg.Wait()
	waitApplied(t, a, 2*time.Minute)
	done := make(chan struct{})
	go func() { pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // only a stuck test
		t.Fatal("not every ingest heard its push's outcome")
	}
	for _, db := range []*DB{a, b} {
		checkOnce(t, db, ps)
	}
	for _, p := range ps {
		rs := outcomes[p.Key()]
		applied, dups := 0, 0
		var id uint64
		for _, r := range rs {
			switch {
			case r.Duplicate:
				dups++
			case r.Applied:
				applied++
			}
			if id != 0 && r.ID != id {
				t.Errorf("push %s: outcomes name pushes %d and %d", p.Key(), id, r.ID)
			}
			id = r.ID
		}
		if applied != 1 || applied+dups != len(rs) {
			t.Errorf("push %s: %d applied, %d duplicates of %d outcomes: %+v", p.Key(), applied, dups, len(rs), rs)
		}
	}
}

// A crash between the inbox commit and the apply: a listener ingests and
// dies before any applier ran (its handle closed, no applier started); a
// listener started after applies each push once, and a third applier, and
// a drain, apply nothing again.
func TestInboxAppliedOnceAfterApplierCrash(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	open := sharedOpener(t)
	ps := inboxPushes(120)
	dead := open()
	for _, p := range ps {
		if in := ingest(t, dead, p, nil); in.Duplicate {
			t.Fatalf("push %s: a duplicate on first ingest", p.Key())
		}
	}
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	next := open()
	if n, err := next.InboxWaiting(context.Background()); err != nil || n != len(ps) {
		t.Fatalf("inbox after the crash: %d waiting (%v), want %d", n, err, len(ps))
	}
	next.StartApplier(t.Logf)
	waitApplied(t, next, 2*time.Minute)
	checkOnce(t, next, ps)

	again := open()
	again.StartApplier(t.Logf)
	if n, err := again.DrainInbox(context.Background()); err != nil || n != 0 {
		t.Fatalf("a second drain applied %d (%v), want 0", n, err)
	}
	for _, p := range ps[:10] { // late duplicates, the applier long done
		if in := ingest(t, again, p, nil); !in.Duplicate {
			t.Errorf("push %s ingested again: not a duplicate", p.Key())
		}
	}
	// Had a duplicate gone into the inbox, the applier would apply it: the
	// inbox is empty and a drain finds nothing.
	waitApplied(t, again, time.Minute)
	if n, err := again.DrainInbox(context.Background()); err != nil || n != 0 {
		t.Fatalf("a drain after the late duplicates applied %d (%v), want 0", n, err)
	}
	checkOnce(t, again, ps)
}

// Appliers racing: two handles drain the same backlog at once (as two
// appliers would if one lost its lock's session but not its pool): the
// serializable apply transactions let each row be applied by one of them.
func TestInboxConcurrentDrainsApplyOnce(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	a, b := openShared2(t)
	ps := inboxPushes(400)
	for _, p := range ps {
		ingest(t, a, p, nil)
	}
	var wg sync.WaitGroup
	var total [2]int
	for i, db := range []*DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := db.DrainInbox(context.Background())
			if err != nil {
				t.Error(err)
			}
			total[i] = n
		}()
	}
	wg.Wait()
	if total[0]+total[1] != len(ps) {
		t.Errorf("drains applied %d + %d, want %d in all", total[0], total[1], len(ps))
	}
	checkOnce(t, a, ps)
}

// The same push twice in one ingest batch, and a push already applied
// through ApplyPush (the key-value path) ingested again: stored once.
func TestInboxDuplicates(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	db, _ := openShared2(t)
	ps := inboxPushes(3)
	body, _ := ps[0].Encode()
	if _, err := db.ApplyPush(context.Background(), PushRecord{Body: body}, ps[0]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	res := make([]Ingested, 6)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := ps[i%3].Encode()
			in, err := db.IngestPush(context.Background(), PushRecord{Body: body}, ps[i%3], nil)
			if err != nil {
				t.Error(err)
			}
			res[i] = in
		}()
	}
	wg.Wait()
	for i := 0; i < 3; i++ {
		if res[i].Inbox != res[i+3].Inbox || res[i].Duplicate == res[i+3].Duplicate {
			t.Errorf("push %d: ingested as %+v and %+v, want one row, one duplicate", i, res[i], res[i+3])
		}
	}
	if n, err := db.DrainInbox(context.Background()); err != nil || n != 3 {
		t.Fatalf("drain: %d (%v), want 3", n, err)
	}
	checkOnce(t, db, ps)
}

// The applier runs ApplyPush's rules, with its reads prefetched for a whole
// batch: a reservation's pushes (settling its operations, in any order,
// some twice) ingested and applied from the inbox in one transaction end
// in the state ApplyPush reaches one push at a time, in order.
func TestInboxAppliesAsApplyPush(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	for _, withOps := range []bool{true, false} {
		ref := openTest(t)
		for _, p := range story(t, ref, withOps) {
			push(t, ref, p)
		}
		want := snapshot(t, ref)
		for seed := int64(1); seed <= 4; seed++ {
			url := freshNative(t)
			db, err := Open(url, Options{Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			ps := story(t, db, withOps)
			rng := rand.New(rand.NewSource(seed))
			for i := range ps {
				if rng.Intn(3) == 0 {
					ps = append(ps, ps[i])
				}
			}
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			for _, p := range ps {
				ingest(t, db, p, nil)
			}
			if _, err := db.DrainInbox(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := snapshot(t, db); got != want {
				t.Fatalf("with operations %v, seed %d: state differs from ApplyPush in order\n got: %s\nwant: %s", withOps, seed, got, want)
			}
			if withOps {
				if open, err := db.Ops(t.Context(), OpPending, OpSent, OpOutcomeUnknown); err != nil || len(open) != 0 {
					t.Errorf("seed %d: %d operations still open after the pushes (%v)", seed, len(open), err)
				}
			}
			_ = db.Close()
		}
	}
}
