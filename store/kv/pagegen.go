package kv

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/fold"
)

// CopyBulkTo copies a file into an empty PostgreSQL database with COPY —
// every bucket and the reservation list's table — in one transaction: the
// way the large-list figures fill a database with a million generated
// reservations in minutes (CopyTo, which any database takes and which can
// resume, writes key by key). The database must hold no reservations yet.
func (db *DB) CopyBulkTo(ctx context.Context, dst *DB) error {
	pg := dst.pg()
	if db.file == nil || pg == nil {
		return errors.New("bulk copy: from a file into a PostgreSQL database on the kv engine only")
	}
	var any bool
	if err := pg.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paydesk_kv WHERE bucket = $1)`, bReservation).Scan(&any); err != nil {
		return fmt.Errorf("bulk copy: %w", err)
	}
	if any {
		return errors.New("bulk copy: the database has reservations already (use paydesk db copy)")
	}
	ptx, err := pg.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("bulk copy: %w", err)
	}
	defer func() { _ = ptx.Rollback(ctx) }()
	err = db.view(func(tx Tx) error {
		for _, name := range allBuckets {
			b := tx.Bucket(name)
			if b == nil {
				continue
			}
			if err := copyBucketRows(ctx, ptx, name, b); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			seq := b.Sequence()
			if _, err := ptx.Exec(ctx, `INSERT INTO paydesk_bucket (name, seq) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET seq = greatest(paydesk_bucket.seq, excluded.seq)`, name, int64(seq)); err != nil {
				return err
			}
			if s, ok := pgLogSequences[string(name)]; ok && seq > 0 {
				if _, err := ptx.Exec(ctx, `SELECT setval($1, $2, true)`, s, int64(seq)); err != nil {
					return err
				}
			}
		}
		// A file keeps no key owner entry for a reservation's own key
		// (putOwner); the conversion to the native engine reads the
		// owners from the entries (ownOwnKey).
		if _, err := ptx.Exec(ctx, `INSERT INTO paydesk_kv (bucket, k, v) SELECT $1, k, k FROM paydesk_kv WHERE bucket = $2
			ON CONFLICT (bucket, k) DO NOTHING`, bKeyOwner, bReservation); err != nil {
			return fmt.Errorf("key owners: %w", err)
		}
		for _, l := range pgLists {
			if err := copyListRows(ctx, ptx, l, tx.Bucket(l.bucket)); err != nil {
				return fmt.Errorf("%s: %w", l.table, err)
			}
			if _, err := ptx.Exec(ctx, "DELETE FROM "+l.fill); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("bulk copy: %w", err)
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("bulk copy: %w", err)
	}
	if _, err := pg.pool.Exec(ctx, `ANALYZE paydesk_kv; ANALYZE paydesk_summary; ANALYZE paydesk_txlist`); err != nil {
		return fmt.Errorf("bulk copy: analyze: %w", err)
	}
	return nil
}

// copyBucketRows streams a bucket's keys into paydesk_kv; rows already
// there (the meta keys a fresh database has) are left as they are.
func copyBucketRows(ctx context.Context, ptx pgx.Tx, name []byte, b Bucket) error {
	into := "paydesk_kv"
	var have bool
	if err := ptx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paydesk_kv WHERE bucket = $1)`, name).Scan(&have); err != nil {
		return err
	}
	if have {
		into = "paydesk_kv_in"
		if _, err := ptx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS paydesk_kv_in (LIKE paydesk_kv) ON COMMIT DROP; TRUNCATE paydesk_kv_in`); err != nil {
			return err
		}
	}
	c := b.Cursor()
	k, v := c.First()
	_, err := ptx.CopyFrom(ctx, pgx.Identifier{into}, []string{"bucket", "k", "v"}, pgx.CopyFromFunc(func() ([]any, error) {
		if k == nil {
			return nil, nil
		}
		row := []any{name, k, v}
		k, v = c.Next()
		return row, nil
	}))
	if err != nil || !have {
		return err
	}
	_, err = ptx.Exec(ctx, `INSERT INTO paydesk_kv SELECT * FROM paydesk_kv_in ON CONFLICT (bucket, k) DO NOTHING`)
	return err
}

// copyListRows streams a list table's rows, from its records.
func copyListRows(ctx context.Context, ptx pgx.Tx, l *pgList, b Bucket) error {
	var f fold.Folder
	c := b.Cursor()
	k, v := c.First()
	_, err := ptx.CopyFrom(ctx, pgx.Identifier{l.table}, l.columns, pgx.CopyFromFunc(func() ([]any, error) {
		for k != nil {
			kk, vv := k, v
			k, v = c.Next()
			if l.skip(kk) {
				continue
			}
			if args := l.args(kk, vv, &f); args != nil {
				return args, nil
			}
		}
		return nil, nil
	}))
	return err
}
