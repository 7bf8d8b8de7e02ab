package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/fold"
	"paydesk/store/kvlayout"
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
			b, conv := fileRecords(tx, name)
			if b == nil {
				continue
			}
			if err := copyBucketRows(ctx, ptx, name, b, conv); err != nil {
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
			b, conv := fileRecords(tx, l.bucket)
			if err := copyListRows(ctx, ptx, l, b, conv); err != nil {
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

// fileRecords is the file's bucket name and how its values become the kv
// PostgreSQL's (nil: as they are). The summaries a file keeps none of
// (layout 13) are made from the reservation records.
func fileRecords(tx Tx, name []byte) (Bucket, func(k, v []byte) ([]byte, error)) {
	if b := tx.Bucket(name); b != nil || !bytes.Equal(name, bSummary) {
		return b, nil
	}
	return tx.Bucket(bReservation), summaryBytes
}

// summaryBytes is the summaries bucket's value of the reservation record v
// under k.
func summaryBytes(k, v []byte) ([]byte, error) {
	s, err := kvlayout.SummaryOf(string(k), v)
	if err != nil {
		return nil, fmt.Errorf("reservation %s: %w", k, err)
	}
	return kvlayout.EncodeSummary(s), nil
}

// copyBucketRows streams a bucket's keys into paydesk_kv, their values
// made by conv when set; rows already there (the meta keys a fresh
// database has) are left as they are.
func copyBucketRows(ctx context.Context, ptx pgx.Tx, name []byte, b Bucket, conv func(k, v []byte) ([]byte, error)) error {
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
		if conv != nil {
			cv, err := conv(k, v)
			if err != nil {
				return nil, err
			}
			row[2] = cv
		}
		k, v = c.Next()
		return row, nil
	}))
	if err != nil || !have {
		return err
	}
	_, err = ptx.Exec(ctx, `INSERT INTO paydesk_kv SELECT * FROM paydesk_kv_in ON CONFLICT (bucket, k) DO NOTHING`)
	return err
}

// copyListRows streams a list table's rows, from its records (made by conv
// when set).
func copyListRows(ctx context.Context, ptx pgx.Tx, l *pgList, b Bucket, conv func(k, v []byte) ([]byte, error)) error {
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
			if conv != nil {
				var err error
				if vv, err = conv(kk, vv); err != nil {
					return nil, err
				}
			}
			if args := l.args(kk, vv, &f); args != nil {
				return args, nil
			}
		}
		return nil, nil
	}))
	return err
}
