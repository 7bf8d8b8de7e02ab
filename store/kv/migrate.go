package kv

import (
	"encoding/binary"
	"fmt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// migrations[v] brings a file from version v to v+1. Version 0 is a new,
// empty file.
var migrations = []func(tx Tx) error{
	0: func(tx Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	},
	// Version 2 writes the per-key push index beside the transaction
	// records (transactions bucket, key 0x00 id). The entries a version 1
	// file has stay in pushkey, which is still read, so nothing moves; the
	// number is there so that a paydesk knowing only version 1, which would
	// take the new entries for transactions, refuses the file instead.
	1: func(tx Tx) error { return nil },
	// Version 3 keeps the webshop's orders (the order intake).
	2: func(tx Tx) error {
		for _, b := range [][]byte{bOrder, bOrderConflict} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	},
	// Version 4 keeps batches run from shipment manifests.
	3: func(tx Tx) error {
		for _, b := range [][]byte{bBatch, bBatchItem, bBatchHash} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	},
	// Version 5 keeps the reservation list's indexes (pagebolt.go).
	4: migrateList,
	// Version 6 adds the search text blocks' trigram sketches.
	5: migrateGrams,
	// Version 7 keeps the transaction list's indexes (pagetx.go).
	6: migrateTxList,
	// Version 8 writes reservation records in a binary form
	// (kvlayout/reservation.go); JSON records stay and are read, a record
	// turns binary when it is next written. Nothing moves: the number makes
	// a paydesk that reads only JSON refuse the file instead of failing on
	// its records.
	7: func(tx Tx) error { return nil },
	// Version 9 writes list index entries that name their row's key by
	// its length (indexentry.go): the indexes are built again by the fills
	// at open.
	8: migrateIndexEntries,
	// Version 10 writes push records whose headers and body are packed
	// (kvlayout/pushpack.go, format 2) and reservation records without
	// their key (kvlayout/reservation.go, format 2); records of format 1
	// stay and are read, a reservation turns format 2 when it is next
	// written. Nothing moves: the number makes a paydesk that reads only
	// format 1 refuse the file instead of failing on its records.
	9: func(tx Tx) error { return nil },
	// Version 11 ends the list positions with the row's key packed
	// (domain.AppendSortKey), in new index buckets: the fill at open
	// converts the old ones entry by entry (indexentry.go).
	10: migratePackedPositions,
	// Version 12 keeps no key owner entry for a reservation's own key
	// (kvrepo.go, putOwner): OwnerOf finds the reservation under it. The
	// entries an older file has stay and say the same; the number makes a
	// paydesk that reads owners only from the entries refuse the file
	// instead of losing a reservation's own key.
	11: func(tx Tx) error { return nil },
	// Version 13 keeps no summaries bucket on a file: the reservation list
	// reads its rows from the reservation records (resBolt), whose format
	// 3 carries what a row derives from the lines (kvlayout.SummaryOf); a
	// record of an older format is read whole until it is next written.
	// That is a copy of every reservation's row, its key and its half-full
	// pages less: 390 B a reservation (docs/store.md).
	12: dropSummaries,
	// Version 14 may have a push inbox beside the file (store/fileinbox.go):
	// pushes answered and not applied yet, past the meta key
	// inbox-applied, which the next open applies. Nothing moves: the
	// number makes a paydesk that knows no inbox refuse the file instead
	// of opening it without the pushes waiting there.
	13: func(tx Tx) error { return nil },
}

// dropSummaries deletes a file's summaries bucket (layout 13). The kv
// PostgreSQL keeps its own: its list table follows it (pagepg.go).
func dropSummaries(tx Tx) error {
	bt, ok := tx.(boltTx)
	if !ok || bt.Bolt.Bucket(bSummary) == nil {
		return nil
	}
	if err := bt.Bolt.DeleteBucket(bSummary); err != nil {
		return fmt.Errorf("summaries: %w", err)
	}
	return nil
}

// Migrate brings the layout to SchemaVersion, step by step, and refuses a
// newer one. recover, when set, runs in the same transaction whenever the
// layout changed or an operation was left pending (the rules' recovery of
// operations in flight); on a shared database it is not run (other
// processes may have requests on their way).
func (db *DB) Migrate(recover func(RepoTx) error) (err error) {
	defer RecoverDamage(db.path, &err)
	// Most opens find nothing to do; a read transaction says so without
	// the fsyncs of a write.
	current := false
	err = db.eng.View(func(tx Tx) error {
		m, open := tx.Bucket(bMeta), tx.Bucket(bOpOpen)
		if m == nil || open == nil {
			return nil
		}
		b := m.Get(kSchema)
		if len(b) != 8 || binary.BigEndian.Uint64(b) != SchemaVersion {
			return nil
		}
		current = true
		return open.ForEach(func(k, _ []byte) error {
			if op, err := db.kv.tx(tx).Op(binary.BigEndian.Uint64(k)); err != nil || op == nil || op.State == OpPending {
				current = false
			}
			return nil
		})
	})
	if err != nil || current {
		return err
	}
	return db.eng.Update(func(tx Tx) error {
		v := uint64(0)
		if m := tx.Bucket(bMeta); m != nil {
			if b := m.Get(kSchema); len(b) == 8 {
				v = binary.BigEndian.Uint64(b)
			}
		}
		if v > SchemaVersion {
			return fmt.Errorf("schema version %d is %w (this one reads up to %d)", v, domain.ErrNewerSchema, SchemaVersion)
		}
		for ; v < SchemaVersion; v++ {
			if err := migrations[v](tx); err != nil {
				return fmt.Errorf("migrate schema %d to %d: %w", v, v+1, err)
			}
		}
		if err := tx.Bucket(bMeta).Put(kSchema, u64(SchemaVersion)); err != nil {
			return err
		}
		if db.opts.Shared || recover == nil {
			// Other processes may have requests on their way right now:
			// only a file's lock says that no one else has it open.
			return nil
		}
		return recover(db.kv.tx(tx))
	})
}

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

// The buckets and meta keys of the layout (store/kvlayout).
var (
	kRejectedGroup    = kvlayout.KRejectedGroup
	allBuckets        = kvlayout.AllBuckets
	kSchema           = kvlayout.KSchema
	kPushCount        = kvlayout.KPushCount
	kRejectedCount    = kvlayout.KRejectedCount
	kReservationCount = kvlayout.KReservationCount
	kTransactionCount = kvlayout.KTransactionCount
	bMeta             = kvlayout.BMeta
	bReservation      = kvlayout.BReservation
	bSummary          = kvlayout.BSummary
	bResNumber        = kvlayout.BResNumber
	bKeyOwner         = kvlayout.BKeyOwner
	bInvoice          = kvlayout.BInvoice
	bTransaction      = kvlayout.BTransaction
	bRelated          = kvlayout.BRelated
	bOrphan           = kvlayout.BOrphan
	bPush             = kvlayout.BPush
	bPushKey          = kvlayout.BPushKey
	bRejected         = kvlayout.BRejected
	bOp               = kvlayout.BOp
	bOpOpen           = kvlayout.BOpOpen
	bAudit            = kvlayout.BAudit
	bExchange         = kvlayout.BExchange
	bOrder            = kvlayout.BOrder
	bOrderConflict    = kvlayout.BOrderConflict
	bBatch            = kvlayout.BBatch
	bBatchItem        = kvlayout.BBatchItem
	bBatchHash        = kvlayout.BBatchHash
)
