package store

import (
	"errors"
	"fmt"
	bolt "go.etcd.io/bbolt"
	"os"
)

// ErrDamaged: the cache file is damaged (bbolt found a page it cannot read)
// or is not a cache at all (an empty file).
var ErrDamaged = errors.New("damaged")

// DamagedError says which cache is damaged, how, and what to do, in one
// line.
type DamagedError struct {
	Path   string
	Detail string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("cache %s is damaged (%s): move it aside (mv %s %s.damaged) and paydesk starts a new one, or restore it from a backup; "+
		"`go run go.etcd.io/bbolt/cmd/bbolt@v1.5.0 check %s` lists the damage", e.Path, e.Detail, e.Path, e.Path, e.Path)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// recoverDamage turns a bbolt panic into a DamagedError: bbolt asserts
// rather than returns errors when a page is not what it expects
// ("assertion failed: page 24 already freed", "invalid page type"), and
// a damaged file must be reported, not crash the console with a stack
// trace. Deferred by every transaction the store runs.
func recoverDamage(path string, err *error) {
	if r := recover(); r != nil {
		*err = &DamagedError{Path: path, Detail: fmt.Sprint(r)}
	}
}

// checkEmpty refuses a file of zero bytes: bbolt would silently turn it
// into a new, empty cache, and a cache that lost its content (a failed
// copy, a truncation) must not pass for a fresh one.
func checkEmpty(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > 0 {
		return nil // a missing file is created; other errors show at open
	}
	return &DamagedError{Path: path, Detail: "the file is empty, 0 bytes"}
}

// checkPagesUpTo bounds the files Open checks page by page (bbolt's
// Tx.Check): a few tens of milliseconds at this size; a larger cache is
// checked as it is read. Options.CheckPagesUpTo overrides it.
const checkPagesUpTo int64 = 64 << 20

// checkPages runs bbolt's consistency check on a file of at most
// checkPagesUpTo bytes and reports its first finding.
func (db *DB) checkPages() (err error) {
	fi, statErr := os.Stat(db.path)
	limit := checkPagesUpTo
	if db.opts.CheckPagesUpTo != 0 {
		limit = db.opts.CheckPagesUpTo
	}
	if statErr != nil || fi.Size() > limit {
		return nil
	}
	defer recoverDamage(db.path, &err)
	if db.bolt == nil {
		return nil // not a file: the database checks its own pages
	}
	return db.bolt.View(func(tx *bolt.Tx) error {
		var first error
		n := 0
		for e := range tx.Check() {
			if first == nil {
				first = e
			}
			n++
		}
		if first != nil {
			return &DamagedError{Path: db.path, Detail: fmt.Sprintf("%v; %d problems in all", first, n)}
		}
		return nil
	})
}
