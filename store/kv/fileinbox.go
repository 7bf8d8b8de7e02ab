package kv

import (
	"errors"

	"paydesk/store/kvlayout"
)

// kInboxApplied is the meta key of the file inbox's applied mark: the
// sequence number of the last inbox entry whose push is in the file.
var kInboxApplied = []byte("inbox-applied")

// InboxAppliedUpdate runs fn in a write transaction of the file (the
// rules' view of it) and then sets the push inbox's applied mark to what
// fn returned, in that same transaction: a push is applied, and marked
// so, in one commit or neither (store/fileinbox.go). A zero mark leaves
// the mark as it was.
func (db *DB) InboxAppliedUpdate(fn func(rt RepoTx) (uint64, error)) error {
	if db.file == nil {
		return errors.New("the file inbox needs a cache file")
	}
	return db.guardedUpdate(func(tx Tx) error {
		seq, err := fn(db.kv.tx(tx))
		if err != nil || seq == 0 {
			return err
		}
		return tx.Bucket(bMeta).Put(kInboxApplied, u64(seq))
	})
}

// InboxApplied is the file inbox's applied mark, 0 when nothing was
// applied from an inbox yet.
func (db *DB) InboxApplied() (uint64, error) {
	var seq uint64
	err := db.view(func(tx Tx) error {
		seq = kvlayout.Be64(tx.Bucket(bMeta).Get(kInboxApplied))
		return nil
	})
	return seq, err
}
