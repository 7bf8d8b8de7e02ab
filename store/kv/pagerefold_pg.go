package kv

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/fold"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// On PostgreSQL the lists' search texts are a column of their tables
// (paydesk_summary and paydesk_txlist on the kv engine, paydesk_reservations
// and paydesk_transactions on the native one). A database whose texts an
// older folding wrote has them folded again at open, like a bbolt file
// (pagerefold.go): each table in key order, a chunk at a time, a row
// written only when its text changes, so a cut run goes on where it
// stopped at the next open. The version is kept in paydesk_numbers
// ('fold-version'), written when every text is done.

var kvRefold = []postgres.RefoldTable{
	{Name: "paydesk_summary", First: []byte{}, Sel: `SELECT k, v FROM paydesk_summary WHERE k > $1 ORDER BY k LIMIT $2`,
		Text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return nil, "", err
			}
			s, err := kvlayout.DecodeSummary(v)
			if err != nil {
				return nil, "", fmt.Errorf("summary %s: %w", k, err)
			}
			return k, postgres.SearchText(AppendSearchText(nil, &s, f)), nil
		},
		Upd: `UPDATE paydesk_summary SET search = $2 WHERE k = $1 AND search <> $2`},
	{Name: "paydesk_txlist", First: []byte{}, Sel: `SELECT k, v FROM paydesk_txlist WHERE k > $1 ORDER BY k LIMIT $2`,
		Text: func(rows pgx.Rows, f *fold.Folder) (any, string, error) {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return nil, "", err
			}
			t, err := kvlayout.DecodeTx(v)
			if err != nil {
				return nil, "", fmt.Errorf("transaction %s: %w", k, err)
			}
			return k, postgres.SearchText(AppendTxSearchText(nil, t, f)), nil
		},
		Upd: `UPDATE paydesk_txlist SET search = $2 WHERE k = $1 AND search <> $2`},
}

// refoldPG folds the open database's search texts again when they are
// older than fold.Version.
func (db *DB) refoldPG(ctx context.Context) error {
	if e := db.pg(); e != nil {
		return postgres.Refold(ctx, e.pool, kvRefold, db.opts.FillChunk)
	}
	return nil
}
