package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"paydesk/internal/fold"
	"paydesk/store/domain"
)

// On PostgreSQL the lists' search texts are a column of their tables
// (paydesk_summary and paydesk_txlist on the kv engine, paydesk_reservations
// and paydesk_transactions on the native one). A database whose texts an
// older folding wrote has them folded again at open, like a bbolt file
// (pagerefold.go): each table in key order, a chunk at a time, a row
// written only when its text changes, so a cut run goes on where it
// stopped at the next open. The version is kept in paydesk_numbers
// ('fold-version'), written when every text is done.

// refoldChunk is the rows a refold reads and writes at a time.
const refoldChunk = 2000

// RefoldTable is one table to fold again: Sel reads a chunk of rows after
// a key ($1) in key order (LIMIT $2) and Text makes a row's key and new
// search text.
type RefoldTable struct {
	Name  string
	First any // the key before every key
	Sel   string
	Text  func(rows pgx.Rows, f *fold.Folder) (key any, search string, err error)
	Upd   string // $1 key, $2 text
}

var relRefold = []RefoldTable{
	{Name: "paydesk_reservations", First: "", Sel: `SELECT ` + pgSummarySelect + ` FROM paydesk_reservations r WHERE r.key > $1 ORDER BY r.key LIMIT $2`,
		Text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			s, err := scanSummary(rows)
			if err != nil {
				return nil, "", err
			}
			return s.Key, SearchText(domain.AppendSearchText(nil, &s, f)), nil
		},
		Upd: `UPDATE paydesk_reservations SET search = $2 WHERE key = $1 AND search <> $2`},
	{Name: "paydesk_transactions", First: "", Sel: `SELECT ` + pgTxSelect + ` FROM paydesk_transactions WHERE key > $1 ORDER BY key LIMIT $2`,
		Text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			t, err := scanTxRow(rows)
			if err != nil {
				return nil, "", err
			}
			return t.Key, SearchText(domain.AppendTxSearchText(nil, t, f)), nil
		},
		Upd: `UPDATE paydesk_transactions SET search = $2 WHERE key = $1 AND search <> $2`},
}

// Refold folds the search texts of tables again when the database's are
// older than fold.Version (chunk rows at a time, 0 the default).
func Refold(ctx context.Context, pool *pgxpool.Pool, tables []RefoldTable, chunk int) error {
	var v int64
	err := pool.QueryRow(ctx, `SELECT coalesce((SELECT last FROM paydesk_numbers WHERE name = 'fold-version'), 1)`).Scan(&v)
	if err != nil || v >= fold.Version {
		return err
	}
	for _, t := range tables {
		if err := refoldTable(ctx, pool, t, chunk); err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	_, err = pool.Exec(ctx, `INSERT INTO paydesk_numbers (name, last) VALUES ('fold-version', $1)
		ON CONFLICT (name) DO UPDATE SET last = greatest(paydesk_numbers.last, excluded.last)`, int64(fold.Version))
	return err
}

// Refold is Refold of the native engine's lists.
func (e *Engine) Refold(ctx context.Context, chunk int) error {
	return Refold(ctx, e.pool, relRefold, chunk)
}

func refoldTable(ctx context.Context, pool *pgxpool.Pool, t RefoldTable, chunk int) error {
	if chunk <= 0 {
		chunk = refoldChunk
	}
	after := t.First
	var f fold.Folder
	for {
		rows, err := pool.Query(ctx, t.Sel, after, chunk)
		if err != nil {
			return err
		}
		var b pgx.Batch
		n := 0
		for rows.Next() {
			k, text, err := t.Text(rows, &f)
			if err != nil {
				rows.Close()
				return err
			}
			b.Queue(t.Upd, k, text)
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
