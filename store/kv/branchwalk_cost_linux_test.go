package kv

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// TestBranchWalkCost measures what the branch walk adds to opening a
// large cache closed cleanly (docs/store.md), side by side with the open
// without it (the meta pages, the freelist and bbolt's open, as before the
// walk), warm and cold (the file's pages dropped from the page cache with
// posix_fadvise before each cold open). It only runs on a file made by
// store/storetest/gen:
//
//	go run ./store/storetest/gen -db /tmp/200k.db -n 200000
//	PAYDESK_LARGE=/tmp/200k.db go test -run TestBranchWalkCost -v ./store/kv/
func TestBranchWalkCost(t *testing.T) {
	path := os.Getenv("PAYDESK_LARGE")
	if path == "" || strings.Contains(path, "://") {
		t.Skip("set PAYDESK_LARGE to a bbolt cache made by store/storetest/gen")
	}
	if clean, err := CleanClosed(path); err != nil || !clean {
		t.Skipf("%s was not closed cleanly (%v): its open checks it whole", path, err)
	}
	evict := func() {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
	}
	// without: what OpenFile did on such a file before the walk
	without := func() {
		if _, err := preflight(path); err != nil {
			t.Fatal(err)
		}
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType,
			InitialMmapSize: initialMmapSize, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		_ = db.Close()
	}
	with := func() {
		without()
		problems, err := walkBranches(path)
		if err != nil || len(problems) > 0 {
			t.Fatalf("the walk: %q, %v", problems, err)
		}
	}
	measure := func(name string, cold bool, fn func()) {
		if cold {
			evict()
		}
		io0 := procIO(t)
		start := time.Now()
		fn()
		d := time.Since(start)
		io1 := procIO(t)
		t.Logf("%-8s %-4s %8.1f ms  read %7.1f MB from the disk, %7.1f MB by read calls", name, map[bool]string{true: "cold", false: "warm"}[cold],
			float64(d.Microseconds())/1000, float64(io1["read_bytes"]-io0["read_bytes"])/1e6, float64(io1["rchar"]-io0["rchar"])/1e6)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	w, problems := newBranchWalk(f, fi.Size())
	if problems != nil {
		t.Fatal(problems)
	}
	w.walk()
	_ = f.Close()
	t.Logf("%s: %d MB, %d pages; the walk reads %d pages, %.1f MB", path, fi.Size()>>20, w.hwm, w.pagesRead, float64(w.bytesRead)/1e6)
	for range 3 {
		measure("without", true, without)
		measure("with", true, with)
	}
	for range 5 {
		measure("without", false, without)
		measure("with", false, with)
	}
}

// procIO reads this process's I/O counters (rchar: bytes read by read
// calls, from the page cache or not; read_bytes: bytes the disk gave).
func procIO(t *testing.T) map[string]int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io:", err)
	}
	defer f.Close()
	out := map[string]int64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ": ")
		if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
			out[k] = n
		}
	}
	return out
}

func BenchmarkBranchWalk(b *testing.B) {
	path := os.Getenv("PAYDESK_LARGE")
	if path == "" || strings.Contains(path, "://") {
		b.Skip("set PAYDESK_LARGE to a bbolt cache made by store/storetest/gen")
	}
	for b.Loop() {
		if problems, err := walkBranches(path); err != nil || len(problems) > 0 {
			b.Fatal(problems, err)
		}
	}
}
