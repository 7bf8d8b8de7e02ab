// Package kv is the store's bucket engine: the domain contract (RepoTx)
// over named buckets of sorted keys, on a bbolt file or PostgreSQL's kv tables.
package kv
