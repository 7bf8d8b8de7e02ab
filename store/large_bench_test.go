package store_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/query"
	"paydesk/store"
)

// The large-list benchmarks (docs/large.md) run on a cache of a million
// generated reservations that is made once, beforehand, with the generator:
//
//	go run ./store/storetest/gen -db /tmp/1m.db -n 1000000
//	go run ./store/storetest/gen -db postgres://… -from /tmp/1m.db
//	PAYDESK_LARGE=/tmp/1m.db go test -run X -bench Large ./store/
//	PAYDESK_LARGE=postgres://… go test -run X -bench Large ./store/
//
// Without PAYDESK_LARGE they skip: they never run in the normal test run.

func largeDB(b *testing.B) (string, *store.DB) {
	b.Helper()
	where := os.Getenv("PAYDESK_LARGE")
	if where == "" || testing.Short() {
		b.Skip("set PAYDESK_LARGE to a cache made by store/storetest/gen (see large_bench_test.go)")
	}
	db, err := store.Open(where, store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return where, db
}

// screen is the rows of one screen and a margin: what the console reads
// first.
const screen = 200

// BenchmarkLargeOpenFirstPage opens the cache and reads the first page of
// the list, newest first: what the console waits for before its first
// frame.
func BenchmarkLargeOpenFirstPage(b *testing.B) {
	where, db := largeDB(b)
	_ = db.Close()
	b.ReportAllocs()
	for b.Loop() {
		db, err := store.Open(where, store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		p, err := db.ReservationPage(b.Context(), store.PageQuery{Sort: store.SortCreated, Desc: true, Limit: screen})
		if err != nil || len(p.Rows) != screen {
			b.Fatalf("%d rows: %v", len(p.Rows), err)
		}
		_ = db.Close()
	}
}

// BenchmarkLargePageTurn reads the page after a cursor deep in the list,
// in each sort order.
func BenchmarkLargePageTurn(b *testing.B) {
	_, db := largeDB(b)
	for _, sort := range []store.SortBy{store.SortCreated, store.SortCustomer, store.SortAmount} {
		b.Run(fmt.Sprintf("sort%d", sort), func(b *testing.B) { pageTurn(b, sort, resPager(db)) })
	}
}

// pager reads one page of a list: its row count, total and last position.
type pager func(q store.PageQuery) (rows, total int, last []byte, err error)

func resPager(db *store.DB) pager {
	return func(q store.PageQuery) (int, int, []byte, error) {
		p, err := db.ReservationPage(context.Background(), q)
		if err != nil || len(p.Rows) == 0 {
			return 0, p.Total, nil, err
		}
		return len(p.Rows), p.Total, p.Rows[len(p.Rows)-1].Pos, nil
	}
}

func txPager(db *store.DB) pager {
	return func(q store.PageQuery) (int, int, []byte, error) {
		p, err := db.TransactionPage(context.Background(), q)
		if err != nil || len(p.Rows) == 0 {
			return 0, p.Total, nil, err
		}
		return len(p.Rows), p.Total, p.Rows[len(p.Rows)-1].Pos, nil
	}
}

// pageTurn times the page after a cursor half-way down a list.
func pageTurn(b *testing.B, sort store.SortBy, page pager) {
	// A cursor half-way: walk there once.
	q := store.PageQuery{Sort: sort, Desc: true, Limit: 10_000}
	for walked, total := 0, 1; walked < total/2; {
		n, t, last, err := page(q)
		if err != nil || n == 0 {
			b.Fatalf("%d rows: %v", n, err)
		}
		if t > 0 {
			total = t
		}
		walked += n
		q.After = last
	}
	q.Limit = screen
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n, _, _, err := page(q)
		if err != nil || n != screen {
			b.Fatalf("%d rows: %v", n, err)
		}
	}
}

// largeTerms are the filter's kinds of query, each a series of different
// words of the same kind.
var largeTerms = []struct {
	name  string
	terms func(i int) string
}{
	// The first letter typed: nearly every row matches.
	{"letter", func(i int) string { return string("aeimnorst"[i%9]) }},
	// A surname: one customer in fourteen.
	{"surname", func(i int) string {
		return []string{"jansen", "bakker", "visser", "müller", "schmidt", "gruber", "wagner"}[i%7]
	}},
	// An invoice: one row.
	{"invoice", func(i int) string { return fmt.Sprintf("ord-%07d", 1+(i*7919)%1_000_000) }},
	// An e-mail address: one row.
	{"email", func(i int) string { return fmt.Sprintf("customer%d@", (i*104729)%1_000_000) }},
}

// BenchmarkLargeFilter is one keystroke of the filter: the first page of a
// new query and its count as the console first asks it (up to 10,001: it
// shows "10,000+" until the whole count comes, BenchmarkLargeCount). Each
// iteration asks a different query of the same kind, so no answer is
// reused.
func BenchmarkLargeFilter(b *testing.B) {
	_, db := largeDB(b)
	for _, k := range largeTerms {
		b.Run(k.name, func(b *testing.B) {
			keystroke(b, k.terms, resPager(db), func(q store.PageQuery) (int, error) { return db.ReservationCount(b.Context(), q) })
		})
	}
}

// keystroke times a filter's first page and first count, a different
// term each time.
func keystroke(b *testing.B, terms func(i int) string, page pager, count func(store.PageQuery) (int, error)) {
	b.ReportAllocs()
	i, found := 0, 0
	for b.Loop() {
		q := store.PageQuery{Sort: store.SortCreated, Desc: true, Filter: terms(i), Limit: screen}
		_, n, _, err := page(q)
		if err != nil {
			b.Fatal(err)
		}
		if n < 0 {
			q.Limit = 10_001
			if n, err = count(q); err != nil {
				b.Fatal(err)
			}
		}
		found += n
		i++
	}
	b.ReportMetric(float64(found)/float64(i), "matches/op")
}

// BenchmarkLargeFilterPageOnly is the keystroke's first page alone, the
// count left to its own read (the console shows the rows first, the count
// when it comes).
func BenchmarkLargeFilterPageOnly(b *testing.B) {
	_, db := largeDB(b)
	for _, k := range largeTerms {
		b.Run(k.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := db.ReservationPage(b.Context(), store.PageQuery{Sort: store.SortCreated, Desc: true, Filter: k.terms(i), Limit: screen}); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkLargeTyping types "müller" one letter at a time: each keystroke
// narrows the last (on bbolt only the rows the last one found are searched
// again). A keystroke is its page and, when the page did not count, the
// first count (up to 10,001); the "-page" figures are until the page, when
// the console shows the rows (the count follows in its own read).
func BenchmarkLargeTyping(b *testing.B) {
	_, db := largeDB(b)
	b.ReportAllocs()
	var k keystrokes
	for b.Loop() {
		k.typeWord(b, db, "müller")
		// Another query in between, so the next round starts afresh.
		if _, err := db.ReservationPage(b.Context(), store.PageQuery{Filter: "zz-none"}); err != nil {
			b.Fatal(err)
		}
	}
	k.report(b)
}

// keystrokes are the times of filter keystrokes typed one at a time.
type keystrokes struct {
	n                  int
	all, slowest       time.Duration // page and first count
	pages, slowestPage time.Duration // the page alone
}

// typeWord types word a letter at a time, as the console asks: each
// keystroke's page, then its first count when the page did not count.
func (k *keystrokes) typeWord(b *testing.B, db *store.DB, word string) {
	w := []rune(word)
	for n := 1; n <= len(w); n++ {
		t := time.Now()
		q := store.PageQuery{Sort: store.SortCreated, Desc: true, Filter: string(w[:n]), Limit: screen}
		p, err := db.ReservationPage(b.Context(), q)
		if err != nil {
			b.Fatal(err)
		}
		// The rows are on screen here; the first count follows.
		d := time.Since(t)
		k.slowestPage, k.pages = max(k.slowestPage, d), k.pages+d
		if p.Total < 0 {
			q.Limit = 10_001
			if _, err := db.ReservationCount(b.Context(), q); err != nil {
				b.Fatal(err)
			}
		}
		d = time.Since(t)
		k.n, k.slowest, k.all = k.n+1, max(k.slowest, d), k.all+d
	}
}

func (k *keystrokes) report(b *testing.B) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(k.all)/float64(k.n), "ms/keystroke")
	b.ReportMetric(ms(k.slowest), "ms-slowest")
	b.ReportMetric(ms(k.pages)/float64(k.n), "ms/keystroke-page")
	b.ReportMetric(ms(k.slowestPage), "ms-slowest-page")
}

// BenchmarkLargeStateFilter is the state filter (v) on a common and a rare
// state.
func BenchmarkLargeStateFilter(b *testing.B) {
	_, db := largeDB(b)
	for _, st := range []store.State{store.StateReserved, store.StateDeclined} {
		b.Run(string(st), func(b *testing.B) {
			for b.Loop() {
				q := store.PageQuery{Sort: store.SortCreated, Desc: true, State: st, Limit: screen}
				p, err := db.ReservationPage(b.Context(), q)
				if err != nil || len(p.Rows) == 0 {
					b.Fatalf("%d rows: %v", len(p.Rows), err)
				}
			}
		})
	}
}

// BenchmarkLargeWhere is a filter of the language's conditions, its first
// screen and its count (a page's Total, on PostgreSQL a count after it),
// as the console asks them: a
// state and a created range (read from the state index alone), a created
// range, a state and a created range with an amount (the range's records
// checked), a customer (the rows whose search text holds the
// name) and an amount alone (the amount index). Each round's range ends a
// second earlier, so no round reuses the last one's rows.
func BenchmarkLargeWhere(b *testing.B) {
	_, db := largeDB(b)
	end := time.Date(2026, 11, 14, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		state store.State
		where func(i int) query.Query
	}{
		{"state and created", store.StateReserved, func(i int) query.Query {
			return query.Query{Created: &query.TimeRange{To: end.Add(-time.Duration(i) * time.Second)}}
		}},
		{"created", "", func(i int) query.Query {
			return query.Query{Created: &query.TimeRange{To: end.Add(-time.Duration(i) * time.Second)}}
		}},
		{"state, created and amount", store.StateReserved, func(i int) query.Query {
			return query.Query{Created: &query.TimeRange{From: end.AddDate(0, 0, -1), To: end.Add(-time.Duration(i) * time.Second)},
				Amount: &query.AmountRange{Min: decimal.NewFromInt(100), HasMin: true}}
		}},
		{"customer", "", func(i int) query.Query {
			return query.Query{Customer: []string{[]string{"müller", "bakker", "jansen", "visser", "schmidt"}[i%5]}, Created: &query.TimeRange{To: end.Add(-time.Duration(i) * time.Second)}}
		}},
		{"amount", "", func(i int) query.Query {
			return query.Query{Amount: &query.AmountRange{Min: decimal.NewFromInt(int64(100 + i)), HasMin: true}}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n, i := 0, 0
			for b.Loop() {
				q := store.PageQuery{Sort: store.SortCreated, Desc: true, State: c.state, Where: c.where(i), Limit: screen}
				p, err := db.ReservationPage(b.Context(), q)
				if err != nil || len(p.Rows) == 0 {
					b.Fatalf("%d rows: %v", len(p.Rows), err)
				}
				if n = p.Total; n < 0 {
					// PostgreSQL: the count is asked after the page.
					q.Limit = 0
					if n, err = db.ReservationCount(b.Context(), q); err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
			b.ReportMetric(float64(n), "count")
		})
	}
}

// BenchmarkLargeCount is the whole count of a filter, which the console
// asks after the first one stopped at 10,000 (a different word each time:
// nothing cached).
func BenchmarkLargeCount(b *testing.B) {
	_, db := largeDB(b)
	for _, c := range []struct {
		name  string
		terms []string
	}{{"letter", []string{"a", "e", "i", "m", "n", "o", "r", "s", "t"}}, {"surname", []string{"jansen", "bakker", "visser", "müller", "schmidt", "gruber", "wagner"}}} {
		b.Run(c.name, func(b *testing.B) {
			n, i := 0, 0
			for b.Loop() {
				var err error
				if n, err = db.ReservationCount(b.Context(), store.PageQuery{Filter: c.terms[i%len(c.terms)]}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(n), "count")
		})
	}
}

// The transaction list at a million reservations (550,000 captures).

// BenchmarkLargeTxOpen is what opening the transactions tab reads: the
// first page (now) beside every transaction (Transactions, what the tab
// read before it was paged).
func BenchmarkLargeTxOpen(b *testing.B) {
	_, db := largeDB(b)
	b.Run("first-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := db.TransactionPage(b.Context(), store.PageQuery{Sort: store.TxSortCreated, Desc: true, Limit: screen})
			if err != nil || len(p.Rows) != screen {
				b.Fatalf("%d rows: %v", len(p.Rows), err)
			}
		}
	})
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.Transactions(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLargeTxPageTurn reads the transactions' page after a cursor
// half-way, by time, customer and amount.
func BenchmarkLargeTxPageTurn(b *testing.B) {
	_, db := largeDB(b)
	for _, sort := range []store.SortBy{store.TxSortCreated, store.TxSortCustomer, store.TxSortAmount} {
		b.Run(fmt.Sprintf("sort%d", sort), func(b *testing.B) { pageTurn(b, sort, txPager(db)) })
	}
}

// largeTxTerms are the transaction filter's kinds of query.
var largeTxTerms = []struct {
	name  string
	terms func(i int) string
}{
	{"letter", largeTerms[0].terms},
	{"surname", largeTerms[1].terms},
	// An order's invoice: its one capture (or none).
	{"invoice", largeTerms[2].terms},
	// A reservation number typed in part: a few.
	{"number", func(i int) string { return fmt.Sprintf("r1%07d", (i*7919)%1_000_000/10) }},
}

// BenchmarkLargeTxFilter is one keystroke of the transactions' filter:
// the first page and the first count.
func BenchmarkLargeTxFilter(b *testing.B) {
	_, db := largeDB(b)
	for _, k := range largeTxTerms {
		b.Run(k.name, func(b *testing.B) {
			keystroke(b, k.terms, txPager(db), func(q store.PageQuery) (int, error) { return db.TransactionCount(b.Context(), q) })
		})
	}
}

// BenchmarkLargeTxKind is the attention tab's gift card query: a kind that
// no generated transaction has, then captures.
func BenchmarkLargeTxKind(b *testing.B) {
	_, db := largeDB(b)
	for _, k := range []store.Kind{store.KindGiftCardPay, store.KindCapture} {
		b.Run(string(k), func(b *testing.B) {
			for b.Loop() {
				if _, err := db.TransactionPage(b.Context(), store.PageQuery{Sort: store.TxSortCreated, Desc: true, State: store.State(k), Limit: 5000}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
