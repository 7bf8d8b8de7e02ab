package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCompactFile: a compacted cache is smaller and reads the same — both
// lists' pages in every order, the audit log and its chain — and says it
// was closed cleanly; a cache another process holds is refused, and
// nothing is left beside it.
func TestCompactFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	pageData(t, db, 400)
	txPageData(t, db, 400)
	read := func(db *DB) (out [][]string) {
		t.Helper()
		for _, q := range []PageQuery{{Limit: 1000}, {Sort: SortAmount, Desc: true, Limit: 1000}, {Sort: SortCustomer, Limit: 1000},
			{Filter: "muller", Limit: 1000}, {State: StateCancelled, Limit: 1000}} {
			p, err := db.ReservationPage(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, posList(p))
		}
		for _, q := range []PageQuery{{Limit: 1000}, {Sort: TxSortAmount, Limit: 1000}, {Filter: "muller", Sort: TxSortInvoice, Limit: 1000}} {
			p, err := db.TransactionPage(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, txKeyed(p).keys)
		}
		a, err := db.VerifyAudit(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Problems) > 0 {
			t.Fatalf("audit: %q", a.Problems)
		}
		return append(out, []string{strings.Repeat("e", a.Entries)})
	}
	want := read(db)

	// Held by another: refused, the file as it was.
	if _, _, err := CompactFile(path, 50*time.Millisecond, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("compact of a held cache: %v, want ErrLocked", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	before, after, err := CompactFile(path, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after >= before {
		t.Errorf("compacted %d → %d bytes", before, after)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != after {
		t.Errorf("the file after: %v, %v; want %d bytes", fi, err, after)
	}
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy is left beside the file: %v", err)
	}
	// Closed cleanly: opened with no page check beyond the branches, the
	// same as before.
	db, err = Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, CheckPagesUpTo: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := read(db); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("the compacted cache reads\n%q\nwant\n%q", got, want)
	}
	// It ends with its last page; writes grow it again.
	txPageData(t, db, 60)
	read(db)
}

// TestOpenAfterCompactionGetsTheNewFile: a process that opened the cache
// while a compaction held it, and waited for the lock, opens the file the
// compaction put in its place, not the one taken away.
func TestOpenAfterCompactionGetsTheNewFile(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "c.db"), filepath.Join(dir, "other.db")
	count := func(db *DB) int {
		p, err := db.ReservationPage(t.Context(), PageQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(p.Rows)
	}
	o, err := Open(other, Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	pageData(t, o, 30)
	want := count(o)
	_ = o.Close()

	held, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	pageData(t, held, 7)
	// The second open tells when bbolt has the file open, before it waits
	// for the lock.
	opened := make(chan struct{})
	var once sync.Once
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
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
		db, err := Open(path, Options{NoSync: true, LockTimeout: time.Minute, openFile: openFile})
		done <- result{db, err}
	}()
	select {
	case <-opened:
	case r := <-done:
		t.Fatalf("the second open ended before it opened the file: %v", r.err)
	}
	// What a compaction does while it holds the file: another file in
	// its place, then the close.
	if err := held.bk.File().ReplaceWith(other); err != nil {
		t.Fatal(err)
	}
	_ = held.Close()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.db.Close()
	if got := count(r.db); got != want {
		t.Fatalf("the waiting open reads %d reservations, want the new file's %d", got, want)
	}
}
