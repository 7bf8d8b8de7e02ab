package store

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/store/domain"
	"paydesk/store/kv"
)

// pageData writes n reservations of every state, with names that fold
// (Müller), shared invoices' prefixes and equal amounts and times (ties),
// then changes some (a cancel, an address): the indexes must follow.
func pageData(t *testing.T, db *DB, n int) {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	names := []string{"Anna Müller", "Jan de Vries", "Lukas Gruber", "Eva Bakker", "Émile Zola", "anna muller"}
	titles := []string{"Espresso cups", "Hiking boots", "Wool scarf", "Café crème"}
	var rs []*Reservation
	for i := range n {
		name := names[rng.Intn(len(names))]
		first, last, _ := strings.Cut(name, " ")
		created := t0.Add(-time.Duration(rng.Intn(n/2+1)) * time.Minute) // ties on purpose
		r := &Reservation{Key: fmt.Sprintf("%032X", rng.Uint64()), ReservationNumber: fmt.Sprintf("R%07d", i),
			Invoice: fmt.Sprintf("INV-%05d", rng.Intn(n*2)), Currency: "EUR", LinesKnown: true, Created: created,
			Original: Update{Billing: api.Address{FirstName: first, LastName: last, Country: "NL", Email: fmt.Sprintf("c%d@example.com", i)},
				Articles: []api.Article{{Number: fmt.Sprintf("SKU-%d", rng.Intn(20)), Title: titles[rng.Intn(len(titles))],
					Type: api.ArticleTypeGeneral, Price: decimal.New(int64(100*(1+rng.Intn(5))), -2), Quantity: 1, Vat: decimal.NewFromInt(21)}}},
			Status: Status{Code: api.StatusSuccess, Time: created}}
		switch rng.Intn(6) {
		case 0:
			r.Status = Status{Code: api.StatusPendingProcessing, Time: created}
		case 1:
			r.Status = Status{Code: api.StatusRejected, Time: created}
		case 2:
			r.Requests = append(r.Requests, Request{Key: fmt.Sprintf("C%031X", rng.Uint64()), Action: api.ActionCancelReservation,
				Status: Status{Code: api.StatusSuccess, Time: created.Add(time.Hour)}})
		}
		if i%11 == 0 {
			r.LinesKnown = false // seen only in a push
		}
		if i%97 == 0 {
			r.Key = PlaceholderPrefix + r.Invoice // an order without its push
		}
		rs = append(rs, r)
	}
	if err := db.PutReservations(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	// Changes: states, customers (the customer index and the search text
	// move) and untouched rows written again.
	var again []*Reservation
	for i, r := range rs {
		switch i % 7 {
		case 0:
			r.Requests = append(r.Requests, Request{Key: fmt.Sprintf("D%031X", i), Action: api.ActionCancelReservation,
				Status: Status{Code: api.StatusSuccess, Time: r.Created.Add(2 * time.Hour)}})
			again = append(again, r)
		case 3:
			r.Original.Billing.LastName = "Østergaard"
			again = append(again, r)
		case 5:
			again = append(again, r)
		}
	}
	if err := db.PutReservations(t.Context(), again); err != nil {
		t.Fatal(err)
	}
}

func posList(p Page) []string {
	out := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		out[i] = r.Summary.Key
	}
	return out
}

// TestReservationPage pages through the list in every order, with filters
// and state filters, forwards from the top, backwards from the end and
// from cursors in the middle, and compares each page with the in-memory
// reference over all summaries.
func TestReservationPage(t *testing.T) {
	for _, small := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("small=%v", small), func(t *testing.T) { testReservationPage(t, small) })
	}
}

// testReservationPage; small makes bbolt take the paths of a big file: a
// common word walks the sort index checking rows (1) or, when the walk
// runs long, searches every block after all (2); a set of more than 10
// rows is walked, not sorted.
func testReservationPage(t *testing.T, small int) {
	db := openTest(t)
	switch small {
	case 1:
		db.bk.SetListPaths(1, 10, 0)
	case 2:
		db.bk.SetListPaths(1, 10, 5)
	}
	pageData(t, db, 600)
	all, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name   string
		filter string
		state  State
	}
	cases := []tc{
		{name: "all"},
		{name: "common word", filter: "a"},
		{name: "folded", filter: "MULLER"},
		{name: "accent in the query", filter: "müll"},
		{name: "two words", filter: "anna cups"},
		{name: "rare", filter: all[17].ReservationNumber},
		{name: "e-mail", filter: "c42@example"},
		{name: "none", filter: "no such thing"},
		{name: "like characters", filter: "%_"},
		{name: "state", state: StateCancelled},
		{name: "state and word", state: StateReserved, filter: "boots"},
		{name: "outcome unknown", state: StateOutcomeUnknown},
		{name: "order missing", state: StateOrderMissing},
	}
	i := 0
	for _, c := range cases {
		for sort := SortBy(0); sort < SortCount; sort++ {
			for _, desc := range []bool{false, true} {
				if i++; !sampled(i) {
					continue
				}
				t.Run(fmt.Sprintf("%s/sort%d/desc=%v", c.name, sort, desc), func(t *testing.T) {
					checkPaging(t, PageQuery{Sort: sort, Desc: desc, Filter: c.filter, State: c.state, Limit: 37},
						func(q PageQuery) (keyedPage, error) {
							p, err := db.ReservationPage(t.Context(), q)
							return resKeyed(p), err
						},
						func(q PageQuery) keyedPage { return resKeyed(PageSummaries(all, q)) },
						func(q PageQuery) (int, error) { return db.ReservationCount(t.Context(), q) })
				})
			}
		}
	}
}

// keyedPage is a page of either list, by keys, for checkPaging.
type keyedPage struct {
	keys       []string
	pos        [][]byte
	total      int
	more, less bool
}

func resKeyed(p Page) keyedPage {
	k := keyedPage{keys: posList(p), total: p.Total, more: p.More, less: p.Less}
	for _, r := range p.Rows {
		k.pos = append(k.pos, r.Pos)
	}
	return k
}

// checkPaging pages through a list (get) forwards from the top, backwards
// from the end and from a cursor in the middle, and compares each with
// the in-memory reference (ref) over all rows; and counts.
func checkPaging(t *testing.T, base PageQuery, get func(PageQuery) (keyedPage, error), ref func(PageQuery) keyedPage, count func(PageQuery) (int, error)) {
	t.Helper()
	all := base
	all.Limit = domain.MaxPageLimit
	want := ref(all)
	// Forwards.
	var got []string
	q := base
	// A page holds at least a row: as many pages as rows end the walk.
	for range len(want.keys) + 1 {
		p, err := get(q)
		if err != nil {
			t.Fatal(err)
		}
		if p.total >= 0 && p.total != want.total {
			t.Fatalf("total %d, want %d", p.total, want.total)
		}
		if (q.After != nil) != p.less && len(got) > 0 {
			t.Fatalf("page after %d rows: Less = %v", len(got), p.less)
		}
		got = append(got, p.keys...)
		if !p.more {
			break
		}
		q.After = p.pos[len(p.pos)-1]
	}
	if !slices.Equal(got, want.keys) {
		t.Fatalf("forwards: %d rows, want %d\n got %.5q\nwant %.5q", len(got), len(want.keys), got, want.keys)
	}
	// From a row in the middle: it and the ones after it.
	if len(want.keys) > 2 {
		q = base
		q.From = want.pos[len(want.pos)/2]
		p, err := get(q)
		if err != nil {
			t.Fatal(err)
		}
		w := ref(q).keys
		if !slices.Equal(p.keys, w) || !p.less {
			t.Fatalf("from the middle: %.3q (less %v), want %.3q", p.keys, p.less, w)
		}
	}
	// Backwards from the end.
	got = nil
	q = base
	q.Last = true
	for range len(want.keys) + 1 {
		p, err := get(q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(slices.Clone(p.keys), got...)
		if !p.less {
			break
		}
		q.Last, q.Before = false, p.pos[0]
	}
	if !slices.Equal(got, want.keys) {
		t.Fatalf("backwards: %d rows, want %d", len(got), len(want.keys))
	}
	n, err := count(PageQuery{Sort: base.Sort, Filter: base.Filter, State: base.State, Where: base.Where})
	if err != nil || n != want.total {
		t.Fatalf("count %d (%v), want %d", n, err, want.total)
	}
}

// TestReservationPageLive: rows written after a cursor was taken show in
// the next page, a deleted row does not, and a cursor whose row is gone
// still places the next page.
func TestReservationPageLive(t *testing.T) {
	db := openTest(t)
	if db.rel != nil {
		// The row is deleted below the way the bucket layout loses an
		// order's placeholder; the native engine's lists are SQL over its
		// relations (TestRelationalReservationPage).
		t.Skip("a bucket layout: the native engine has no buckets")
	}
	pageData(t, db, 50)
	q := PageQuery{Sort: SortCreated, Desc: true, Limit: 10}
	p, err := db.ReservationPage(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	// The cursor's own row leaves the list (its placeholder joined).
	cursor := p.Rows[9]
	newer := &Reservation{Key: "NEWEST", Invoice: "INV-NEW", Currency: "EUR", Created: t0.Add(time.Hour),
		Status: Status{Code: api.StatusSuccess, Time: t0.Add(time.Hour)}}
	if err := db.PutReservations(t.Context(), []*Reservation{newer}); err != nil {
		t.Fatal(err)
	}
	top, err := db.ReservationPage(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if top.Rows[0].Summary.Key != "NEWEST" || top.Total != p.Total+1 {
		t.Fatalf("the new row is not on top: %s, total %d (was %d)", top.Rows[0].Summary.Key, top.Total, p.Total)
	}
	if err := db.bk.Engine().Update(func(tx Tx) error { return unindexThenDelete(tx, cursor.Summary.Key) }); err != nil {
		t.Fatal(err)
	}
	q.After = cursor.Pos
	next, err := db.ReservationPage(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := db.LoadReservationSummaries(t.Context())
	want := PageSummaries(all, q)
	if !slices.Equal(posList(next), posList(want)) {
		t.Fatalf("after a gone cursor: %q, want %q", posList(next), posList(want))
	}
	// The search finds the new row, and no longer the gone one.
	for _, c := range []struct {
		filter string
		n      int
	}{{"inv-new", 1}, {cursor.Summary.Key, 0}} {
		got, err := db.ReservationPage(t.Context(), PageQuery{Filter: c.filter})
		if err != nil || len(got.Rows) != c.n {
			t.Fatalf("filter %q: %d rows (%v), want %d", c.filter, len(got.Rows), err, c.n)
		}
	}
}

// unindexThenDelete removes a reservation's row the way an order's
// placeholder goes.
func unindexThenDelete(tx Tx, key string) error {
	if err := kv.UnindexSummary(tx, key); err != nil {
		return err
	}
	return tx.Bucket(bReservation).Delete([]byte(key))
}

// TestListTableFillAndBulkCopy: a file copied into PostgreSQL with COPY
// lists like the file; and a list table found empty with its marker set
// (a database from before migration 5) is filled from the summaries on
// open.
func TestListTableFillAndBulkCopy(t *testing.T) {
	pgtest.OwnEngine(t)
	url := pgtest.Fresh(t)
	file, err := Open(filepath.Join(t.TempDir(), "src.db"), Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pageData(t, file, 300)
	txPageData(t, file, 300)
	txs, err := file.Transactions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The kv engine's list tables: what a bulk copy writes into (db copy
	// then converts) and what a database from before migration 5 lacks.
	dst, err := Open(url, Options{NoSync: true, kvEngine: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := file.CopyBulkTo(t.Context(), dst); err != nil {
		t.Fatal(err)
	}
	if err := file.CopyBulkTo(t.Context(), dst); err == nil {
		t.Fatal("a second bulk copy into a full database went ahead")
	}
	all, err := file.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	same := func(db *DB, what string) {
		t.Helper()
		q := PageQuery{Sort: SortCustomer, Filter: "muller", Limit: 1000}
		p, err := db.ReservationPage(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if w := PageSummaries(all, q); !slices.Equal(posList(p), posList(w)) || len(w.Rows) == 0 {
			t.Fatalf("%s: %d rows, want %d", what, len(p.Rows), len(w.Rows))
		}
		q = PageQuery{Sort: TxSortCustomer, Filter: "muller", Limit: 1000}
		tp, err := db.TransactionPage(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if w := txKeyed(PageTransactions(txs, q)); !slices.Equal(txKeyed(tp).keys, w.keys) || len(w.keys) == 0 {
			t.Fatalf("%s: %d transactions, want %d", what, len(tp.Rows), len(w.keys))
		}
		checkGroups(t, db, txs)
	}
	same(dst, "after the bulk copy")
	// Empty the table and set the marker, as migration 5 leaves an older
	// database.
	pool := dst.bk.Pool()
	if _, err := pool.Exec(context.Background(), `DELETE FROM paydesk_summary; INSERT INTO paydesk_summary_fill VALUES (true);
		DELETE FROM paydesk_txlist; INSERT INTO paydesk_txlist_fill VALUES (true)`); err != nil {
		t.Fatal(err)
	}
	_ = dst.Close()
	again, err := Open(url, Options{NoSync: true, kvEngine: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	same(again, "after the fill on open")
}
