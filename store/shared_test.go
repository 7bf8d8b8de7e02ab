package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// openShared2 opens one PostgreSQL database twice, as two processes would
// (two listeners, two consoles); skipped without a server.
func openShared2(t *testing.T) (*DB, *DB) {
	t.Helper()
	open := sharedOpener(t)
	return open(), open()
}

// sharedOpener makes a fresh PostgreSQL database (skipped without a
// server) and returns what opens it once more, as another process would;
// each handle is closed when the test ends.
func sharedOpener(t *testing.T) func() *DB {
	t.Helper()
	url := freshNative(t)
	return func() *DB {
		t.Helper()
		db, err := Open(url, Options{Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
}

// Two listeners on one database, the gateway sending every push to both at
// once: each push is stored once.
func TestSharedEachPushStoredOnce(t *testing.T) {
	pgtest.OwnEngine(t)
	// These tests wait on the server most of their time: they run side by
	// side.
	t.Parallel()
	a, b := openShared2(t)
	g := &gw{clock: t0}
	var ps []*api.Push
	for i := 0; i < 40; i++ {
		ps = append(ps, txPush(g.key(), fmt.Sprintf("GC-%d", i), "customgiftcard", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil))
	}
	var wg sync.WaitGroup
	for _, db := range []*DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range ps {
				body, _ := p.Encode()
				if _, err := db.ApplyPush(context.Background(), PushRecord{Body: body, Method: "POST", URL: "/push"}, p); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, db := range []*DB{a, b} {
		c, err := db.Counts(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if c.Pushes != 40 || c.Transactions != 40 {
			t.Fatalf("%d pushes, %d transactions stored, want 40 and 40", c.Pushes, c.Transactions)
		}
	}
}

// Two operators capturing the same reservation at once, from two
// processes: one journal entry goes through, the other is refused naming
// who holds it.
func TestSharedOneOpenOperationPerTarget(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	a, b := openShared2(t)
	g := &gw{clock: t0}
	s := newScenario(t, a, g, "INV-SHARED")
	s.reserve([]api.Article{{Number: "A", Title: "A", Price: dec("10"), Quantity: 2, Vat: dec("21")}}, true)
	capture := api.Capture{Currency: "EUR", Invoice: "INV-SHARED", ReservationNumber: s.resNum, Amount: dec("10"),
		Lines: []api.CaptureLine{{ArticleNumber: "A", Quantity: 1}}}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, db := range []*DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = db.BeginOp(t.Context(), PendingOp{Operator: []string{"alice@desk1", "bob@desk2"}[i], Request: capture.Request()})
		}()
	}
	wg.Wait()
	ok, busy := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrTargetBusy):
			busy++
		default:
			t.Fatalf("unexpected: %v", err)
		}
	}
	if ok != 1 || busy != 1 {
		t.Fatalf("%d went through, %d refused: %v", ok, busy, errs)
	}
}

// A change committed by one process reaches the subscribers of another
// (LISTEN/NOTIFY).
func TestSharedChangesReachOtherProcesses(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	a, b := openShared2(t)
	changes, stop := b.Subscribe()
	defer stop()
	g := &gw{clock: t0}
	p := txPush(g.key(), "GC-LIVE", "customgiftcard", api.TypeGiftCardPay, dec("10"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
	start := time.Now()
	push(t, a, p)
	select {
	case c := <-changes:
		if c.Pushes != 1 || len(c.Transactions) != 1 {
			t.Fatalf("change %+v", c)
		}
		t.Logf("seen by the other process after %s", time.Since(start))
	case <-time.After(time.Minute): // only a stuck test; the log line has the latency
		t.Fatal("the other process heard nothing")
	}
}

// An operation left pending by a process that died is "outcome unknown" to
// the next process that opens the database, as on a file; one whose
// process is alive stays pending, whoever opens the database meanwhile.
func TestSharedPendingOfGoneProcessBecomesUnknown(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	open := sharedOpener(t)
	a, watcher := open(), open()
	g := &gw{clock: t0}
	s := newScenario(t, a, g, "INV-LEASE")
	s.reserve([]api.Article{{Number: "A", Title: "A", Price: dec("10"), Quantity: 2, Vat: dec("21")}}, true)
	capture := api.Capture{Currency: "EUR", Invoice: "INV-LEASE", ReservationNumber: s.resNum, Amount: dec("10"),
		Lines: []api.CaptureLine{{ArticleNumber: "A", Quantity: 1}}}
	id, err := a.BeginOp(t.Context(), PendingOp{Operator: "alice@desk1", Request: capture.Request()})
	if err != nil {
		t.Fatal(err)
	}
	state := func(db *DB) OpState {
		t.Helper()
		op, err := db.Op(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return op.State
	}

	open() // a. is alive: its operation stays pending for a process opening now
	if got := state(watcher); got != OpPending {
		t.Fatalf("with its process alive the operation is %s, want pending", got)
	}
	if err := a.Close(); err != nil { // the process ends with the request on its way
		t.Fatal(err)
	}
	later := open()
	if got := state(later); got != OpOutcomeUnknown {
		t.Fatalf("after its process ended the operation is %s, want outcome unknown", got)
	}
	if _, err := later.BeginOp(t.Context(), PendingOp{Operator: "bob@desk2", Request: capture.Request()}); !errors.Is(err, ErrTargetBusy) {
		t.Fatalf("a second capture of the same lines: %v, want refused (the first one's outcome is unknown)", err)
	}
}

// Two listeners on one database, the shop posting every order to both at
// once (and some with other lines to the second): each order is stored
// once, the other post is told it is known, and a changed order is kept
// once as a conflict beside the first — serializable transactions on the
// order's key, retried when they collide.
func TestSharedEachOrderStoredOnce(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	a, b := openShared2(t)
	const n = 30
	type answer struct {
		res OrderResult
		err error
	}
	answers := make([][2]answer, n)
	var wg sync.WaitGroup
	for side, db := range []*DB{a, b} {
		wg.Go(func() {
			for i := range n {
				o := shopOrder(fmt.Sprintf("SHOP-%02d", i))
				if side == 1 && i%3 == 0 {
					o.Articles[0].Quantity = 3 // the shop changed it meanwhile
				}
				res, err := db.PutOrder(t.Context(), o)
				answers[i][side] = answer{res, err}
			}
		})
	}
	wg.Wait()
	for i, ans := range answers {
		outcomes := map[OrderOutcome]int{}
		for side, an := range ans {
			if an.err != nil && !errors.Is(an.err, ErrOrderConflict) {
				t.Fatalf("SHOP-%02d on listener %d: %v", i, side, an.err)
			}
			outcomes[an.res.Outcome]++
		}
		want := map[OrderOutcome]int{OrderImported: 1, OrderKnown: 1}
		if i%3 == 0 {
			want = map[OrderOutcome]int{OrderImported: 1, OrderConflict: 1}
		}
		if fmt.Sprint(outcomes) != fmt.Sprint(want) {
			t.Errorf("SHOP-%02d: answers %v, want %v", i, outcomes, want)
		}
	}
	for _, db := range []*DB{a, b} {
		orders, err := db.Orders(t.Context(), false)
		if err != nil || len(orders) != n {
			t.Fatalf("%d orders stored, want %d (%v)", len(orders), n, err)
		}
		cs, err := db.OrderConflicts(t.Context(), "")
		if err != nil || len(cs) != (n+2)/3 {
			t.Fatalf("%d conflicts kept, want %d (%v)", len(cs), (n+2)/3, err)
		}
	}
}
