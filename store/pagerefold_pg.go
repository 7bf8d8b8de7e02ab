package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"paydesk/internal/fold"
	"paydesk/store/kvlayout"
)

// On PostgreSQL the lists' search texts are a column of their tables
// (paydesk_summary and paydesk_txlist on the kv engine, paydesk_reservations
// and paydesk_transactions on the native one). A database whose texts an
// older folding wrote has them folded again at open, like a bbolt file
// (pagerefold.go): each table in key order, a chunk at a time, a row
// written only when its text changes, so a cut run goes on where it
// stopped at the next open. The version is kept in paydesk_numbers
// ('fold-version'), written when every text is done.

const pgRefoldChunk = 2000

// pgRefoldTable is one table to fold again: sel reads a chunk of rows after
// a key ($1) in key order (LIMIT $2) and text makes a row's key and new
// search text.
type pgRefoldTable struct {
	name  string
	first any // the key before every key
	sel   string
	text  func(rows pgx.Rows, f *fold.Folder) (key any, search string, err error)
	upd   string // $1 key, $2 text
}

var kvRefold = []pgRefoldTable{
	{name: "paydesk_summary", first: []byte{}, sel: `SELECT k, v FROM paydesk_summary WHERE k > $1 ORDER BY k LIMIT $2`,
		text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return nil, "", err
			}
			s, err := kvlayout.DecodeSummary(v)
			if err != nil {
				return nil, "", fmt.Errorf("summary %s: %w", k, err)
			}
			return k, pgSearchText(AppendSearchText(nil, &s, f)), nil
		},
		upd: `UPDATE paydesk_summary SET search = $2 WHERE k = $1 AND search <> $2`},
	{name: "paydesk_txlist", first: []byte{}, sel: `SELECT k, v FROM paydesk_txlist WHERE k > $1 ORDER BY k LIMIT $2`,
		text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return nil, "", err
			}
			t, err := kvlayout.DecodeTx(v)
			if err != nil {
				return nil, "", fmt.Errorf("transaction %s: %w", k, err)
			}
			return k, pgSearchText(AppendTxSearchText(nil, t, f)), nil
		},
		upd: `UPDATE paydesk_txlist SET search = $2 WHERE k = $1 AND search <> $2`},
}

var relRefold = []pgRefoldTable{
	{name: "paydesk_reservations", first: "", sel: `SELECT ` + pgSummarySelect + ` FROM paydesk_reservations r WHERE r.key > $1 ORDER BY r.key LIMIT $2`,
		text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			s, err := scanSummary(rows)
			if err != nil {
				return nil, "", err
			}
			return s.Key, pgSearchText(AppendSearchText(nil, &s, f)), nil
		},
		upd: `UPDATE paydesk_reservations SET search = $2 WHERE key = $1 AND search <> $2`},
	{name: "paydesk_transactions", first: "", sel: `SELECT ` + pgTxSelect + ` FROM paydesk_transactions WHERE key > $1 ORDER BY key LIMIT $2`,
		text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			t, err := scanTxRow(rows)
			if err != nil {
				return nil, "", err
			}
			return t.Key, pgSearchText(AppendTxSearchText(nil, t, f)), nil
		},
		upd: `UPDATE paydesk_transactions SET search = $2 WHERE key = $1 AND search <> $2`},
}

// refoldPG folds the open database's search texts again when they are
// older than fold.Version.
func (db *DB) refoldPG(ctx context.Context) error {
	pool, tables := (*pgxpool.Pool)(nil), kvRefold
	if db.rel != nil {
		pool, tables = db.rel.pool, relRefold
	} else if e := db.pg(); e != nil {
		pool = e.pool
	}
	if pool == nil {
		return nil
	}
	var v int64
	err := pool.QueryRow(ctx, `SELECT coalesce((SELECT last FROM paydesk_numbers WHERE name = 'fold-version'), 1)`).Scan(&v)
	if err != nil || v >= fold.Version {
		return err
	}
	for _, t := range tables {
		if err := refoldPGTable(ctx, pool, t, db.opts.fillChunk); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	_, err = pool.Exec(ctx, `INSERT INTO paydesk_numbers (name, last) VALUES ('fold-version', $1)
		ON CONFLICT (name) DO UPDATE SET last = greatest(paydesk_numbers.last, excluded.last)`, int64(fold.Version))
	return err
}

func refoldPGTable(ctx context.Context, pool *pgxpool.Pool, t pgRefoldTable, chunk int) error {
	if chunk <= 0 {
		chunk = pgRefoldChunk
	}
	after := t.first
	var f fold.Folder
	for {
		rows, err := pool.Query(ctx, t.sel, after, chunk)
		if err != nil {
			return err
		}
		var b pgx.Batch
		n := 0
		for rows.Next() {
			k, text, err := t.text(rows, &f)
			if err != nil {
				rows.Close()
				return err
			}
			b.Queue(t.upd, k, text)
			after = k
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n > 0 {
			if err := pool.SendBatch(ctx, &b).Close(); err != nil {
				return fmt.Errorf("after %d rows: %w", n, err)
			}
		}
		if n < chunk {
			return nil
		}
	}
}
