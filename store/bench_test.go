package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"paydesk/store"
	"paydesk/store/storetest"
)

// generated builds a cache of n reservations once per benchmark and
// returns its path, closed.
func generated(b *testing.B, n int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "big.db")
	db, err := store.Open(path, store.Options{NoSync: true, Now: func() time.Time { return time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		b.Fatal(err)
	}
	if err := storetest.Generate(db, n, 1); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpenCache opens a cache of 100,000 reservations and loads what
// the first frame of the console needs: every summary row and the counts.
func BenchmarkOpenCache(b *testing.B) {
	path := generated(b, 100_000)
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		sums, err := db.LoadReservationSummaries(b.Context())
		if err != nil || len(sums) != 100_000 {
			b.Fatalf("%d rows, %v", len(sums), err)
		}
		if _, err := db.Counts(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
}

// BenchmarkLoadSummaries reads the 100,000 list rows of an open cache.
func BenchmarkLoadSummaries(b *testing.B) {
	path := generated(b, 100_000)
	db, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := db.LoadReservationSummaries(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
