package kv

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestOpenCommitsNothing: opening a cache that needs no migration, fill or
// index writes no commit, and closing it after no write writes none
// either: each commit writes the file's whole freelist with two fsyncs,
// which on a grown file of a million reservations was a visible part of
// the console's start. A session that writes marks the file open in its
// first write's commit and closed in one commit at its close.
func TestOpenCommitsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	opts := Options{File: FileOptions{NoSync: true, CheckPagesUpTo: -1, LockTimeout: time.Minute}}
	txid := func(db *DB) int {
		var id int
		if err := db.file.Bolt().View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	db, err := OpenBolt(path, opts, nil) // a new file: its layout is written
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	last := -1
	for _, tc := range []struct {
		name    string
		writes  int
		commits int // the open's, the writes' and the close's
	}{{"no write", 0, 0}, {"one write", 1, 2}, {"three writes", 3, 4}, {"no write again", 0, 0}} {
		db, err := OpenBolt(path, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		opened := txid(db)
		if last >= 0 && opened != last {
			t.Errorf("%s: the open committed %d times", tc.name, opened-last)
		}
		for range tc.writes {
			if err := db.eng.Update(func(tx Tx) error { return tx.Bucket(bMeta).Put([]byte("t"), []byte("x")) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		var closed int
		_ = f.View(func(tx *bolt.Tx) error { closed = tx.ID(); return nil })
		_ = f.Close()
		if got := closed - opened; got != tc.commits {
			t.Errorf("%s: %d commits, want %d", tc.name, got, tc.commits)
		}
		if clean, err := CleanClosed(path); err != nil || !clean {
			t.Errorf("%s: clean %v, %v after the close", tc.name, clean, err)
		}
		last = closed
	}
}
