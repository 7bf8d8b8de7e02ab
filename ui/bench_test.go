package ui

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/store/storetest"
	"paydesk/views"
)

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchCache writes a cache of 100,000 generated reservations once per
// process and returns its path.
func benchCache(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "paydesk-ui-bench")
		if benchErr != nil {
			return
		}
		db, err := store.Open(filepath.Join(benchDir, "bench.db"), store.Options{NoSync: true, Now: func() time.Time { return testNow }})
		if err != nil {
			benchErr = err
			return
		}
		if benchErr = storetest.Generate(db, 100_000, 1); benchErr != nil {
			return
		}
		benchErr = db.Close()
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return filepath.Join(benchDir, "bench.db")
}

// BenchmarkOpenCache opens a cache of 100,000 reservations and does all
// the first frame needs: load the list rows, sort them, draw the frame.
func BenchmarkOpenCache(b *testing.B) {
	path := benchCache(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path, store.Options{Now: func() time.Time { return testNow }})
		if err != nil {
			b.Fatal(err)
		}
		a := New(Config{Store: db, Now: func() time.Time { return testNow }, Location: time.UTC})
		a.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
		sums, err := db.LoadReservationSummaries()
		if err != nil {
			b.Fatal(err)
		}
		_, sortJob := a.Update(views.ReservationRowsMsg{Full: true, Rows: views.NewReservationRows(sums)})
		// The sort job of a big list; what it returns (laying out the search
		// text) runs in the background after the first frame.
		a.Update(sortJob())
		if frame := a.render(); len(frame) == 0 {
			b.Fatal("empty frame")
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
}

// BenchmarkFrame draws the whole console (tab bar, list, status bar,
// footer) over 100,000 reservations.
func BenchmarkFrame(b *testing.B) {
	path := benchCache(b)
	db, err := store.Open(path, store.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	a := New(Config{Store: db, Now: func() time.Time { return testNow }, Location: time.UTC})
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
	sums, _ := db.LoadReservationSummaries()
	_, cmd := a.Update(views.ReservationRowsMsg{Full: true, Rows: views.NewReservationRows(sums)})
	for cmd != nil {
		_, cmd = a.Update(cmd())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = a.View()
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkLoadSummaries is the cache's share of BenchmarkOpenCache: open
// and read the 100,000 list rows, nothing else.
func BenchmarkLoadSummaries(b *testing.B) {
	path := benchCache(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := db.LoadReservationSummaries(); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}
