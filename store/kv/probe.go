package kv

import (
	"github.com/jackc/pgx/v5/pgxpool"
)

// What the store's tests reach of the bucket engine's insides, through a
// store opened the ordinary way: the buckets themselves (a file built the
// way an older paydesk left it, a record damaged on purpose), the lists'
// indexes and fills, and the paths a filter takes on a small file.
// Nothing but tests calls them.

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

// The fills at open, by name (FillKey).
const (
	ListFill   = listFillName
	TxListFill = txListFillName
)

// FillKey is the meta key that holds fill name's state while it is due.
func FillKey(name string) []byte { return fillKey(name) }

// ListBuckets are the reservation list's buckets on bbolt, ListIndexes
// its sort indexes; TxListBuckets and TxListIndexes the transaction
// list's.
func ListBuckets() [][]byte { return pageBuckets }
func ListIndexes() [][]byte {
	out := make([][]byte, 0, len(listIndexes))
	for _, ix := range listIndexes {
		out = append(out, ix.b)
	}
	return out
}
func TxListBuckets() [][]byte { return txPageBuckets }
func TxListIndexes() [][]byte { return bTxIdx[:] }
