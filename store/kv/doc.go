// Package kv is the store's bucket engine: named buckets of sorted keys in
// transactions (Engine, Tx, Bucket, Cursor) and its bbolt file, with the
// file's checks (pages, damage, the clean-close marker) and its lock.
package kv
