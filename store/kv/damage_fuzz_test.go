package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// realCache is a cache as paydesk leaves it: reservations captured and
// refunded, gift card pushes, the journal and the audit log, enough for
// branch pages in the big buckets. running is a copy of the file taken
// while it was open (its clean-close marker says "open", like a backup
// made with cp); closed is the file after a clean close.
type realCache struct {
	running, closed []byte
}

// makeRealCache writes the records the store would, through the
// contract, in one transaction a push as the listener commits them.
func makeRealCache(t testing.TB) realCache {
	t.Helper()
	path := filepath.Join(t.TempDir(), "real.db")
	db, err := OpenBolt(path, Options{File: FileOptions{NoSync: true, LockTimeout: time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		r, txs := capturedReservation(i)
		put(t, db, []*Reservation{r}, txs)
		update(t, db, func(tx RepoTx) error {
			_, err := tx.AppendAudit(AuditEntry{Time: t0, Operator: "alice@desk1", Action: "capture", Target: r.Key,
				Amount: dec("30.00"), Currency: "EUR", Result: "190 Success"}, nil)
			return err
		})
	}
	for i := range 400 {
		gc, rec := giftCardPush(i)
		appendPush(t, db, gc, rec)
	}
	var rc realCache
	if rc.running, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if rc.closed, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	return rc
}

// pagesByType finds the pages of each type in a cache file as its newest
// meta page sees them (MapPages).
func pagesByType(t testing.TB, b []byte) PageMap {
	t.Helper()
	m, err := MapPages(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// exercise opens a damaged copy, reads every list, writes a push and checks
// the file, the way the console and the listener would meet it. It returns
// what OpenBolt said; everything else must be an error or a result, never
// a crash or a hang. Once a read or a write met damage, writes are refused.
func exercise(t *testing.T, path string, o FileOptions) error {
	t.Helper()
	o.LockTimeout = time.Second
	db, err := OpenBolt(path, Options{File: o}, nil)
	if err != nil {
		if !errors.Is(err, ErrDamaged) && !strings.Contains(err.Error(), path) {
			t.Errorf("OpenBolt: %v, not a damaged cache named by its path", err)
		}
		problems, cerr := CheckFile(path, 0)
		if cerr != nil || len(problems) == 0 {
			t.Errorf("OpenBolt refused the file (%v) but CheckFile found %q, %v", err, problems, cerr)
		}
		return err
	}
	defer db.Close()
	var damaged error
	note := func(err error) {
		if errors.Is(err, ErrDamaged) && damaged == nil {
			damaged = err
		}
	}
	read := func(fn func(tx RepoTx) error) { note(db.Repo().View(t.Context(), fn)) }
	read(func(tx RepoTx) error { _, err := tx.Summaries(); return err })
	read(func(tx RepoTx) error { _, err := tx.Transactions(); return err })
	read(func(tx RepoTx) error { _, err := tx.PushesBefore(0, 0); return err })
	read(func(tx RepoTx) error {
		return tx.WalkAudit(false, func(uint64, *AuditEntry, []byte, error) bool { return true })
	})
	_, err = (kvLister{db}).ReservationPage(t.Context(), PageQuery{Limit: 50})
	note(err)
	gc, rec := giftCardPush(1 << 20)
	write := func() error {
		enc := db.Repo().EncodePush(rec)
		return db.Repo().Update(t.Context(), func(tx RepoTx) error {
			if _, err := tx.PutTransaction(gc); err != nil {
				return err
			}
			_, err := tx.AppendPush(rec, enc)
			return err
		})
	}
	note(write())
	if damaged != nil {
		t.Logf("found while running: %.160s", damaged)
		if err := write(); !errors.Is(err, ErrDamaged) {
			t.Errorf("after %v a push was taken: %v", damaged, err)
		}
	}
	return nil
}

// flip returns a copy of b with bit of byte off flipped.
func flip(b []byte, off int, bit uint8) []byte {
	c := append([]byte(nil), b...)
	c[off%len(c)] ^= 1 << (bit % 8)
	return c
}

func writeCopy(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "damaged.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDamagedCachePatterns (issue 24): the damage reported — a cache cut
// short, a byte changed in a meta page, the freelist, a branch or a leaf —
// is found when the cache is opened (or, when read, refused as damaged),
// with the way out in the message; nothing crashes (the old code died of a
// SIGBUS on a file cut to 8 KB and on a branch pointing past the end, and
// recursed until the stack limit on a branch pointing at itself).
func TestDamagedCachePatterns(t *testing.T) {
	rc := makeRealCache(t)
	ps := os.Getpagesize()
	put64 := func(b []byte, off int, v uint64) []byte {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint64(c[off:], v)
		return c
	}
	put16 := func(b []byte, off int, v uint16) []byte {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint16(c[off:], v)
		return c
	}
	// Each case damages a file: its bytes, where its pages in use end, its
	// freelist page, a branch page (and the byte of its first child's page
	// id), a leaf page.
	type file struct {
		b                               []byte
		end, free, br, br2, child, leaf int
	}
	// lastChild is the offset of the page id of the last child of branch
	// page br.
	lastChild := func(f file, br int) int {
		n := int(binary.LittleEndian.Uint16(f.b[br*ps+10:]))
		return br*ps + pageHeaderSize + (n-1)*pageElemSize + 8
	}
	cases := []struct {
		name   string
		damage func(f file) []byte
		// found: Open must refuse it; otherwise it may open (the damage is
		// in data the check cannot judge) but must not crash.
		found bool
	}{
		{"cut to 8 KB", func(f file) []byte { return f.b[:8<<10] }, true},
		{"cut to half", func(f file) []byte { return f.b[:f.end/2] }, true},
		{"last page in use cut", func(f file) []byte { return f.b[:f.end-ps] }, true},
		{"meta 0 magic", func(f file) []byte { return flip(f.b, pageHeaderSize, 0) }, false},
		{"both metas' magic", func(f file) []byte { return flip(flip(f.b, pageHeaderSize, 0), ps+pageHeaderSize, 0) }, true},
		{"freelist count 0xFFFF, huge", func(f file) []byte {
			return put64(put16(f.b, f.free*ps+10, 0xFFFF), f.free*ps+pageHeaderSize, 1<<60)
		}, true},
		{"freelist id past the end", func(f file) []byte { return put64(put16(f.b, f.free*ps+10, 1), f.free*ps+pageHeaderSize, 1<<40) }, true},
		{"freelist type", func(f file) []byte { return put16(f.b, f.free*ps+8, flagLeaf) }, true},
		{"freelist lists a page twice", func(f file) []byte {
			id := uint64(f.end/ps - 1)
			return put64(put64(put16(f.b, f.free*ps+10, 2), f.free*ps+pageHeaderSize, id), f.free*ps+pageHeaderSize+8, id)
		}, true},
		{"branch child past the end of the file", func(f file) []byte { return put64(f.b, f.child, uint64(len(f.b)/ps+100)) }, true},
		{"branch child past the map", func(f file) []byte { return put64(f.b, f.child, 1<<40) }, true},
		{"branch child is the branch itself", func(f file) []byte { return put64(f.b, f.child, uint64(f.br)) }, true},
		{"branch type", func(f file) []byte { return put16(f.b, f.br*ps+8, 0x40) }, true},
		{"branch count", func(f file) []byte { return put16(f.b, f.br*ps+10, 0xFFF0) }, true},
		// two branches pointing at each other (A → B → A), each by its
		// last child: bbolt's Last goes round until memory runs out
		{"branch cycle of two", func(f file) []byte {
			return put64(put64(f.b, lastChild(f, f.br), uint64(f.br2)), lastChild(f, f.br2), uint64(f.br))
		}, true},
		// two branches with one child: a DAG, no loop, but a write would
		// free the page twice
		{"branch child shared", func(f file) []byte {
			return put64(f.b, lastChild(f, f.br), binary.LittleEndian.Uint64(f.b[lastChild(f, f.br2):]))
		}, true},
		{"leaf element position", func(f file) []byte { return put64(f.b, f.leaf*ps+pageHeaderSize, 0xFFFFFF00FFFFFF00) }, true},
		{"leaf count", func(f file) []byte { return put16(f.b, f.leaf*ps+10, 0xFFF0) }, true},
		{"leaf type", func(f file) []byte { return put16(f.b, f.leaf*ps+8, flagFreelist) }, true},
	}
	modes := []struct {
		name string
		base []byte
		opts FileOptions
	}{
		// a small cache: checked at every open
		{"small", rc.closed, FileOptions{NoSync: true}},
		// a large one (over CheckPagesUpTo) copied while open: its
		// clean-close marker says "open", so the check runs
		{"large, not closed cleanly", rc.running, FileOptions{NoSync: true, CheckPagesUpTo: -1}},
		// a large one closed cleanly: not checked whole at open; what the
		// meta pages and the freelist hold is (before bbolt maps the
		// file), and so are its branches (branchwalk.go); damage in the
		// leaves is found when read — a page past the end of the file is a
		// fault made an error, not a SIGBUS — and then the cache takes no
		// more writes (exercise)
		{largeClean, rc.closed, FileOptions{NoSync: true, CheckPagesUpTo: -1}},
	}
	// The branch patterns hang or crash the process when bbolt reads them
	// unchecked: the mode that checks only the branches runs in a child
	// process with a deadline, so that a regression fails the test rather
	// than hanging the suite or ending it.
	child := os.Getenv(damageChildEnv) != ""
	if !child {
		t.Run(largeClean, func(t *testing.T) { runDamageChild(t, "^TestDamagedCachePatterns$") })
	}
	for _, mode := range modes {
		if (mode.name == largeClean) != child {
			continue
		}
		pm := pagesByType(t, mode.base)
		pages := pm.Kinds
		// a branch of the push log, a leaf of the transactions: both read
		// by the lists, neither on the way to the meta bucket
		if len(pages["branch/pushes"]) == 0 || len(pages["leaf/transactions"]) == 0 {
			t.Fatalf("the fixture has no branch in the push log or no leaf in the transactions: %v", pages)
		}
		if len(pages["branch/transactions"]) == 0 {
			t.Fatalf("the fixture has no branch in the transactions: %v", pages)
		}
		f := file{b: mode.base, end: pm.End * ps, free: pages["freelist"][0], br: pages["branch/pushes"][0],
			br2: pages["branch/transactions"][0], leaf: pages["leaf/transactions"][0]}
		f.child = f.br*ps + pageHeaderSize + 8
		for i, tc := range cases {
			if !sampled(i) {
				continue
			}
			// leaves are not read at open in a large file closed cleanly:
			// their damage is found when read (exercise)
			unchecked := mode.name == largeClean && strings.HasPrefix(tc.name, "leaf ")
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				path := writeCopy(t, tc.damage(f))
				err := exercise(t, path, mode.opts)
				if tc.found && err == nil && !unchecked {
					t.Fatal("OpenBolt took the damaged cache")
				}
				if err != nil {
					assertDamaged(t, err, path)
				}
			})
		}
	}
}

// largeClean is the mode of TestDamagedCachePatterns whose file is large
// and closed cleanly: only its branches are checked at open.
const largeClean = "large, closed cleanly"

// damageChildEnv set makes TestDamagedCachePatterns run the mode
// largeClean only, in the child process runDamageChild starts.
const damageChildEnv = "PAYDESK_DAMAGE_CHILD"

// runDamageChild runs the tests matching run in a child process of this
// test binary, with damageChildEnv set, and fails when it fails, crashes
// or outlives a deadline (a hang: it is killed).
func runDamageChild(t *testing.T, run string) {
	wait := 4 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d)-30*time.Second < wait {
		wait = time.Until(d) - 30*time.Second
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", run, "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), damageChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the child process still ran after %s (a hang), killed; its output:\n%s", wait, tail(out, 16000))
	}
	if err != nil {
		t.Fatalf("the child process: %v; its output:\n%s", err, tail(out, 16000))
	}
	if !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("the child process ran no test; its output:\n%s", tail(out, 16000))
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "--- ") || strings.Contains(line, "is damaged") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// TestCleanCloseMarker: the file says whether its last close was clean —
// a copy taken while paydesk had written it says not, a copy of a file
// nobody has written since its clean close is that file and says so — and
// a large cache is checked page by page only when it was not (a cleanly
// closed large cache has its branches checked, its leaves' damage is
// found when read).
func TestCleanCloseMarker(t *testing.T) {
	rc := makeRealCache(t)
	for _, tc := range []struct {
		name  string
		file  []byte
		clean bool
	}{{"closed", rc.closed, true}, {"copied while open", rc.running, false}} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeCopy(t, tc.file)
			saysClean := func(when string, want bool) {
				t.Helper()
				if clean, err := CleanClosed(path); err != nil || clean != want {
					t.Fatalf("%s: clean %v, %v; want %v", when, clean, err, want)
				}
			}
			saysClean("before open", tc.clean)
			db, err := OpenBolt(path, Options{File: FileOptions{NoSync: true, CheckPagesUpTo: -1, LockTimeout: time.Second}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			saysClean("open, nothing written", tc.clean)
			if err := db.eng.Update(func(tx Tx) error { return tx.Bucket(bMeta).Put([]byte("t"), []byte("x")) }); err != nil {
				t.Fatal(err)
			}
			saysClean("after a write (a crash now)", false)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			saysClean("after close", true)
		})
	}
}

// FuzzDamagedCache opens, reads, writes and checks damaged copies of a
// real cache: cut at any length, or one bit flipped in a page of a chosen
// type (meta, freelist, branch, leaf), opened as a small cache (checked
// whole), a large one not closed cleanly (checked whole) or a large one
// closed cleanly (its branches checked: branchwalk.go). No input may crash
// or hang it: each run is bounded by design (the page walks read each
// page at most once, bbolt runs only on a tree the walk found sound).
func FuzzDamagedCache(f *testing.F) {
	rc := makeRealCache(f)
	pages := pagesByType(f, rc.closed).Kinds
	kinds := []string{"cut", "meta", "freelist", "branch", "leaf"}
	for k := range kinds {
		for _, seed := range [][3]uint16{{0, 16, 0}, {0, 40, 3}, {1, 56, 5}, {0, 8, 1}, {0, 10, 7}, {0, 24, 2}} {
			f.Add(uint8(k), seed[0], seed[1], uint8(seed[2]), uint32(8<<10), uint8(0))
		}
	}
	f.Add(uint8(0), uint16(0), uint16(0), uint8(0), uint32(len(rc.closed)/2), uint8(1))
	// large, closed cleanly: a branch's count, its first child's id, its
	// type; a leaf's type
	for _, seed := range [][4]uint16{{3, 0, 11, 7}, {3, 0, 24, 3}, {3, 1, 25, 0}, {3, 2, 8, 1}, {4, 0, 8, 0}} {
		f.Add(uint8(seed[0]), seed[1], seed[2], uint8(seed[3]), uint32(0), uint8(2))
	}
	ps := os.Getpagesize()
	var seeds atomic.Int64
	f.Fuzz(func(t *testing.T, kind uint8, page, off uint16, bit uint8, cut uint32, mode uint8) {
		if !sampled(int(seeds.Add(1) - 1)) {
			t.Skip("under -race a quarter of the inputs (sampled)")
		}
		base, opts := rc.closed, FileOptions{NoSync: true}
		switch mode % 3 {
		case 1:
			base, opts = rc.running, FileOptions{NoSync: true, CheckPagesUpTo: -1}
		case 2:
			opts.CheckPagesUpTo = -1
		}
		var b []byte
		switch name := kinds[int(kind)%len(kinds)]; name {
		case "cut":
			b = base[:int(cut)%len(base)]
		default:
			ids := pages[name]
			id := ids[int(page)%len(ids)]
			b = flip(base, id*ps+int(off)%ps, bit)
		}
		if len(b) == 0 {
			return // an empty file: TestDamagedCache
		}
		if err := exercise(t, writeCopy(t, b), opts); err != nil && !errors.Is(err, ErrDamaged) {
			t.Fatalf("OpenBolt: %v", err)
		}
	})
}

// sampled says whether case i runs: all of them, but under the race
// detector every fourth. The damaged-file tests open one file at a time
// in one goroutine, where the race detector checks nothing and costs
// several times the CPU; .ci/run runs them whole without it, beside the
// race pass.
func sampled(i int) bool { return !raceEnabled || i%4 == 0 }
