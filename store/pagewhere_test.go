package store

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/pgtest"
	"paydesk/internal/query"
	"paydesk/store/domain"
)

// randomWhere makes a filter of the language from random parts: states,
// amount and date ranges, customers and e-mails that fold, words and
// phrases; some parts match nothing.
func randomWhere(rng *rand.Rand) string {
	pick := func(s ...string) string { return s[rng.Intn(len(s))] }
	var parts []string
	if rng.Intn(3) == 0 {
		parts = append(parts, "state:"+pick(ReservationFilter.States...))
	}
	if rng.Intn(2) == 0 {
		v := pick("1", "2", "2.00", "3", "4.99", "5", "0")
		parts = append(parts, "amount:"+pick(">", ">=", "<", "<=", "")+v)
	} else if rng.Intn(3) == 0 {
		parts = append(parts, "amount:"+pick("1..3", "2..2", "3..", "..2", "0..1"))
	}
	if rng.Intn(2) == 0 {
		parts = append(parts, "created:"+pick("<1h", "<2h", ">3h", "2026-03-02", "2026-03-01", "<2026-03-02", ">=2026-03-02",
			"2026-03-01..2026-03-02", "..2026-03-01", "<30d"))
	}
	if rng.Intn(3) == 0 {
		parts = append(parts, "customer:"+pick("müller", "mueller", "MULLER", "gruber", "ø", `"anna m"`, "zola", "nobody"))
	}
	if rng.Intn(4) == 0 {
		parts = append(parts, "email:"+pick("c4", "example.com", "c1@", "x@y"))
	}
	if rng.Intn(3) == 0 {
		parts = append(parts, pick("cups", `"wool scarf"`, "a", "sku-1", "crème", "creme", "ostergaard"))
	}
	rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	return strings.Join(parts, " ")
}

// TestPageWhereProperty: random filters of the language over the random
// reservations of pageData give the rows, order, cursors and counts of
// the reference (PageSummaries) on the suite's engine, on bbolt's paths
// of a big file, and on the native PostgreSQL engine when one is
// reachable.
func TestPageWhereProperty(t *testing.T) {
	pgtest.OwnEngine(t)
	db, err := Open(filepath.Join(t.TempDir(), "paydesk.db"), Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	pageData(t, db, 600)
	all, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	engines := map[string]func(context.Context, PageQuery) (Page, error){
		"store": func(ctx context.Context, q PageQuery) (Page, error) { return db.ReservationPage(ctx, q) },
	}
	counts := map[string]func(context.Context, PageQuery) (int, error){
		"store": func(ctx context.Context, q PageQuery) (int, error) { return db.ReservationCount(ctx, q) },
	}
	if os.Getenv("PAYDESK_TEST_PG") == "" {
		t.Log("PostgreSQL engines skipped: run `. .ci/pg` from the repository root first")
	} else {
		kv, err := Open(pgtest.Fresh(t), Options{NoSync: true, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kv.Close() })
		pageData(t, kv, 600)
		engines["postgres-kv"] = func(ctx context.Context, q PageQuery) (Page, error) { return kv.ReservationPage(ctx, q) }
		counts["postgres-kv"] = func(ctx context.Context, q PageQuery) (int, error) { return kv.ReservationCount(ctx, q) }
		lists, _, _ := relListsFrom(t, db)
		engines["native"], counts["native"] = lists.ReservationPage, lists.ReservationCount
	}
	rng := rand.New(rand.NewSource(25))
	nonEmpty := 0
	for i := range 120 {
		text := randomWhere(rng)
		w, err := query.Parse(text, t0)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		q := PageQuery{Sort: SortBy(rng.Intn(int(SortCount))), Desc: rng.Intn(2) == 0, Where: w, Limit: 1 + rng.Intn(60)}
		if rng.Intn(3) == 0 {
			// The tab's state beside the filter's (the same, another, or an
			// unknown outcome): bbolt narrows to one state's index range.
			q.State = []State{StateReserved, StateCancelled, StateOutcomeUnknown, StateOrderMissing}[rng.Intn(4)]
		}
		if len(PageSummaries(all, PageQuery{State: q.State, Where: w, Limit: domain.MaxPageLimit}).Rows) > 0 {
			nonEmpty++
		}
		if !sampled(i) {
			continue
		}
		// bbolt's paths of a big file, in turn.
		db.bk.SetListPaths(0, 0, 0)
		if i%3 == 1 {
			db.bk.SetListPaths(1, 10, 0)
		}
		if i%3 == 2 {
			db.bk.SetListPaths(1, 10, 5)
		}
		for name, page := range engines {
			t.Run(fmt.Sprintf("%d/%s/%s/%s/sort%d/desc=%v/limit%d", i, name, q.State, text, q.Sort, q.Desc, q.Limit), func(t *testing.T) {
				ctx := context.Background()
				checkPaging(t, q,
					func(q PageQuery) (keyedPage, error) {
						p, err := page(ctx, q)
						return resKeyed(p), err
					},
					func(q PageQuery) keyedPage { return resKeyed(PageSummaries(all, q)) },
					func(q PageQuery) (int, error) { return counts[name](ctx, q) })
			})
		}
	}
	if nonEmpty < 40 {
		t.Fatalf("only %d of 120 random filters found rows: the test's data or filters drifted", nonEmpty)
	}
}

// TestPageWhereMeaning pins what each field keeps in the reference, on
// rows whose values are known.
func TestPageWhereMeaning(t *testing.T) {
	d := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	rows := []Summary{
		{Key: "a", Customer: "Anna Müller", Email: "anna@example.com", Amount: d("100"), State: StateReserved, Created: t0},
		{Key: "b", Customer: "Jan Straße", Email: "jan@shop.example", Amount: d("100.01"), State: StateCaptured, Created: t0.AddDate(0, 0, -8)},
		{Key: "c", Customer: "Eva", Amount: d("50"), State: StateReserved}, // no time
		{Key: "d", Customer: "Lukas", Articles: "SKU-1 Wool scarf", Amount: d("200"), State: StateCancelled, Created: t0.Add(-time.Hour)},
	}
	for _, tc := range []struct{ filter, want string }{
		{"", "a b c d"},
		{"state:reserved", "a c"},
		{"amount:>100", "b d"},
		{"amount:>=100", "a b d"},
		{"amount:50..100", "a c"},
		{"amount:<100", "c"},
		{"created:<7d", "a d"},
		{"created:>7d", "b"},
		{"created:2026-03-02", "a d"},
		{"customer:mueller", "a"},
		{"customer:muller", "a"},
		{"customer:müller", "a"},
		{"customer:strasse", "b"},
		{"mueller", "a"},
		{"strasse", "b"},
		{"customer:example", ""}, // the e-mail is not the customer
		{"email:example", "a b"},
		{`"wool scarf"`, "d"},
		{`"scarf wool"`, ""},
		{"state:reserved amount:>60", "a"},
	} {
		w, err := query.Parse(tc.filter, t0)
		if err != nil {
			t.Fatal(err)
		}
		p := PageSummaries(rows, PageQuery{Where: w, Sort: SortInvoice})
		var got []string
		for _, r := range p.Rows {
			got = append(got, r.Summary.Key)
		}
		slices.Sort(got)
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%q: %q, want %q", tc.filter, g, tc.want)
		}
	}
}
