package kv

import (
	"context"
	"errors"
	"fmt"
)

// The bucket-backed engine's lists (Capabilities.Lists): the reservation
// and transaction lists paged from bbolt's indexes (pagebolt.go,
// pagetx.go) or from the kv PostgreSQL's list tables (pagepg.go).

// kvLister pages the lists of the bucket-backed engine.
type kvLister struct{ db *DB }

func (k kvLister) ReservationPage(ctx context.Context, q PageQuery) (Page, error) {
	p, err := resList.page(ctx, k.db, q)
	return Page{Rows: p.rows, Total: p.total, More: p.more, Less: p.less}, err
}

func (k kvLister) ReservationCount(ctx context.Context, q PageQuery) (int, error) {
	return resList.count(ctx, k.db, q)
}

func (k kvLister) TransactionPage(ctx context.Context, q PageQuery) (TxPage, error) {
	p, err := txList.page(ctx, k.db, q)
	return TxPage{Rows: p.rows, Total: p.total, More: p.more, Less: p.less}, err
}

func (k kvLister) TransactionCount(ctx context.Context, q PageQuery) (int, error) {
	return txList.count(ctx, k.db, q)
}

// page reads one window of the list from the engine's indexes or table.
func (l *storeList[R, T]) page(ctx context.Context, db *DB, q PageQuery) (listPage[R], error) {
	if err := q.Check(l.sorts); err != nil {
		return listPage[R]{}, err
	}
	if err := ctx.Err(); err != nil {
		return listPage[R]{}, fmt.Errorf("%s list: %w", l.name, err)
	}
	var p listPage[R]
	var err error
	switch {
	case db.file != nil:
		defer db.listReading()()
		err = db.view(func(tx Tx) error {
			kp, err := l.cache(db).boltPage(ctx, tx.(boltTx), l.bolt, q)
			if err != nil {
				return err
			}
			p.total, p.more, p.less = kp.total, kp.more, kp.less
			p.rows, err = pageRows(tx, l.bolt, kp, l.boltDec, l.row)
			return err
		})
	case db.pg() != nil:
		var kp keyPage
		if kp, err = db.pgPage(l.pg, q); err == nil {
			p.total, p.more, p.less = kp.total, kp.more, kp.less
			p.rows, err = valueRows(kp, l.dec, l.row)
		}
	default:
		err = errors.New("neither bbolt nor PostgreSQL")
	}
	if err != nil {
		return listPage[R]{}, fmt.Errorf("%s list: %w", l.name, err)
	}
	return p.whole(), nil
}

func (l *storeList[R, T]) count(ctx context.Context, db *DB, q PageQuery) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("%s count: %w", l.name, err)
	}
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last, q.Limit = nil, nil, nil, false, 1
	n := 0
	var err error
	switch {
	case db.pg() != nil:
		n, err = db.pgCount(l.pg, q, upTo)
	case db.file != nil:
		defer db.listReading()()
		err = db.view(func(tx Tx) (err error) {
			n, err = l.cache(db).boltCount(ctx, tx.(boltTx), l.bolt, q, upTo)
			return err
		})
	default:
		err = errors.New("neither bbolt nor PostgreSQL")
	}
	if err != nil {
		return 0, fmt.Errorf("%s count: %w", l.name, err)
	}
	return n, nil
}

func (db *DB) pg() *pgEngine {
	e, _ := db.eng.(*pgEngine)
	return e
}
