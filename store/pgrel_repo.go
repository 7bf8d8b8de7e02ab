package store

import (
	"context"
	"fmt"
)

// The native PostgreSQL engine under the Repo contract (repo.go): the
// store's rules run on pgRelTx, whose methods read and write the typed
// relations of 0009 and 0010.

var (
	_ Repo   = (*pgRelEngine)(nil)
	_ RepoTx = (*pgRelTx)(nil)
)

func (e *pgRelEngine) Update(ctx context.Context, fn func(RepoTx) error) error {
	return e.update(ctx, func(t *pgRelTx) error { return fn(t) })
}

func (e *pgRelEngine) View(ctx context.Context, fn func(RepoTx) error) error {
	return e.view(ctx, func(t *pgRelTx) error { return fn(t) })
}

// EncodePush prepares nothing: a push's columns are made in AppendPush.
func (e *pgRelEngine) EncodePush(*PushRecord) PushEncoding { return PushEncoding{} }

func (e *pgRelEngine) Capabilities() Capabilities {
	return Capabilities{Shared: true, Reruns: true, Lists: e.lists()}
}

// openRelational puts db, opened on the kv engine of a team's database,
// onto the native engine: what the kv tables still hold of a layout-7
// store (a database written by a paydesk before the typed relations) is
// converted first, the ledger and then the logs, chunk by chunk and
// resumably (pgrel_ledger_convert.go, pgrel_logs_convert.go). The kv
// tables are read for that conversion only; from then on every record is
// read and written in the typed relations.
func (db *DB) openRelational(ctx context.Context, kv *pgEngine) error {
	rel := &pgRelEngine{pool: kv.pool, url: kv.url, migrated: kv.migrated}
	ledger, err := rel.ledgerConversionPending(ctx)
	if err != nil {
		return err
	}
	logs, err := rel.logsConversionPending(ctx)
	if err != nil {
		return err
	}
	if ledger || logs {
		// The conversion reads the buckets as layout 7 has them: an older
		// layout is brought there first (a new database's empty kv too).
		if err := db.migrate(); err != nil {
			if isReadOnlyRole(err) {
				return fmt.Errorf("its records wait to be converted to tables, which the first open by a role that may write does: %w", ErrNeedsMigration)
			}
			return err
		}
	}
	if err := rel.convertLedgerAtOpen(ctx, db.opts); err != nil {
		return err
	}
	if err := rel.convertLogsAtOpen(ctx, db.opts); err != nil {
		return err
	}
	db.rel = rel
	db.repo = rel
	return nil
}

// inboxWaiting reads up to limit inbox rows not applied yet, oldest first.
func (t *pgRelTx) inboxWaiting(limit int, after int64) ([]uint64, [][]byte, error) {
	rows, err := t.query(qInboxWaiting, limit, after)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ids []uint64
	var recs [][]byte
	for rows.Next() {
		var id int64
		var rec []byte
		if err := rows.Scan(&id, &rec); err != nil {
			return nil, nil, t.fail(err)
		}
		ids, recs = append(ids, uint64(id)), append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, t.fail(err)
	}
	return ids, recs, nil
}

// prefetchForPushes does nothing: the native engine reads a record by its
// index when the rules ask for it.
func (t *pgRelTx) prefetchForPushes([]string, []string, int) error { return nil }

// inboxMark marks inbox rows applied with their push IDs and results.
func (t *pgRelTx) inboxMark(ids, pushIDs []int64, results [][]byte) error {
	return t.exec(qInboxMark, ids, pushIDs, results)
}

// relationalBegun reports whether the database's conversion to the typed
// relations began (or is done): from then on the kv tables are not the
// store, and every open must use the native engine.
func relationalBegun(ctx context.Context, kv *pgEngine) (bool, error) {
	var begun bool
	err := kv.pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM paydesk_ledger_conversion WHERE step = 0 AND after IS NULL)
		OR NOT EXISTS (SELECT 1 FROM paydesk_logs_conversion WHERE step = 0 AND after IS NULL)`).Scan(&begun)
	if err != nil {
		return false, fmt.Errorf("database %s: which engine: %w", kv.url, err)
	}
	return begun, nil
}
