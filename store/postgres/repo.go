package postgres

import (
	"context"
	"fmt"

	"paydesk/store/domain"
)

// The native PostgreSQL engine under the Repo contract (repo.go): the
// store's rules run on Tx, whose methods read and write the typed
// relations of 0009 and 0010.

var (
	_ domain.Repo   = (*Engine)(nil)
	_ domain.RepoTx = (*Tx)(nil)
)

func (e *Engine) Update(ctx context.Context, fn func(domain.RepoTx) error) error {
	return e.UpdateTx(ctx, func(t *Tx) error { return fn(t) })
}

func (e *Engine) View(ctx context.Context, fn func(domain.RepoTx) error) error {
	return e.ViewTx(ctx, func(t *Tx) error { return fn(t) })
}

// EncodePush prepares nothing: a push's columns are made in AppendPush.
func (e *Engine) EncodePush(*domain.PushRecord) domain.PushEncoding { return domain.PushEncoding{} }

func (e *Engine) Capabilities() domain.Capabilities {
	return domain.Capabilities{Shared: true, Reruns: true, Lists: e.lists(), Pushes: e.pushLister()}
}

// InboxWaiting reads up to limit inbox rows not applied yet, oldest first.
func (t *Tx) InboxWaiting(limit int, after int64) ([]uint64, [][]byte, error) {
	rows, err := t.query(InboxWaitingSQL, limit, after)
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

// InboxMark marks inbox rows applied with their push IDs and results. Its
// answer is not needed (the rows are the transaction's: it read them), so
// the statement is queued with the push writes and goes to the server
// with them before the commit (prefetch.go), not in a round trip of its
// own.
func (t *Tx) InboxMark(ids, pushIDs []int64, results [][]byte) error {
	if t.err != nil {
		return t.err
	}
	t.queue("marking inbox rows applied", InboxMarkSQL, ids, pushIDs, results)
	return nil
}

// TxErr is the database's error that failed the transaction, if any.
func (t *Tx) TxErr() error { return t.err }

// RelationalBegun reports whether the database's conversion to the typed
// relations began (or is done): from then on the kv tables are not the
// store, and every open must use the native engine.
func (e *Engine) RelationalBegun(ctx context.Context) (bool, error) {
	var begun bool
	err := e.pool.QueryRow(ctx, `SELECT NOT EXISTS (SELECT 1 FROM paydesk_ledger_conversion WHERE step = 0 AND after IS NULL)
		OR NOT EXISTS (SELECT 1 FROM paydesk_logs_conversion WHERE step = 0 AND after IS NULL)`).Scan(&begun)
	if err != nil {
		return false, fmt.Errorf("database %s: which engine: %w", e.url, err)
	}
	return begun, nil
}
