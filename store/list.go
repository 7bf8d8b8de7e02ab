package store

import (
	"context"
	"fmt"
	"paydesk/store/domain"
)

// A list of a million reservations is never loaded whole: the console asks
// the store for the window on screen (ReservationPage), in a sort order,
// past a keyset cursor, with the filter applied in the store. The order
// and the filter are defined once (store/domain/list.go, store/domain/where.go); the engines page the lists themselves
// (Capabilities.Lists: the bbolt indexes and the kv tables in store/kv,
// SQL in store/postgres), and an engine without them is paged in memory
// here (PageSummaries, PageTransactions: the reference every engine is
// tested against).

// ReservationFilter is what the reservation list's filter takes.
var ReservationFilter = domain.ReservationFilter

// TransactionFilter is what the transaction list's filter takes (its kind
// is the list's State; status is the command line's --status).
var TransactionFilter = domain.TransactionFilter

// PageSummaries answers q over summaries held in memory: a store without
// indexes, a test's fake, and the reference the stores' tests compare with.
func PageSummaries(all []Summary, q PageQuery) Page { return domain.PageSummaries(all, q) }

// PageTransactions answers q over transactions held in memory, like
// PageSummaries.
func PageTransactions(all []*Transaction, q PageQuery) TxPage { return domain.PageTransactions(all, q) }

// ReservationPage returns one window of the reservation list: sorted and
// filtered in the store, by the engine (its indexes, its list table:
// Capabilities.Lists) or else in memory.
func (db *DB) ReservationPage(ctx context.Context, q PageQuery) (Page, error) {
	if err := q.Where.Check(ReservationFilter); err != nil {
		return Page{}, fmt.Errorf("reservation list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.ReservationPage(ctx, q)
	}
	if err := q.Check(SortCount); err != nil {
		return Page{}, err
	}
	all, err := db.LoadReservationSummaries(ctx)
	if err != nil {
		return Page{}, fmt.Errorf("reservation list: %w", err)
	}
	return PageSummaries(all, q), nil
}

// ReservationCount counts the rows that pass the query's filter and state
// (its cursor does not matter), for a Page whose Total is -1. A Limit > 0
// lets it stop counting there: the answer is then at most Limit (on
// PostgreSQL a filter that most rows pass is counted in a blink up to
// ten thousand, in seconds up to a million). Without a limit a count that
// takes too long is the planner's estimate.
func (db *DB) ReservationCount(ctx context.Context, q PageQuery) (int, error) {
	if err := q.Where.Check(ReservationFilter); err != nil {
		return 0, fmt.Errorf("reservation list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.ReservationCount(ctx, q)
	}
	return memCount(q, func(q PageQuery) (int, error) {
		all, err := db.LoadReservationSummaries(ctx)
		return PageSummaries(all, q).Total, err
	}, "reservation")
}

// TransactionPage returns one window of the transaction list, sorted and
// filtered in the store (q.Sort is a TxSort order, q.State a Kind or "").
func (db *DB) TransactionPage(ctx context.Context, q PageQuery) (TxPage, error) {
	if err := q.Where.Check(TransactionFilter); err != nil {
		return TxPage{}, fmt.Errorf("transaction list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.TransactionPage(ctx, q)
	}
	if err := q.Check(TxSortCount); err != nil {
		return TxPage{}, err
	}
	all, err := db.Transactions(ctx)
	if err != nil {
		return TxPage{}, fmt.Errorf("transaction list: %w", err)
	}
	return PageTransactions(all, q), nil
}

// TransactionCount counts the transactions that pass q's filter and
// state, up to q.Limit when it is > 0 (see ReservationCount).
func (db *DB) TransactionCount(ctx context.Context, q PageQuery) (int, error) {
	if err := q.Where.Check(TransactionFilter); err != nil {
		return 0, fmt.Errorf("transaction list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.TransactionCount(ctx, q)
	}
	return memCount(q, func(q PageQuery) (int, error) {
		all, err := db.Transactions(ctx)
		return PageTransactions(all, q).Total, err
	}, "transaction")
}

// memCount counts the rows of a list paged in memory, up to q.Limit when
// it is > 0: total pages the whole list through q without its cursor.
func memCount(q PageQuery, total func(PageQuery) (int, error), name string) (int, error) {
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last, q.Limit = nil, nil, nil, false, 1
	n, err := total(q)
	if err != nil {
		return 0, fmt.Errorf("%s count: %w", name, err)
	}
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n, nil
}
