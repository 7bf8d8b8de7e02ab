package store

import (
	"time"

	"paydesk/store/kv"
)

// The bucket engine's storage contract and its bbolt file live in
// store/kv; the bucket-backed RepoTx (kvrepo*.go), the list indexes on
// bbolt (pagebolt.go) and the kv PostgreSQL (pgengine.go) are written
// against these names.
type (
	Engine = kv.Engine
	Tx     = kv.Tx
	Bucket = kv.Bucket
	Cursor = kv.Cursor

	boltTx     = kv.BoltTx
	boltBucket = kv.BoltBucket
)

// ErrDamaged: the cache file is damaged (bbolt found a page it cannot read)
// or is not a cache at all (an empty file).
var ErrDamaged = kv.ErrDamaged

// DamagedError says which cache is damaged, how, and what to do, in one
// line.
type DamagedError = kv.DamagedError

// CheckFile checks a cache file page by page without opening it for
// writing (kv.CheckFile): what it found, nothing for a sound file.
func CheckFile(path string, lockTimeout time.Duration) ([]string, error) {
	return kv.CheckFile(path, lockTimeout)
}
