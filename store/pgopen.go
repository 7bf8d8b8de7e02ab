package store

import (
	"context"
	"fmt"

	"paydesk/store/domain"
	"paydesk/store/postgres"
)

// openRelational puts db, opened on the kv engine of a team's database,
// onto the native engine (package store/postgres): what the kv tables still hold of a layout-7
// store (a database written by a paydesk before the typed relations) is
// converted first, the ledger and then the logs, chunk by chunk and
// resumably (postgres/ledger_convert.go, postgres/logs_convert.go). The kv
// tables are read for that conversion only; from then on every record is
// read and written in the typed relations.
func (db *DB) openRelational(ctx context.Context, rel *postgres.Engine) error {
	ledger, err := rel.LedgerConversionPending(ctx)
	if err != nil {
		return err
	}
	logs, err := rel.LogsConversionPending(ctx)
	if err != nil {
		return err
	}
	if ledger || logs {
		// The conversion reads the buckets as layout 7 has them: an older
		// layout is brought there first (a new database's empty kv too).
		if err := db.bk.Migrate(nil); err != nil {
			if postgres.IsReadOnlyRole(err) {
				return fmt.Errorf("its records wait to be converted to tables, which the first open by a role that may write does: %w", domain.ErrNeedsMigration)
			}
			return err
		}
	}
	if err := rel.ConvertLedgerAtOpen(ctx, db.opts.fillChunk, db.opts.failFillAfter); err != nil {
		return err
	}
	if err := rel.ConvertLogsAtOpen(ctx, db.opts.fillChunk, db.opts.failFillAfter); err != nil {
		return err
	}
	db.rel = rel
	db.repo = rel
	return nil
}
