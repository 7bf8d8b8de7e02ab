package views

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store"
	"paydesk/ui/theme"
)

// TestRedrawKeepsUnchangedRows: a frame draws afresh only the rows whose
// cells changed (the table's fitting and painting were most of a frame's
// cost, and fifty consoles over SSH redraw after every reload though the
// pushes often fall off their screens): a change off the screen draws no
// row, a change on it that row, a cursor move the two rows it leaves and
// reaches; a new width or theme draws them all. Every frame is the frame
// a table without kept rows draws.
func TestRedrawKeepsUnchangedRows(t *testing.T) {
	now := listNow
	var rows []*ReservationRow
	for i := range 60 {
		rows = append(rows, &ReservationRow{Summary: store.Summary{Key: fmt.Sprintf("K%03d", i), Invoice: fmt.Sprintf("INV-%03d", i),
			ReservationNumber: fmt.Sprint("R", i), Customer: "Jan", Country: "NL", Currency: "EUR", State: store.StateReserved,
			Amount: decimal.NewFromInt(int64(10 + i)), Remaining: decimal.NewFromInt(int64(10 + i)), Created: now.Add(-time.Duration(i) * time.Hour)}})
	}
	ctx := NewContext(func() time.Time { return now })
	s := NewReservations(ctx)
	s.SetSize(120, 20)
	finish(s.Update(ReservationRowsMsg{Full: true, Rows: rows}), s)
	// fresh draws the same rows without kept rows.
	fresh := func() string {
		fctx := NewContext(func() time.Time { return now })
		fctx.Theme = ctx.Theme
		f := NewReservations(fctx)
		f.SetSize(s.width, s.height)
		finish(f.Update(ReservationRowsMsg{Full: true, Rows: rows}), f)
		f.list.table.SetCursor(s.list.table.Cursor())
		return f.View()
	}
	table := s.list.table
	for _, step := range []struct {
		name  string
		do    func()
		drawn int
	}{
		{"first frame", func() {}, 18},
		{"nothing changed", func() {}, 0},
		{"a change off the screen", func() {
			rows[50] = &ReservationRow{Summary: rows[50].Summary}
			rows[50].Summary.State = store.StateCaptured
			finish(s.Update(ReservationRowsMsg{Rows: []*ReservationRow{rows[50]}}), s)
		}, 0},
		{"a change on the screen", func() {
			rows[3] = &ReservationRow{Summary: rows[3].Summary}
			rows[3].Summary.Customer = "Anna"
			finish(s.Update(ReservationRowsMsg{Rows: []*ReservationRow{rows[3]}}), s)
		}, 1},
		{"the cursor moves", func() { table.Move(1) }, 2},
		{"a minute passes: one age changes", func() { now = now.Add(time.Minute) }, 1},
		{"a narrower terminal", func() { s.SetSize(100, 20) }, 18},
		{"the light theme", func() { *ctx.Theme = *theme.New(false) }, 18},
	} {
		step.do()
		before := table.rows.fresh
		got := s.View()
		if drawn := table.rows.fresh - before; drawn != step.drawn {
			t.Errorf("%s: %d rows drawn afresh, want %d", step.name, drawn, step.drawn)
		}
		if want := fresh(); got != want {
			t.Fatalf("%s: the frame differs from one drawn afresh:\n%s\nwant\n%s", step.name, got, want)
		}
		if !strings.Contains(got, "INV-000") {
			t.Fatalf("%s: no rows:\n%s", step.name, got)
		}
	}
}
