package kv

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store/repotest"
)

// t0 is the time the tests' records are made at.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// put writes records as given through the contract, in one transaction:
// the engine keeps what it is handed (the rules that derive a
// reservation's amounts are the store's, and not what these tests check).
func put(t testing.TB, db *DB, rs []*Reservation, ts []*Transaction) {
	t.Helper()
	err := db.Repo().Update(t.Context(), func(tx RepoTx) error {
		for _, x := range ts {
			if _, err := tx.PutTransaction(x); err != nil {
				return err
			}
		}
		for _, r := range rs {
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listData writes n random reservations for the lists
// (repotest.ListData), then some of them again.
func listData(t testing.TB, db *DB, n int) {
	t.Helper()
	first, again := repotest.ListData(n)
	put(t, db, first, nil)
	put(t, db, again, nil)
}

// summaries is every reservation's list row, as the contract reads them.
func summaries(t testing.TB, db *DB) []Summary {
	t.Helper()
	var all []Summary
	err := db.Repo().View(t.Context(), func(tx RepoTx) (err error) {
		all, err = tx.Summaries()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// rowKeys are a page's reservation keys in order.
func rowKeys(p Page) []string {
	out := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		out[i] = r.Summary.Key
	}
	return out
}
