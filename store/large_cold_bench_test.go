//go:build linux

package store_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"paydesk/store"
)

// BenchmarkLargeTypingCold is BenchmarkLargeTyping on a file the kernel
// does not hold in its page cache — the console's first filter after a
// cold start — once as it is ("cold") and once after WarmLists, which the
// console runs after its first frame ("warmed"; ms-warm is how long the
// warm-up took). Each round drops the file's pages (posix_fadvise
// DONTNEED with the file closed; no root needed) and opens it again.
// bbolt only: PostgreSQL's server keeps its own cache.
func BenchmarkLargeTypingCold(b *testing.B) {
	where, db := largeDB(b)
	_ = db.Close()
	if strings.HasPrefix(where, "postgres") {
		b.Skip("bbolt only")
	}
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "warmed"
		}
		b.Run(name, func(b *testing.B) {
			var k keystrokes
			var warmed time.Duration
			for b.Loop() {
				b.StopTimer()
				evict(b, where)
				db, err := store.Open(where, store.Options{NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				// The first frame's page, as the console reads it.
				if _, err := db.ReservationPage(b.Context(), store.PageQuery{Sort: store.SortCreated, Desc: true, Limit: screen}); err != nil {
					b.Fatal(err)
				}
				if warm {
					t := time.Now()
					if err := db.WarmLists(context.Background()); err != nil {
						b.Fatal(err)
					}
					warmed = max(warmed, time.Since(t))
				}
				b.StartTimer()
				k.typeWord(b, db, "müller")
				b.StopTimer()
				_ = db.Close()
				b.StartTimer()
			}
			k.report(b)
			if warm {
				b.ReportMetric(float64(warmed.Milliseconds()), "ms-warm")
			}
		})
	}
}

// evict drops a closed file's pages from the kernel's page cache.
func evict(b *testing.B, path string) {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
}
