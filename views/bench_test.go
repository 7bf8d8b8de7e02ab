package views

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/store/storetest"
)

// benchNow is the clock of the generated cache.
var benchNow = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

var (
	benchOnce sync.Once
	benchRows []*ReservationRow
	benchErr  error
)

// benchReservations generates a cache of 100,000 reservations with the
// store's generator once per process and loads its list rows.
func benchReservations(b *testing.B) []*ReservationRow {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "paydesk-views-bench")
		if err != nil {
			benchErr = err
			return
		}
		defer os.RemoveAll(dir)
		db, err := store.Open(filepath.Join(dir, "bench.db"), store.Options{NoSync: true, Now: func() time.Time { return benchNow }})
		if err != nil {
			benchErr = err
			return
		}
		defer db.Close()
		if benchErr = storetest.Generate(db, 100_000, 1); benchErr != nil {
			return
		}
		sums, err := db.LoadReservationSummaries(b.Context())
		if err != nil {
			benchErr = err
			return
		}
		benchRows = NewReservationRows(sums)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchRows
}

// loadedReservations is the tab with rows loaded and sorted, as after
// start-up.
func loadedReservations(b *testing.B, rows []*ReservationRow) *Reservations {
	ctx := NewContext(func() time.Time { return benchNow })
	ctx.Location = time.UTC
	s := NewReservations(ctx)
	s.SetSize(120, 33) // 120x36 minus the tab bar, status bar and footer
	finish(s.Update(ReservationRowsMsg{Full: true, Rows: rows}), s)
	return s
}

// finish runs the commands a screen returned (its sort or filter job) and
// hands it their messages.
func finish(cmd tea.Cmd, s Screen) {
	for cmd != nil {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				finish(c, s)
			}
			return
		}
		cmd = s.Update(msg)
	}
}

// BenchmarkRenderReservations draws one full frame of the reservations list
// at 120x36 over 100,000 rows.
func BenchmarkRenderReservations(b *testing.B) {
	rows := benchReservations(b)
	s := loadedReservations(b, rows)
	s.list.table.SetCursor(50_000)
	finish(s.list.ensure(), s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = s.View()
	}
	b.ReportMetric(float64(len(rows)), "rows")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/frame")
}

// largeStore opens the store of a million reservations the large
// benchmarks read (PAYDESK_LARGE: a file or URL made by
// store/storetest/gen; see docs/large.md).
func largeStore(b *testing.B) *store.DB {
	where := os.Getenv("PAYDESK_LARGE")
	if where == "" || testing.Short() {
		b.Skip("set PAYDESK_LARGE to a cache made by store/storetest/gen")
	}
	db, err := store.Open(where, store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// frames pages a list screen a thousand screens down, then times its
// frame.
func frames(b *testing.B, s Screen, cursor func() int) {
	for range 1000 {
		finish(s.Update(tea.KeyPressMsg{Code: tea.KeyPgDown}), s)
	}
	if cursor() < 30_000 {
		b.Fatalf("the cursor is on row %d", cursor())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = s.View()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/frame")
}

// BenchmarkRenderReservationsLarge draws one frame of the reservations list
// reading from a store of a million reservations, after paging a thousand
// screens down.
func BenchmarkRenderReservationsLarge(b *testing.B) {
	db := largeStore(b)
	ctx := NewContext(func() time.Time { return benchNow })
	ctx.Location = time.UTC
	s := NewReservations(ctx)
	s.SetSize(120, 33)
	finish(s.Update(ReservationSourceMsg{Source: db}), s)
	frames(b, s, func() int {
		if _, ok := s.list.selected(); !ok {
			return -1
		}
		return s.list.table.Cursor()
	})
}

// BenchmarkRenderTransactionsLarge is the same for the transactions list
// (550,000 captures).
func BenchmarkRenderTransactionsLarge(b *testing.B) {
	db := largeStore(b)
	ctx := NewContext(func() time.Time { return benchNow })
	ctx.Location = time.UTC
	s := NewTransactions(ctx)
	s.SetSize(120, 33)
	finish(s.Update(TransactionSourceMsg{Source: db}), s)
	frames(b, s, func() int {
		if _, ok := s.list.selected(); !ok {
			return -1
		}
		return s.list.table.Cursor()
	})
}
