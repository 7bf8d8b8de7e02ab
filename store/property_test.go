package store

import (
	"encoding/json"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// story runs one reservation's life against db without applying any push
// and returns the pushes the gateway sent, including pending ones that
// precede the final statuses. withOps=false leaves out the operations and
// their responses: the pushes come from another tool.
func story(t testing.TB, db *DB, withOps bool) []*api.Push {
	g := &gw{clock: t0}
	s := newScenario(t, db, g, "ORDER-P")
	cl := func(n string, q int) api.CaptureLine { return api.CaptureLine{ArticleNumber: n, Quantity: q} }
	if !withOps {
		// Same keys and statuses, but only the pushes survive.
		scratch := openTest(t)
		defer scratch.Close()
		s.db = scratch
	}
	s.reserve(articles(), false)
	// A pending Reserve push sent before the approval.
	early := dataPush(s.resKey, s.inv, api.ActionReserve, api.Status{Code: api.Code{Code: api.StatusPendingProcessing},
		SubCode: &api.SubCode{Code: api.SubCodeRedirect}, DateTime: api.NewDateTime(g.clock.Add(-30*time.Second), true)})
	s.pushes = append(s.pushes, early)
	as := articles()
	as[1].Price = dec("84.95")
	s.update(as, false)
	c1 := s.capture("39.98", false, cl("A", 2))
	s.capture("79.95", false, cl("B", 1), cl("D", 1))
	s.refund(c1, "19.99", false)
	s.refund(c1, "19.99", false)
	s.cancel(false)
	return s.pushes
}

// snapshot is the domain state in a canonical form: everything the console
// shows, without the cache's own bookkeeping times.
func snapshot(t testing.TB, db *DB) string {
	t.Helper()
	sums, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for _, sm := range sums {
		r, err := db.Reservation(t.Context(), sm.Key)
		if err != nil {
			t.Fatal(err)
		}
		r.Updated = time.Time{}
		slices.SortFunc(r.Requests, func(a, b Request) int { return strings.Compare(a.Key, b.Key) })
		for i := range r.Requests {
			r.Requests[i].OpID = 0
		}
		slices.Sort(r.Transactions)
		out = append(out, r, sm)
	}
	txs, err := db.Transactions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(txs, func(a, b *Transaction) int { return strings.Compare(a.Key, b.Key) })
	for _, tx := range txs {
		tx.Updated, tx.OpID = time.Time{}, 0
		out = append(out, tx)
	}
	c, err := db.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, c)
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	// The same instant reads the same: bbolt keeps the gateway's offset,
	// the native engine's timestamptz gives UTC.
	return jsonTime.ReplaceAllStringFunc(string(b), func(q string) string {
		at, err := time.Parse(time.RFC3339Nano, strings.Trim(q, `"`))
		if err != nil {
			return q
		}
		return `"` + at.UTC().Format(time.RFC3339Nano) + `"`
	})
}

// jsonTime is a JSON string holding an RFC 3339 time.
var jsonTime = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)

// TestPushesAnyOrderSameState: any permutation and duplication of a
// reservation's pushes ends in the same state, with the operations'
// responses in the cache and without them (pushes from another tool).
func TestPushesAnyOrderSameState(t *testing.T) {
	iterations := 150
	if testing.Short() {
		iterations = 20
		if os.Getenv(pgtest.BackendEnv) == "postgres" {
			// Each seed is a database of its own (seconds on PostgreSQL,
			// most of it CREATE DATABASE); the order is the rules' business,
			// which the bbolt pass tries with 20 seeds and the full run
			// with 150 on either engine.
			iterations = 6
		}
	}
	for _, withOps := range []bool{true, false} {
		name := "with operations"
		if !withOps {
			name = "pushes only"
		}
		t.Run(name, func(t *testing.T) {
			ref := openTest(t)
			pushes := story(t, ref, withOps)
			for _, p := range pushes {
				push(t, ref, p)
			}
			want := snapshot(t, ref)
			if withOps {
				r, err := ref.Reservation(t.Context(), "RES-"+strings.Repeat("0", 3)+"1")
				if err != nil {
					t.Fatal(err)
				}
				if r.State() != StateClosed || !r.CapturedAmount.Equal(dec("119.93")) || !r.RefundedAmount.Equal(dec("39.98")) {
					t.Fatalf("reference ended %s captured %s refunded %s", r.State(), r.CapturedAmount, r.RefundedAmount)
				}
			}
			for seed := int64(1); seed <= int64(iterations); seed++ {
				if !sampled(int(seed)) {
					continue
				}
				rng := rand.New(rand.NewSource(seed))
				db := openTest(t)
				ps := story(t, db, withOps)
				// Duplicate some pushes, then shuffle.
				for i := range ps {
					if rng.Intn(3) == 0 {
						ps = append(ps, ps[i])
					}
				}
				rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
				for _, p := range ps {
					push(t, db, p)
				}
				if got := snapshot(t, db); got != want {
					t.Fatalf("seed %d: state differs from in-order delivery\n got: %s\nwant: %s", seed, got, want)
				}
				_ = db.Close()
			}
		})
	}
}

func TestDuplicatePushStoredOnce(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	p := txPush(g.key(), "GC-9", "customgiftcard", api.TypeGiftCardPay, dec("12.50"), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
	first := push(t, db, p)
	second := push(t, db, p)
	if !first.Applied || first.Duplicate {
		t.Errorf("first = %+v", first)
	}
	if !second.Duplicate || second.ID != first.ID || second.Applied {
		t.Errorf("second = %+v", second)
	}
	all, err := db.Pushes(t.Context(), 0, 0)
	if err != nil || len(all) != 1 {
		t.Fatalf("pushes = %d, %v", len(all), err)
	}
	tx, err := db.Transaction(t.Context(), p.Key())
	if err != nil || tx.Kind != KindGiftCardPay || tx.Provider != api.ProviderCustom || !tx.Amount.Equal(dec("12.5")) {
		t.Errorf("transaction from a push of another tool = %+v, %v", tx, err)
	}
}

func TestOlderPushChangesNothing(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	k := g.key()
	pending := g.status(api.StatusPendingProcessing, "")
	final := g.status(api.StatusSuccess, "")
	later := g.status(api.StatusPendingProcessing, "")
	push(t, db, dataPush(k, "X", api.ActionReserve, final))
	for _, st := range []api.Status{pending, later} {
		res := push(t, db, dataPush(k, "X", api.ActionReserve, st))
		if res.Applied || res.Ignored != ignoredFinal {
			t.Errorf("push %d after final: %+v", st.Code.Code, res)
		}
	}
	r, err := db.Reservation(t.Context(), k)
	if err != nil || r.Status.Code != api.StatusSuccess {
		t.Fatalf("reservation %+v %v", r, err)
	}
	// Between two pending statuses the older one is ignored.
	k2 := g.key()
	a, b := g.status(api.StatusPendingProcessing, ""), g.status(api.StatusAwaitingConsumer, "")
	push(t, db, dataPush(k2, "Y", api.ActionReserve, b))
	res := push(t, db, dataPush(k2, "Y", api.ActionReserve, a))
	if res.Applied || res.Ignored != ignoredOlder {
		t.Errorf("older pending push: %+v", res)
	}
	ps, err := db.PushesFor(t.Context(), k2)
	if err != nil || len(ps) != 2 || ps[1].Ignored != ignoredOlder {
		t.Errorf("push log of %s: %d, %v", k2, len(ps), err)
	}
}

// A push repeating the final status the response already booked is a
// confirmation, even though its DateTime differs (every status here ticks a minute).
func TestPushConfirmsResponseStatus(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	k := g.key()
	push(t, db, dataPush(k, "X", api.ActionReserve, g.status(api.StatusSuccess, "S001")))
	res := push(t, db, dataPush(k, "X", api.ActionReserve, g.status(api.StatusSuccess, "S001")))
	if res.Applied || res.Ignored != Confirms {
		t.Fatalf("repeat of the final status: %+v", res)
	}
	res = push(t, db, dataPush(k, "X", api.ActionReserve, g.status(api.StatusRejected, "")))
	if res.Applied || res.Ignored != ignoredFinal {
		t.Fatalf("another final status: %+v", res)
	}
}
