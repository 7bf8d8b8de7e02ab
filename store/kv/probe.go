package kv

import (
	"github.com/jackc/pgx/v5/pgxpool"
)

// What the store's tests still reach of the bucket engine's insides,
// through a store opened the ordinary way: the buckets themselves (a file
// built the way an older paydesk left it), the transaction list's indexes
// and fill, and the paths a filter takes on a small file. Nothing but
// tests calls them; the tests of the engine alone are this package's own
// (damage, fills, refold, warm-up, the contract) and need none of them.

// Engine is the buckets under the engine contract.
func (db *DB) Engine() Engine { return db.eng }

// Pool is the kv PostgreSQL's connections, nil on bbolt.
func (db *DB) Pool() *pgxpool.Pool {
	if e := db.pg(); e != nil {
		return e.pool
	}
	return nil
}

// TxRepo is the contract over one engine transaction.
func TxRepo(tx Tx) RepoTx { return &kvTx{tx: tx} }

// SetListPaths makes both lists' filters take every path on a small file:
// scanBlocks, small and walk replace maxScanBlocks, smallSet and
// walkBudget (0: the defaults).
func (db *DB) SetListPaths(scanBlocks, small, walk int) {
	for _, c := range []*pageCache{&db.pages, &db.txPages} {
		c.scanBlocks, c.small, c.walk = scanBlocks, small, walk
	}
}

// UnindexSummary removes a reservation's list row and index entries.
func UnindexSummary(tx Tx, key string) error { return unindexSummary(tx, key) }

// TxListFill is the transaction list's fill at open, by name (FillKey).
const TxListFill = txListFillName

// FillKey is the meta key that holds fill name's state while it is due.
func FillKey(name string) []byte { return fillKey(name) }

// TxListBuckets are the transaction list's buckets on bbolt,
// TxListIndexes its sort indexes.
func TxListBuckets() [][]byte { return txPageBuckets }
func TxListIndexes() [][]byte { return bTxIdx[:] }

// OldListIndexes are both lists' index buckets before layout 11 beside
// their layout-11 buckets.
func OldListIndexes() [][2][]byte { return oldIndexes }

// ListIndexes are the reservation list's sort indexes on bbolt.
func ListIndexes() [][]byte {
	out := make([][]byte, 0, len(listIndexes))
	for _, ix := range listIndexes {
		out = append(out, ix.b)
	}
	return out
}
