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

// benchPath is the cache of the benchmarks: PAYDESK_LARGE (a file of a
// million reservations made by store/storetest/gen, see docs/large.md) or
// 100,000 generated here.
func benchPath(b *testing.B) string {
	if p := os.Getenv("PAYDESK_LARGE"); p != "" {
		return p
	}
	return benchCache(b)
}

// drain runs commands and hands their messages to the app, as the
// program would (without the ticks and the waits of the live loop).
func drain(a *App, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			drain(a, c)
		}
		return
	}
	_, next := a.Update(msg)
	drain(a, next)
}

// BenchmarkOpenCache opens a cache and does all the first frame needs:
// give the reservations list the store, read its first page, draw the
// frame.
func BenchmarkOpenCache(b *testing.B) {
	path := benchPath(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		db, err := store.Open(path, store.Options{Now: func() time.Time { return testNow }})
		if err != nil {
			b.Fatal(err)
		}
		a := New(Config{Store: db, Now: func() time.Time { return testNow }, Location: time.UTC})
		a.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
		_, cmd := a.Update(views.ReservationSourceMsg{Source: db})
		drain(a, cmd)
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
// footer) over the benchmark cache, with everything the console loads at
// start (the attention tab's rows too: on a million reservations it holds
// 5,000, and the tab bar shows their count on every frame).
// "a second each" moves the clock a second before every frame: the
// attention count is counted again then (the tab ticks once a second).
func BenchmarkFrame(b *testing.B) {
	path := benchPath(b)
	for _, step := range []time.Duration{0, time.Second} {
		name := "clock still"
		if step > 0 {
			name = "a second each"
		}
		b.Run(name, func(b *testing.B) {
			now := testNow
			clock := func() time.Time { return now }
			db, err := store.Open(path, store.Options{Now: clock})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			a := New(Config{Store: db, Now: clock, Location: time.UTC})
			a.Update(tea.WindowSizeMsg{Width: 120, Height: 36})
			drain(a, a.loadAll())
			a.Update(tea.KeyPressMsg{Code: '1', Text: "1"}) // the reservations tab
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				now = now.Add(step)
				_ = a.View()
			}
		})
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
		if _, err := db.LoadReservationSummaries(b.Context()); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}
