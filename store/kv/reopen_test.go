package kv

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestOpenWhileAnotherClosesReadsTheMarkAgain: a cache opened while another
// process holds it reads "open" in the clean-close mark before it waits for
// the lock. When the other one then closes cleanly, the open reads the mark
// again once the lock is its own and checks the branches only, not every
// page; a file the other left without closing is still checked whole.
func TestOpenWhileAnotherClosesReadsTheMarkAgain(t *testing.T) {
	for _, c := range []struct {
		name          string
		closeClean    bool
		wantFullCheck bool
	}{
		{"the holder closes cleanly", true, false},
		{"the holder dies", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.db")
			opts := Options{File: FileOptions{NoSync: true, CheckPagesUpTo: -1, LockTimeout: time.Minute}}
			held, err := OpenBolt(path, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The second open tells when bbolt has the file open: its
			// preflight is done, and it waits for the lock.
			opened := make(chan struct{})
			var once sync.Once
			second := opts
			second.File.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, perm)
				once.Do(func() { close(opened) })
				return f, err
			}
			type result struct {
				db  *DB
				err error
			}
			done := make(chan result, 1)
			go func() {
				db, err := OpenBolt(path, second, nil)
				done <- result{db, err}
			}()
			select {
			case <-opened:
			case r := <-done:
				t.Fatalf("the second open ended before it opened the file: %v", r.err)
			}
			if c.closeClean {
				err = held.Close()
			} else {
				// A process that dies leaves the mark "open": its lock
				// goes with its file descriptor.
				err = held.file.db.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			r := <-done
			if r.err != nil {
				t.Fatal(r.err)
			}
			defer r.db.Close()
			if got := r.db.file.fullCheck; got != c.wantFullCheck {
				t.Errorf("the open checked every page: %v, want %v", got, c.wantFullCheck)
			}
		})
	}
}
