package kv

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestOpenCommitsOnlyItsMark: opening a cache that needs no migration, fill
// or index writes one commit, the clean-close mark's "open" — each commit
// writes the file's whole freelist with two fsyncs, which on a grown file
// of a million reservations was a visible part of the console's start.
func TestOpenCommitsOnlyItsMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	opts := Options{File: FileOptions{NoSync: true, CheckPagesUpTo: -1, LockTimeout: time.Minute}}
	txid := func(db *DB) int {
		var id int
		if err := db.file.Bolt().View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	db, err := OpenBolt(path, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := txid(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := before + 1 // the close's mark
	for i := range 2 {
		db, err := OpenBolt(path, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := txid(db) - after; got != 1 {
			t.Errorf("open %d: %d commits, want 1 (the open mark)", i+1, got)
		}
		after = txid(db) + 1
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
