package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// CompactTo writes a compacted copy of the open file to dst: every bucket
// with its keys in order and its pages full (bbolt's Compact), no free
// pages. A file grows with keys that land all over its trees (transaction
// keys, reservation numbers), whose pages bbolt splits half full, and
// with the pages its commits freed: a year of a shop's pushes and
// reservations takes about two thirds more than its compacted copy. The
// copy is marked closed cleanly, so that opening it checks its branch
// pages only, as for the file it replaces; it is synced before it is
// closed. The caller holds the file (its lock) throughout, so nothing is
// written to it meanwhile.
func (f *File) CompactTo(dst string) (err error) {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("compact: %w", err)
	}
	out, err := bolt.Open(dst, 0o600, &bolt.Options{NoSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return fmt.Errorf("compact into %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			_ = out.Close() // closed once already on success; bbolt allows it
			_ = os.Remove(dst)
		}
	}()
	err = f.damage.guard(func() error { return bolt.Compact(out, f.db, 64<<20) })
	if err != nil {
		return fmt.Errorf("compact into %s: %w", dst, err)
	}
	err = out.Update(func(tx *bolt.Tx) error {
		if m := tx.Bucket(bMeta); m != nil {
			return m.Put(kOpenMarker, closedValue)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("compact into %s: %w", dst, err)
	}
	// bbolt grows a file 16 MB past its pages, which hold no blocks but
	// count in its size: the copy ends with its last page (bbolt grows it
	// again when it needs to).
	var size int64
	if err := out.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		return fmt.Errorf("compact into %s: %w", dst, err)
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("compact into %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("compact into %s: %w", dst, err)
	}
	return truncateSynced(dst, size)
}

// truncateSynced cuts the file at path to size, durably.
func truncateSynced(path string, size int64) error {
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	defer fh.Close()
	if err := fh.Truncate(size); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := fh.Sync(); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}

// SyncPath fsyncs the file or folder at path: what was written to a file
// through another handle, or a rename or a new name in a folder, is then
// durable.
func SyncPath(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ReplaceWith puts the file at src (a compacted copy, CompactTo) in place
// of the open file, durably, while the file is still held: a process that
// opens the path after it gets the copy. One that opened the path before
// and waits for the lock gets the old file when this one closes; OpenFile
// sees that its path names another file by then and opens it again.
func (f *File) ReplaceWith(src string) error {
	if err := os.Rename(src, f.path); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := SyncPath(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}
