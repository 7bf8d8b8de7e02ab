package views

import (
	"context"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/shopspring/decimal"

	"paydesk/store"
)

var listNow = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func genRows(n int) []*ReservationRow {
	names := []string{"Anna Müller", "Jan de Vries", "Lukas Gruber", "Eva Bakker", "Tom Visser"}
	articles := []string{"CUP-6 Espresso cups", "BOOT-42 Hiking boots", "SCARF Wool scarf"}
	out := make([]*ReservationRow, n)
	for i := range out {
		out[i] = NewReservationRow(store.Summary{
			Key: fmt.Sprintf("%032X", i), ReservationNumber: fmt.Sprintf("R%07d", i), Invoice: fmt.Sprintf("INV-%06d", i),
			Customer: names[i%len(names)], Country: "NL", Currency: "EUR",
			Amount: decimal.New(int64(1000+i*7%5000), -2), State: store.StateReserved,
			Created: listNow.Add(-time.Duration(i) * time.Minute), Articles: articles[i%len(articles)],
		})
	}
	return out
}

func press(s Screen, keys ...string) {
	for _, k := range keys {
		var m tea.KeyPressMsg
		switch k {
		case "enter":
			m = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			m = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "backspace":
			m = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "down":
			m = tea.KeyPressMsg{Code: tea.KeyDown}
		case "end":
			m = tea.KeyPressMsg{Code: tea.KeyEnd}
		default:
			m = tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		}
		finish(s.Update(m), s)
	}
}

func newTab(rows []*ReservationRow) *Reservations {
	ctx := NewContext(func() time.Time { return listNow })
	s := NewReservations(ctx)
	s.SetSize(120, 20)
	finish(s.Update(ReservationRowsMsg{Full: true, Rows: rows}), s)
	return s
}

// slowSource answers like memory but, not being memory, is asked in
// commands, as the store is.
type slowSource struct{ m *memSource }

func (s slowSource) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	return s.m.ReservationPage(ctx, q)
}
func (s slowSource) ReservationCount(ctx context.Context, q store.PageQuery) (int, error) {
	return s.m.ReservationCount(ctx, q)
}

func summaries(rows []*ReservationRow) []store.Summary {
	out := make([]store.Summary, len(rows))
	for i, r := range rows {
		out[i] = r.Summary
	}
	return out
}

// Typing into the filter never waits for the store: each keystroke asks
// in a command, one read at a time; what is typed meanwhile is asked next,
// and an answer to an older question is never shown.
func TestFilterRunsAsyncAndDropsStaleAnswers(t *testing.T) {
	rows := genRows(3000)
	s := NewReservations(NewContext(func() time.Time { return listNow }))
	s.SetSize(120, 20)
	src := slowSource{&memSource{all: summaries(rows)}}
	finish(s.Update(ReservationSourceMsg{Source: src}), s)
	press(s, "/")
	c1 := s.Update(tea.KeyPressMsg{Code: 'm', Text: "m"})
	c2 := s.Update(tea.KeyPressMsg{Code: 'ü', Text: "ü"})
	if c1 == nil {
		t.Fatal("the filter read the store inside Update")
	}
	if c2 != nil {
		t.Fatal("a second read started while the first ran")
	}
	if !s.list.inflight {
		t.Error("the list does not say it is reading")
	}
	finish(c1, s) // the answer for "m" arrives late: "mü" is asked instead
	want := store.PageSummaries(summaries(rows), store.PageQuery{Filter: "mü", Desc: true, Limit: 20000})
	if s.list.query != "mü" || s.list.total != want.Total || s.list.rows[0].Summary.Key != want.Rows[0].Summary.Key {
		t.Fatalf("shows %q: %d rows, want %q: %d rows", s.list.query, s.list.total, "mü", want.Total)
	}
}

func TestFilterNarrowsWidensAndClears(t *testing.T) {
	rows := genRows(50)
	s := newTab(rows)
	press(s, "/", "c", "u", "p")
	if n := s.list.len(); n != 17 {
		t.Fatalf("cup: %d rows, want 17", n)
	}
	press(s, "backspace", "backspace", "backspace", "g")
	if n, want := s.list.len(), store.PageSummaries(summaries(rows), store.PageQuery{Filter: "g"}).Total; n != want {
		t.Fatalf("g: %d rows, want %d", n, want)
	}
	press(s, "esc")
	if s.list.len() != 50 || s.Capturing() {
		t.Fatalf("esc did not clear the filter: %d rows, capturing %v", s.list.len(), s.Capturing())
	}
}

// Sorting keeps the row under the cursor under the cursor.
func TestSortKeepsTheCursorRow(t *testing.T) {
	rows := genRows(300)
	s := newTab(rows)
	press(s, "down", "down", "down")
	before, _ := s.list.selected()
	press(s, "s") // by invoice
	after, _ := s.list.selected()
	if before.Summary.Key != after.Summary.Key {
		t.Fatalf("cursor moved from %s to %s", before.Summary.Key, after.Summary.Key)
	}
	if s.list.sortCol != rcInvoice {
		t.Fatalf("sorted by column %d, want invoice", s.list.sortCol)
	}
}

// A frame draws only the rows in the window, however many there are.
func TestTableDrawsOnlyTheWindow(t *testing.T) {
	tbl := NewTable(NewContext(nil).Theme, []Column{{Title: "N", Width: 8}})
	tbl.SetSize(40, 11) // ten rows and the header
	tbl.SetLen(1_000_000)
	tbl.SetCursor(500_000)
	var asked []int
	out := tbl.View(func(i int, c []Cell) {
		asked = append(asked, i)
		c[0] = Cell{Text: fmt.Sprint(i)}
	})
	if len(asked) != 10 {
		t.Fatalf("asked for %d rows, want 10", len(asked))
	}
	if !slices.Contains(asked, 500_000) || !strings.Contains(out, "500000") {
		t.Fatalf("the cursor row is not drawn: %v", asked)
	}
	if lines := strings.Count(out, "\n") + 1; lines != 11 {
		t.Fatalf("%d lines, want 11", lines)
	}
}

func TestTableDropsColumnsWhenNarrow(t *testing.T) {
	cols := []Column{{Title: "A", Width: 10}, {Title: "B", Width: 10, Drop: 1}, {Title: "C", Width: 10, Flex: true}, {Title: "D", Width: 10, Drop: 2}}
	tbl := NewTable(NewContext(nil).Theme, cols)
	for _, tc := range []struct {
		width int
		shown []bool
	}{{43, []bool{true, true, true, true}}, {40, []bool{true, true, true, false}}, {25, []bool{true, false, true, false}}} {
		tbl.SetSize(tc.width, 5)
		for i, want := range tc.shown {
			if tbl.Shown(i) != want {
				t.Errorf("width %d: column %s shown %v, want %v", tc.width, cols[i].Title, tbl.Shown(i), want)
			}
		}
	}
}

func TestDaysLeftWarnsNearAndPastTheWindow(t *testing.T) {
	for _, tc := range []struct {
		ageDays int
		state   store.State
		text    string
		paint   string
	}{
		{0, store.StateReserved, "14", ""},
		{11, store.StateReserved, "3", "warning"},
		{14, store.StatePartlyCaptured, "0", "warning"},
		{16, store.StateReserved, "2 late", "failed"},
		{16, store.StateCaptured, "–", "muted"},
	} {
		s := store.Summary{State: tc.state, Created: listNow.Add(-time.Duration(tc.ageDays) * 24 * time.Hour)}
		c := daysLeftCell(s, listNow)
		if c.Text != tc.text || c.Paint != tc.paint {
			t.Errorf("%d days, %s: got %q/%q, want %q/%q", tc.ageDays, tc.state, c.Text, c.Paint, tc.text, tc.paint)
		}
	}
}

func TestMoneyIsExact(t *testing.T) {
	for in, want := range map[string]string{"12.5": "12.50", "0": "0.00", "-3.1": "-3.10", "0.125": "0.125", "19.99": "19.99"} {
		if got := money(decimal.RequireFromString(in)); got != want {
			t.Errorf("money(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestExportCSVAndJSON(t *testing.T) {
	rows := genRows(3)
	rows[1] = NewReservationRow(store.Summary{Key: "K2", Invoice: "INV,\"quoted\"", Customer: "Evil\x1b[2J Name", Amount: decimal.RequireFromString("10.5"), Created: listNow})
	s := newTab(rows)
	var got ExportIntent
	cmd := s.Update(tea.KeyPressMsg{Code: 'e', Text: "e"})
	got = cmd().(ExportIntent)
	var b strings.Builder
	if err := got.Table.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	csv := b.String()
	if !strings.Contains(csv, `"INV,""quoted"""`) || !strings.Contains(csv, ",10.50,") || strings.Contains(csv, "\x1b") {
		t.Fatalf("csv:\n%s", csv)
	}
	if strings.Count(csv, "\n") != 4 {
		t.Fatalf("csv has %d lines, want header + 3", strings.Count(csv, "\n"))
	}
	b.Reset()
	if err := got.Table.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"amount": "10.50"`) || strings.Contains(b.String(), "\x1b") {
		t.Fatalf("json:\n%s", b.String())
	}
}

// New rows arriving (live pushes) keep a cursor on its row, except a
// cursor on the first row, which stays on top to show the newest.
func TestCursorAcrossNewRows(t *testing.T) {
	rows := genRows(10)
	s := newTab(rows)
	newer := NewReservationRow(store.Summary{Key: "NEW", Invoice: "INV-NEW", Created: listNow.Add(time.Minute), State: store.StateReserved})
	finish(s.Update(ReservationRowsMsg{Rows: []*ReservationRow{newer}}), s)
	if top, _ := s.list.selected(); top.Summary.Key != "NEW" {
		t.Fatalf("a cursor on the first row did not follow the newest row: on %s", top.Summary.Key)
	}
	press(s, "down", "down")
	on, _ := s.list.selected()
	newest := NewReservationRow(store.Summary{Key: "NEWER", Invoice: "INV-NEWER", Created: listNow.Add(2 * time.Minute), State: store.StateReserved})
	finish(s.Update(ReservationRowsMsg{Rows: []*ReservationRow{newest}}), s)
	if got, _ := s.list.selected(); got.Summary.Key != on.Summary.Key {
		t.Fatalf("the cursor left its row: was on %s, now on %s", on.Summary.Key, got.Summary.Key)
	}
}

// The mouse wheel scrolls the list three rows a notch, as the keys do.
func TestMouseWheelScrollsTheList(t *testing.T) {
	s := newTab(genRows(200))
	first := s.View()
	finish(s.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown}), s)
	finish(s.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown}), s)
	scrolled := s.View()
	if scrolled == first {
		t.Fatal("wheel down changed nothing")
	}
	if !strings.Contains(scrolled, "INV-000006") || strings.Contains(scrolled, "INV-000000 ") {
		t.Fatalf("after two notches the window should start six rows down:\n%s", scrolled)
	}
	finish(s.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp}), s)
	finish(s.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp}), s)
	if back := s.View(); !strings.Contains(back, "INV-000000") {
		t.Fatalf("wheel up did not scroll back to the top:\n%s", back)
	}
}

// TestCSVCellsInert: a cell a spreadsheet would read as a formula gets a
// leading quote (F5); numbers, negative ones included, stay numbers.
func TestCSVCellsInert(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil","x")`, `'=HYPERLINK("http://evil","x")`},
		{"+1+cmd", "'+1+cmd"},
		{"-2+3", "'-2+3"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"  =1", "'  =1"},
		{"-12.50", "-12.50"},
		{"+7", "+7"},
		{"-1e5", "'-1e5"},
		{"INV-1", "INV-1"},
		{"", ""},
		{"a=b", "a=b"},
	} {
		if got := csvCell(tc.in); got != tc.want {
			t.Errorf("csvCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	tbl := ExportTable{Columns: []string{"invoice", "amount"}, Len: 1, Row: func(int) []string { return []string{"=HYPERLINK(\"x\")", "-3.00"} }}
	var b strings.Builder
	if err := tbl.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	if want := "invoice,amount\n\"'=HYPERLINK(\"\"x\"\")\",-3.00\n"; b.String() != want {
		t.Errorf("csv = %q, want %q", b.String(), want)
	}
	// issue 24: read with ';' (NL, DE, AT spreadsheets) or ',', no cell
	// starts a formula: a cell holding either separator is quoted whole, a
	// guarded one is quoted too.
	for _, tc := range []struct{ in, want string }{
		{"x;=1+1", `"x;=1+1"`},
		{"x,=1+1", `"x,=1+1"`},
		{"=1+1", `"'=1+1"`},
		{"@A1", `"'@A1"`},
		{"+1+cmd", `"'+1+cmd"`},
		{"-2+3", `"'-2+3"`},
		{"x\t=1", `x␉=1`},
		{"-12.50", `-12.50`},
		{"INV-1", `INV-1`},
	} {
		tbl := ExportTable{Columns: []string{"a", "b"}, Len: 1, Row: func(int) []string { return []string{tc.in, "1"} }}
		var b strings.Builder
		if err := tbl.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		if want := "a,b\n" + tc.want + ",1\n"; b.String() != want {
			t.Errorf("%q: csv = %q, want %q", tc.in, b.String(), want)
		}
		for _, sep := range []string{",", ";"} {
			r := csv.NewReader(strings.NewReader(b.String()))
			r.Comma = rune(sep[0])
			r.LazyQuotes = true
			recs, err := r.ReadAll()
			if err != nil {
				t.Fatalf("%q read with %q: %v", tc.in, sep, err)
			}
			for _, c := range recs[1] {
				if c != "" && strings.ContainsRune("=+@", rune(c[0])) || len(c) > 1 && c[0] == '-' && (c[1] < '0' || c[1] > '9') {
					t.Errorf("%q read with %q: cell %q is a formula", tc.in, sep, c)
				}
			}
		}
	}
}
