package kv

import (
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// initialMmapSize is address space, not memory: mapping it up front spares
// the remaps (which stall every reader and the writer) while the file grows.
// The freelist stays synced (one page per commit): without it bbolt rebuilds
// the list by reading every page on open, 0.4 s on 100,000 reservations.
const initialMmapSize = 1 << 30

// FileOptions configure OpenFile.
type FileOptions struct {
	// NoSync skips fsync: for tests only, never for a real cache.
	NoSync bool
	// LockTimeout is how long OpenFile waits for a file another process
	// holds.
	LockTimeout time.Duration
	// CheckPagesUpTo is the largest file OpenFile checks page by page
	// after a clean close; 0 means 64 MiB, negative checks none (a larger
	// file closed cleanly has its branch pages checked: branchwalk.go).
	CheckPagesUpTo int64
	// OpenFile, when set, opens the file for bbolt (bolt.Options.OpenFile):
	// for the tests that need to know an open has the file before it
	// waits for the lock.
	OpenFile func(name string, flag int, perm os.FileMode) (*os.File, error)
}

// freelistType is how bbolt finds free pages for a commit: the lowest
// free pages first (the array). A commit rewrites a few values of several
// pages each (the last search text block of each list, its sketch, the
// freelist itself), which need free pages side by side; the map hands out
// a free run picked at random, and cutting runs up at random for single
// pages left a file that grew by use 290–830 B a reservation of free
// pages it could not reuse (50,000 reservations grown, two runs each;
// the array: 102–103 B). The array's lookups cost more on a file with
// many free pages, which a file written a small commit at a time does
// not have.
const freelistType = bolt.FreelistArrayType

// File is a cache file on bbolt, open under the damage guard: once a
// damaged page was met, the file takes no more writes (damage.go).
type File struct {
	db     *bolt.DB
	damage *damage
	path   string
	// fullCheck says the open checked every page because the file was not
	// closed cleanly (for the tests; a small file is checked whole anyway).
	fullCheck bool
	// mark is what the file's clean-close marker says (damage.go).
	mark *openMark
}

// OpenFile opens (or creates) the bbolt file at path after checking it:
// an empty file, meta pages that do not fit the file, and, after a close
// that was not clean or on a small file, every page (pagecheck.go), else
// every branch page (branchwalk.go) are a DamagedError; a file another
// process holds beyond LockTimeout is ErrLocked.
func OpenFile(path string, o FileOptions) (*File, error) {
	// A compaction (CompactTo, ReplaceWith) puts another file at the path
	// while it holds the lock: a process that opened the path before and
	// waited for the lock would then write to the file taken away. The
	// path is looked at before and after the open: when it names another
	// file by then, the open starts again on it.
	for try := 0; ; try++ {
		before, _ := os.Stat(path)
		f, err := openFile(path, o)
		if err != nil || before == nil || try == 2 {
			return f, err
		}
		if after, err := os.Stat(path); err == nil && !os.SameFile(before, after) {
			_ = f.Close()
			continue
		}
		return f, nil
	}
}

// openFile is OpenFile's one try.
func openFile(path string, o FileOptions) (*File, error) {
	if err := checkEmpty(path); err != nil {
		return nil, err
	}
	// bbolt maps the file and trusts its meta pages: check them against
	// the file first (pagecheck.go). What another process is writing may be
	// caught mid-change: bbolt's lock decides then.
	clean, preErr := preflight(path)
	if preErr != nil && !heldByOther(path) {
		return nil, preErr
	}
	f := &File{damage: &damage{path: path}, path: path, mark: &openMark{}}
	err := f.damage.guard(func() (err error) {
		f.db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: o.LockTimeout, NoSync: o.NoSync,
			FreelistType: freelistType, InitialMmapSize: initialMmapSize, OpenFile: o.OpenFile})
		return err
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			// Which flag picks another cache is the caller's to say.
			return nil, fmt.Errorf("cache %s is %w", path, ErrLocked)
		}
		if errors.Is(err, ErrDamaged) {
			return nil, err
		}
		if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
			return nil, &DamagedError{Path: path, Detail: err.Error()}
		}
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	// What preflight read before the lock was ours may have been another
	// process's file mid-change, or its file before its close wrote the
	// clean-close mark: a console started while another one closed would
	// then check every page of a file closed cleanly (38 s on a million
	// reservations). Now that no one else writes, read it again.
	if preErr != nil || !clean {
		if clean, err = preflight(path); err != nil {
			_ = f.db.Close()
			return nil, err
		}
	}
	f.fullCheck = !clean
	f.mark.saysOpen.Store(!clean)
	if err := f.checkPages(clean, o.CheckPagesUpTo); err != nil {
		_ = f.db.Close()
		return nil, err
	}
	return f, nil
}

// Engine is the file under the Engine interface, every transaction under
// the damage guard.
func (f *File) Engine() Engine { return boltEngine{db: f.db, damage: f.damage, mark: f.mark} }

// Bolt is the bbolt file itself, for the readers that walk it around the
// engine (the warm-up, the tests).
func (f *File) Bolt() *bolt.DB { return f.db }

// Damaged is the damage met while running (a *DamagedError), nil while
// the file is sound.
func (f *File) Damaged() error { return f.damage.get() }

// Close closes the file. A damaged file is let go without waiting: bbolt
// may never release its writer lock after a panic in a transaction's
// rollback (which rereads the freelist page), so its Close could wait
// forever (the process's end releases the file for sure).
func (f *File) Close() error {
	if f.damage.get() != nil {
		go func() { _ = f.db.Close() }()
		return nil
	}
	return f.db.Close()
}
