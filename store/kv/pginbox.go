package kv

import (
	"errors"

	"paydesk/store/postgres"
)

// The push inbox on the kv PostgreSQL (store's pginbox.go): the rules
// apply the rows waiting in the same transaction that marks them.

// InboxTx is what the apply transaction needs of an engine's transaction
// beyond the contract: the inbox rows it reads and marks in the same
// transaction as the rules' writes.
type InboxTx interface {
	InboxWaiting(limit int, after int64) ([]uint64, [][]byte, error)
	// PrefetchForPushes may read ahead what the rules will read of the
	// pushes' keys (the kv engine's round trips).
	PrefetchForPushes(keys, dataKeys []string, n int) error
	InboxMark(ids, pushIDs []int64, results [][]byte) error
	// TxErr is the database's error that failed the transaction, if any.
	TxErr() error
}

// InboxUpdate runs fn in a write transaction on the kv PostgreSQL: the
// rules' view of it (RepoTx) and the inbox's (InboxTx) of one transaction.
func (db *DB) InboxUpdate(fn func(rt RepoTx, it InboxTx) error) error {
	return db.guardedUpdate(func(tx Tx) error {
		pt, ok := tx.(*pgTx)
		if !ok {
			return errors.New("the push inbox needs PostgreSQL")
		}
		return fn(db.kv.tx(tx), pt) // the rules, in this transaction
	})
}

func (t *pgTx) TxErr() error { return t.err }

// InboxMark marks inbox rows applied, after the transaction's buffered
// writes.
func (t *pgTx) InboxMark(ids, pushIDs []int64, results [][]byte) error {
	if err := t.flush(); err != nil {
		return err
	}
	if _, err := t.tx.Exec(t.ctx, postgres.InboxMarkSQL, ids, pushIDs, results); err != nil {
		t.fail(err)
		return err
	}
	return nil
}

// InboxWaiting reads up to limit rows not applied yet, oldest first.
func (t *pgTx) InboxWaiting(limit int, after int64) ([]uint64, [][]byte, error) {
	rows, err := t.tx.Query(t.ctx, postgres.InboxWaitingSQL, limit, after)
	if err != nil {
		t.fail(err)
		return nil, nil, err
	}
	defer rows.Close()
	var ids []uint64
	var recs [][]byte
	for rows.Next() {
		var id int64
		var rec []byte
		if err := rows.Scan(&id, &rec); err != nil {
			t.fail(err)
			return nil, nil, err
		}
		ids, recs = append(ids, uint64(id)), append(recs, rec)
	}
	if err := rows.Err(); err != nil {
		t.fail(err)
		return nil, nil, err
	}
	return ids, recs, nil
}
