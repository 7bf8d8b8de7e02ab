package kv

import (
	"crypto/sha256"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// cleanTree writes a bbolt file closed cleanly (OpenFile then checks
// only its branches) with a bucket "deep" of n keys, key(i) each with the
// value v, and returns its path and the bucket's root page.
func cleanTree(t *testing.T, n int, key func(i int) []byte, v []byte) (path string, root uint64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "tree.db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket([]byte("deep"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := bk.Put(key(i), v); err != nil {
				return err
			}
		}
		m, err := tx.CreateBucket(bMeta)
		if err != nil {
			return err
		}
		return m.Put(kOpenMarker, closedValue)
	})
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error { root = uint64(tx.Bucket([]byte("deep")).Root()); return nil })
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path, root
}

// deepTree writes a bbolt file with a bucket "deep" of three levels (a
// root branch, branches, leaves) and returns the file's bytes, the
// bucket's root page and the ids of the root's children (branches).
func deepTree(t *testing.T) (b []byte, root uint64, mid []uint64) {
	t.Helper()
	// hashed keys land anywhere: pages split half full, as an index's
	path, root := cleanTree(t, 25000, func(i int) []byte {
		k := sha256.Sum256(binary.BigEndian.AppendUint32(nil, uint32(i)))
		return k[:16]
	}, nil)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	page := func(id uint64) []byte { return b[int(id)*ps:] }
	if le.Uint16(page(root)[8:]) != flagBranch {
		t.Fatalf("the bucket's root %d is not a branch", root)
	}
	for i := range int(le.Uint16(page(root)[10:])) {
		mid = append(mid, le.Uint64(page(root)[pageHeaderSize+i*pageElemSize+8:]))
	}
	if len(mid) < 3 || le.Uint16(page(mid[0])[8:]) != flagBranch {
		t.Fatalf("the bucket is not three levels deep: root %d, children %v", root, mid)
	}
	return b, root, mid
}

// TestBranchWalk: the walk of the branches of a large file closed
// cleanly finds nothing on a sound tree of three levels and, anywhere in
// it (not only on the leftmost descent, which finds the leaves' depth), a
// branch whose child is itself or an ancestor (a loop), a page with two
// parents, a branch whose count runs past its page, a branch page that
// became a leaf (an unbalanced tree) and a child on the freelist — each
// refused by OpenFile with the way out in the message.
func TestBranchWalk(t *testing.T) {
	base, root, mid := deepTree(t)
	ps := os.Getpagesize()
	// child is the offset of the page id of child i of page id (-1: the
	// last).
	child := func(b []byte, id uint64, i int) int {
		if i < 0 {
			i += int(le.Uint16(b[int(id)*ps+10:]))
		}
		return int(id)*ps + pageHeaderSize + i*pageElemSize + 8
	}
	set64 := func(b []byte, off int, v uint64) { le.PutUint64(b[off:], v) }
	b1, b2 := mid[1], mid[len(mid)-1] // two branches off the leftmost descent
	freePage := func(b []byte) uint64 {
		pf, err := openPages(bytesReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pf.freelist()
		if err != nil || len(ids) == 0 {
			t.Fatalf("no free page: %v, %v", ids, err)
		}
		return ids[0]
	}
	cases := []struct {
		name   string
		damage func(b []byte)
		want   string // in the finding; "" for none
	}{
		{"sound", func([]byte) {}, ""},
		{"a branch's last child is itself", func(b []byte) { set64(b, child(b, b1, -1), b1) }, "on its own path (a loop)"},
		{"a branch's last child is the bucket's root", func(b []byte) { set64(b, child(b, b2, -1), root) }, "on its own path (a loop)"},
		{"the root's first child is the root", func(b []byte) { set64(b, child(b, root, 0), root) }, "deeper than 64 levels (a loop)"},
		{"two branches share a leaf", func(b []byte) { set64(b, child(b, b2, -1), le.Uint64(b[child(b, b1, 0):])) }, "a page used twice"},
		{"two parents of a branch", func(b []byte) { set64(b, child(b, root, -1), b1) }, "a page used twice"},
		{"a branch's count runs past its page", func(b []byte) { le.PutUint16(b[int(b1)*ps+10:], 0xFFF0) }, "claims 65520 elements"},
		{"a branch became a leaf", func(b []byte) { le.PutUint16(b[int(b2)*ps+8:], flagLeaf) }, "an unbalanced tree"},
		{"a child is free", func(b []byte) { set64(b, child(b, b1, -1), freePage(b)) }, "which is free"},
		{"a child past the high-water mark", func(b []byte) { set64(b, child(b, b2, 1), uint64(len(b)/ps)) }, "outside pages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), base...)
			tc.damage(b)
			path := writeCopy(t, b)
			f, err := OpenFile(path, FileOptions{NoSync: true, CheckPagesUpTo: -1, LockTimeout: time.Second})
			if err == nil {
				_ = f.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("a sound file: %v", err)
			case tc.want == "":
				return
			case err == nil:
				t.Fatal("OpenFile took the damaged file")
			case !strings.Contains(err.Error(), tc.want):
				t.Fatalf("OpenFile: %v; want %q", err, tc.want)
			}
			assertDamaged(t, err, path)
		})
	}
}

// seqTree writes a bbolt file closed cleanly with n keys in order in a
// bucket "deep" (pages split half full) and returns its path. Values of
// 256 B put few keys in a leaf: many leaves, and branches over them.
func seqTree(t *testing.T, n int) string {
	t.Helper()
	path, _ := cleanTree(t, n, func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }, make([]byte, 256))
	return path
}

// TestBranchWalkMemory: the walk's allocations do not grow with the
// branch pages it reads — no slice of children for each. Every open of a
// large file closed cleanly walks its branches, and memory new to a
// process is what its first touch of a page costs (14 µs a 4 KiB page on
// the 2-core VM): a slice each was 4.7 MB on a million reservations. The
// allocations are counted, not their bytes, which the race detector
// changes.
func TestBranchWalkMemory(t *testing.T) {
	type walked struct {
		branches int64
		allocs   uint64
	}
	measure := func(path string) walked {
		f, size, err := openChecked(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		best := walked{allocs: ^uint64(0)}
		for range 3 { // the least of three: another goroutine may allocate meanwhile
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			w, problems := newBranchWalk(f, size)
			if problems != nil {
				t.Fatal(problems)
			}
			w.walk()
			runtime.ReadMemStats(&m1)
			if got := w.findings(); len(got) > 0 {
				t.Fatal(got)
			}
			best.branches = w.pagesRead
			best.allocs = min(best.allocs, m1.Mallocs-m0.Mallocs)
		}
		return best
	}
	small, large := measure(seqTree(t, 5000)), measure(seqTree(t, 100000))
	if large.branches < small.branches+20 {
		t.Fatalf("the trees read %d and %d pages: too close to compare", small.branches, large.branches)
	}
	per := float64(large.allocs) - float64(small.allocs)
	per /= float64(large.branches - small.branches)
	t.Logf("%d pages read: %d allocations; %d pages: %d; %.2f a page more", small.branches, small.allocs, large.branches, large.allocs, per)
	if per > 0.5 {
		t.Fatalf("the walk allocates %.2f times more for each page it reads; want at most 0.5 (the pages' children go in one slice)", per)
	}
}
