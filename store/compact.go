package store

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// CompactFile compacts the cache file at path in place: it opens it as
// paydesk does (the lock, the checks, the upgrades), writes a compacted
// copy beside it (path + ".compact": every bucket's keys in order on full
// pages, no free pages) and puts the copy in its place while it still
// holds the file, then closes it. It returns the file's sizes before and
// after. A team's database is PostgreSQL's to compact (VACUUM).
func CompactFile(path string, lockTimeout time.Duration, upgrading func(string)) (before, after int64, err error) {
	if IsPostgresURL(path) {
		return 0, 0, errors.New("a PostgreSQL database compacts itself (autovacuum, VACUUM FULL); give a cache file")
	}
	if _, err := os.Stat(path); err != nil {
		return 0, 0, fmt.Errorf("cache %s: %w", path, err)
	}
	db, err := Open(path, Options{LockTimeout: lockTimeout, Upgrading: upgrading})
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("cache %s: %w", path, err)
	}
	f := db.bk.File()
	tmp := path + ".compact"
	if err := f.CompactTo(tmp); err != nil {
		return 0, 0, fmt.Errorf("cache %s: %w", path, err)
	}
	if err := f.ReplaceWith(tmp); err != nil {
		_ = os.Remove(tmp)
		return 0, 0, fmt.Errorf("cache %s: %w", path, err)
	}
	fa, err := os.Stat(path)
	if err != nil {
		return 0, 0, fmt.Errorf("cache %s: %w", path, err)
	}
	return fi.Size(), fa.Size(), nil
}
