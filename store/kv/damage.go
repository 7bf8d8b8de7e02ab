package kv

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrLocked: another process holds the cache file.
var ErrLocked = errors.New("in use by another paydesk process")

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
	return fmt.Sprintf("cache %s is damaged (%s): it takes no more writes; `paydesk db check --db %s` lists the damage; "+
		"move it aside (mv %s %s.damaged) and put your last good copy in its place, or let paydesk start a new one",
		e.Path, e.Detail, e.Path, e.Path, e.Path)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// RecoverDamage turns a bbolt panic into a DamagedError: bbolt asserts
// rather than returns errors when a page is not what it expects
// ("assertion failed: page 24 already freed", "invalid page type"), and
// a damaged file must be reported, not crash the console with a stack
// trace. Deferred by every transaction the store runs (deferred itself,
// not from a function of the caller's: recover only works there).
func RecoverDamage(path string, err *error) {
	if r := recover(); r != nil {
		*err = &DamagedError{Path: path, Detail: fmt.Sprint(r)}
	}
}

// damage is what a cache found damaged while it runs keeps: once a read or
// a write met a damaged page, every later write is refused with the same
// error (a push is answered 500, so the gateway sends it again later), as
// writing into a damaged tree can only spread the damage, and the clean
// close is not recorded, so the next open checks the whole file.
type damage struct {
	path string
	err  atomic.Pointer[DamagedError]
}

func (d *damage) get() error {
	if e := d.err.Load(); e != nil {
		return e
	}
	return nil
}

// guard runs fn, a bbolt transaction, with faults on the mapped file made
// panics (debug.SetPanicOnFault: a page past the end of a file that
// shrank would otherwise be a SIGBUS that kills the process) and any panic
// turned into a DamagedError that sticks.
func (d *damage) guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			e := &DamagedError{Path: d.path, Detail: fmt.Sprint(r)}
			d.err.CompareAndSwap(nil, e)
			err = e
		}
	}()
	err = fn()
	var de *DamagedError
	if errors.As(err, &de) {
		d.err.CompareAndSwap(nil, de)
	}
	return err
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

// checkPagesUpTo bounds the files Open checks page by page after a clean
// close: a few tens of milliseconds at this size. A larger cache is
// checked whole when its last close was not clean, and on demand (paydesk
// db check); after a clean close its branch pages are (branchwalk.go).
// Options.CheckPagesUpTo overrides it.
const checkPagesUpTo int64 = 64 << 20

// The clean-close marker is a key in the meta bucket: "open" while a
// paydesk has the file, removed by a clean Close. It lives in the file, not
// beside it, so that it travels with every copy: a copy taken while paydesk
// ran (cp, a backup) or a file restored from one says it was not closed
// cleanly, and is checked when opened. A file from before the marker has
// neither value and is checked once.
var (
	kOpenMarker = []byte("open")
	openValue   = []byte("open")
	closedValue = []byte("closed")
)

// The marker says "open" from the first write of a session on, not from
// the open: a file nobody has written since its clean close is still the
// file that close left, so the next open need not check it whole. The
// session's first write transaction puts "open" beside its writes, in the
// same commit, and a crash after it leaves "open" behind; the open itself
// commits nothing, where its commit of the marker (the file's whole
// freelist, two fsyncs) took 50 ms of a console's start on a million
// reservations.

// openMark is what a File's marker says: saysOpen when the file holds
// "open" (this session wrote, or its last close was not clean), which a
// clean close turns to "closed". Only the writer (bbolt's one write
// transaction at a time, or Close) changes it.
type openMark struct {
	saysOpen atomic.Bool
}

// putOpen puts "open" in tx, the session's first write, and takes it as
// said once tx commits. A file without its meta bucket yet (new, before
// its layout is written) gets it with the write that makes the bucket.
func (m *openMark) putOpen(tx *bolt.Tx) error {
	if m == nil || m.saysOpen.Load() {
		return nil
	}
	b := tx.Bucket(bMeta)
	if b == nil {
		return nil
	}
	if err := b.Put(kOpenMarker, openValue); err != nil {
		return err
	}
	tx.OnCommit(func() { m.saysOpen.Store(true) })
	return nil
}

// markClosed is a clean close's marker: "closed", in a commit of its own,
// when the file says "open"; nothing when the session wrote nothing to a
// file closed cleanly.
func (f *File) markClosed() error {
	if !f.mark.saysOpen.Load() {
		return nil
	}
	return f.damage.guard(func() error {
		return f.db.Update(func(tx *bolt.Tx) error {
			m := tx.Bucket(bMeta)
			if m == nil {
				return nil
			}
			if err := m.Put(kOpenMarker, closedValue); err != nil {
				return err
			}
			tx.OnCommit(func() { f.mark.saysOpen.Store(false) })
			return nil
		})
	})
}

// checkPages runs the full check on the open file when its last close was
// not clean (preflight read the marker) or it is small, else the check of
// its branch pages (branchwalk.go), and reports what it found.
func (f *File) checkPages(clean bool, upTo int64) error {
	if clean {
		fi, err := os.Stat(f.path)
		limit := checkPagesUpTo
		if upTo != 0 {
			limit = upTo
		}
		if err == nil && limit >= 0 && fi.Size() <= limit {
			clean = false // small: checked whole
		}
	}
	check := func() ([]string, error) { return checkOpen(f.path, f.db, f.damage) }
	if clean {
		// Large and closed cleanly: its branches only (branchwalk.go),
		// before bbolt reads a page of a tree.
		check = func() ([]string, error) { return walkBranches(f.path) }
	}
	problems, err := check()
	if err != nil {
		return err
	}
	switch len(problems) {
	case 0:
		return nil
	case 1:
		return &DamagedError{Path: f.path, Detail: problems[0]}
	}
	return &DamagedError{Path: f.path, Detail: fmt.Sprintf("%s; %s in all", problems[0], plural(len(problems), "problem"))}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkOpen walks the file's pages (walkPages) and, when they hold
// together, runs bbolt's Tx.Check on bdb for what the walk does not look
// at (key order). bbolt's check runs in a goroutine of its own, where a
// fault could not be caught: it runs only on pages the walk found sound.
func checkOpen(path string, bdb *bolt.DB, d *damage) ([]string, error) {
	problems, err := walkPages(path)
	if err != nil || len(problems) > 0 {
		return problems, err
	}
	return boltCheck(bdb, d)
}

// boltCheck runs bbolt's Tx.Check on a file whose pages walkPages found
// sound.
func boltCheck(bdb *bolt.DB, d *damage) (problems []string, err error) {
	err = d.guard(func() error {
		return bdb.View(func(tx *bolt.Tx) error {
			n := 0
			for e := range tx.Check() {
				if n < maxProblemsShown {
					problems = append(problems, e.Error())
				}
				n++
			}
			if n > maxProblemsShown {
				problems = append(problems, fmt.Sprintf("… and %d more", n-maxProblemsShown))
			}
			return nil
		})
	})
	return problems, err
}

// CheckFile checks a cache file page by page without opening it for
// writing: the meta pages against the file's size, every page reachable
// from the root and the freelist (walkPages), then bbolt's own check. It
// returns what it found, nothing for a sound file; the error is for a file
// it could not check (missing, held by another process). It never crashes
// or hangs on a damaged file.
func CheckFile(path string, lockTimeout time.Duration) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return []string{"the file is empty, 0 bytes"}, nil
	}
	if lockTimeout <= 0 {
		lockTimeout = time.Second
	}
	// A read-only open takes the file's shared lock (no paydesk writes it
	// while it is read) and reads only the meta pages, under the guard.
	d := &damage{path: path}
	var bdb *bolt.DB
	openErr := d.guard(func() (err error) {
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: lockTimeout})
		return err
	})
	if errors.Is(openErr, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("cache %s is %w (close the other console first)", path, ErrLocked)
	}
	if bdb != nil {
		defer bdb.Close()
	}
	problems, err := walkPages(path)
	switch {
	case err != nil || len(problems) > 0:
		return problems, err
	case openErr != nil:
		return []string{openErr.Error()}, nil
	}
	return boltCheck(bdb, d)
}

// FaultSafeView is bdb.View for the goroutines that read the file around
// the DB's engine (the warm-up): a fault or panic on a damaged page is an
// error there too, never a crash. path is the file's, for the error: bbolt's
// own Path is not safe beside a Close, which may end the warm-up at any time.
func FaultSafeView(bdb *bolt.DB, path string, fn func(tx *bolt.Tx) error) error {
	d := &damage{path: path}
	return d.guard(func() error { return bdb.View(fn) })
}
