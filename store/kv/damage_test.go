package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// damagedCopy writes a cache with some pushes, closes it and overwrites
// its pages from the third on (the two meta pages stay) with garbage.
func damagedCopy(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cache.db")
	db, err := OpenBolt(path, Options{File: boltOpts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		gc, rec := giftCardPush(i)
		appendPush(t, db, gc, rec)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the meta pages, the freelist and the root bucket readable, so
	// that the damage is met among the records, as a bad sector would be.
	page := os.Getpagesize()
	le := func(off int) uint64 {
		var v uint64
		for k := 7; k >= 0; k-- {
			v = v<<8 | uint64(b[off+k])
		}
		return v
	}
	m := 0
	if le(page+16+56) > le(16+56) { // txid of meta 1 > meta 0
		m = page
	}
	keep := map[uint64]bool{le(m + 16 + 16): true} // root
	free := le(m + 16 + 32)
	for k := uint64(0); k <= uint64(binary.LittleEndian.Uint32(b[int(free)*page+12:])); k++ {
		keep[free+k] = true
	}
	for pg := 2; pg*page < len(b); pg++ {
		if keep[uint64(pg)] {
			continue
		}
		for i := pg * page; i < (pg+1)*page; i++ {
			b[i] = byte(i*7 + 3)
		}
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDamagedCache (F8): a damaged page, an empty file or damaged meta
// pages are reported in one line that says what to do, never with a
// panic; a damaged page found while reading (a file too large to check at
// open) is an error too.
func TestDamagedCache(t *testing.T) {
	t.Run("damaged pages, checked at open", func(t *testing.T) {
		path := damagedCopy(t)
		_, err := OpenBolt(path, Options{File: boltOpts}, nil)
		assertDamaged(t, err, path)
	})
	t.Run("damaged pages, found while reading", func(t *testing.T) {
		path := damagedCopy(t)
		o := boltOpts
		o.CheckPagesUpTo = -1
		db, err := OpenBolt(path, Options{File: o}, nil)
		if err != nil {
			assertDamaged(t, err, path)
			return
		}
		defer db.Close()
		err = db.Repo().View(t.Context(), func(tx RepoTx) error {
			if _, err := tx.PushesBefore(0, 0); err != nil {
				return err
			}
			_, err := tx.Transactions()
			return err
		})
		assertDamaged(t, err, path)
	})
	t.Run("empty file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cache.db")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenBolt(path, Options{File: boltOpts}, nil)
		assertDamaged(t, err, path)
		if fi, _ := os.Stat(path); fi.Size() != 0 {
			t.Errorf("the empty file was initialised (%d bytes)", fi.Size())
		}
	})
	t.Run("damaged meta pages", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cache.db")
		if err := os.WriteFile(path, bytes.Repeat([]byte{0xA5}, 4*os.Getpagesize()), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenBolt(path, Options{File: boltOpts}, nil)
		assertDamaged(t, err, path)
	})
}

func assertDamaged(t *testing.T, err error, path string) {
	t.Helper()
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v, want ErrDamaged", err)
	}
	msg := err.Error()
	t.Log(msg)
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "mv "+path) || strings.Contains(msg, "goroutine") {
		t.Fatalf("error is not one line that says what to do: %q", msg)
	}
}

// boltOpts open the tests' files as the store opens a cache.
var boltOpts = FileOptions{NoSync: true, LockTimeout: time.Second}
