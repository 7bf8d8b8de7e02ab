package store

import (
	"context"
	"fmt"
	"testing"

	"paydesk/store/postgres"
)

// relListsFrom copies the reservations and transactions of db into a fresh
// database of the native engine (through the contract, as the rules write
// them, with the counters they keep) and returns its lists and what it
// holds.
func relListsFrom(t *testing.T, db *DB) (Lister, []Summary, []*Transaction) {
	t.Helper()
	return relListsScanning(t, db, 0)
}

// relListsScanning is relListsFrom whose pages with search words look at
// the first scan rows first (0: the engine's own number).
func relListsScanning(t *testing.T, db *DB, scan int) (Lister, []Summary, []*Transaction) {
	t.Helper()
	sums, err := db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var rs []*Reservation
	for _, s := range sums {
		r, err := db.Reservation(t.Context(), s.Key)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	txs, err := db.Transactions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	e := relLogsEngine(t)
	e.SetScanFirst(scan)
	relUpdate(t, e, func(tx *postgres.Tx) error {
		for _, r := range rs {
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
		}
		for _, x := range txs {
			if _, err := tx.PutTransaction(x); err != nil {
				return err
			}
		}
		return tx.AddTally(Tally{Reservations: int64(len(rs)), Transactions: int64(len(txs))})
	})
	var all []Summary
	var allTx []*Transaction
	if err := e.ViewTx(context.Background(), func(tx *postgres.Tx) error {
		var err error
		if all, err = tx.Summaries(); err != nil {
			return err
		}
		allTx, err = tx.Transactions()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(all) != len(rs) || len(allTx) != len(txs) {
		t.Fatalf("%d reservations and %d transactions read back, %d and %d put", len(all), len(allTx), len(rs), len(txs))
	}
	return e.Capabilities().Lists, all, allTx
}

// The reservation list paged from paydesk_reservations: every order both
// ways, filters and states, forwards, backwards and from a cursor in the
// middle, page by page as the in-memory reference pages the same rows —
// the expectations of TestReservationPage.
func TestRelationalReservationPage(t *testing.T) {
	db := openTest(t)
	pageData(t, db, 600)
	// 40: a page with a common word is answered from the first rows, one
	// with a rare word by the query over all; 0: the engine's number.
	for _, scan := range []int{0, 40} {
		t.Run(fmt.Sprintf("scan%d", scan), func(t *testing.T) { relReservationPages(t, db, scan) })
	}
}

func relReservationPages(t *testing.T, db *DB, scan int) {
	lists, all, _ := relListsScanning(t, db, scan)
	ctx := context.Background()
	cases := []struct {
		name   string
		filter string
		state  State
	}{
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
	for _, c := range cases {
		for sort := SortBy(0); sort < SortCount; sort++ {
			for _, desc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/sort%d/desc=%v", c.name, sort, desc), func(t *testing.T) {
					checkPaging(t, PageQuery{Sort: sort, Desc: desc, Filter: c.filter, State: c.state, Limit: 37},
						func(q PageQuery) (keyedPage, error) {
							p, err := lists.ReservationPage(ctx, q)
							return resKeyed(p), err
						},
						func(q PageQuery) keyedPage { return resKeyed(PageSummaries(all, q)) },
						func(q PageQuery) (int, error) { return lists.ReservationCount(ctx, q) })
				})
			}
		}
	}
	if _, err := lists.ReservationPage(ctx, PageQuery{Sort: SortCount}); err == nil {
		t.Error("a sort order that does not exist was answered")
	}
	if _, err := lists.ReservationPage(ctx, PageQuery{After: []byte("short")}); err == nil {
		t.Error("a cursor that is no position was answered")
	}
}

// The transaction list paged from paydesk_transactions, as
// TestTransactionPage expects it.
func TestRelationalTransactionPage(t *testing.T) {
	db := openTest(t)
	txPageData(t, db, 500)
	for _, scan := range []int{0, 40} {
		t.Run(fmt.Sprintf("scan%d", scan), func(t *testing.T) { relTransactionPages(t, db, scan) })
	}
}

func relTransactionPages(t *testing.T, db *DB, scan int) {
	lists, _, all := relListsScanning(t, db, scan)
	ctx := context.Background()
	cases := []struct {
		name   string
		filter string
		state  State
	}{
		{name: "all"},
		{name: "common word", filter: "a"},
		{name: "folded", filter: "MULLER"},
		{name: "kind words", filter: "giftcard rem"},
		{name: "two words", filter: "anna capture"},
		{name: "rare", filter: all[17].Key[:12]},
		{name: "provider invoice", filter: "pi0000004"},
		{name: "refund of", filter: all[3].Key},
		{name: "none", filter: "no such thing"},
		{name: "like characters", filter: "%_"},
		{name: "kind", state: State(KindGiftCardRemainder)},
		{name: "kind and word", state: State(KindCapture), filter: "anna"},
	}
	for _, c := range cases {
		for sort := SortBy(0); sort < TxSortCount; sort++ {
			for _, desc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/sort%d/desc=%v", c.name, sort, desc), func(t *testing.T) {
					checkPaging(t, PageQuery{Sort: sort, Desc: desc, Filter: c.filter, State: c.state, Limit: 37},
						func(q PageQuery) (keyedPage, error) {
							p, err := lists.TransactionPage(ctx, q)
							return txKeyed(p), err
						},
						func(q PageQuery) keyedPage { return txKeyed(PageTransactions(all, q)) },
						func(q PageQuery) (int, error) { return lists.TransactionCount(ctx, q) })
				})
			}
		}
	}
}
