package views

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func space(s Screen) { finish(s.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}), s) }

// markedKeys are the marked keys, in marking order.
func markedKeys(s *Reservations) []string { return s.list.marks.order }

// TestMarks: space marks and unmarks the row under the cursor, V marks
// from the last marked row to the cursor, * marks every row that passes
// the filter (read from the store, past the window), esc clears; marks
// survive paging, and the info line counts them.
func TestMarks(t *testing.T) {
	s, _ := pagedTab(t, 1500)
	tests := []struct {
		name  string
		do    func()
		want  int // rows marked after
		check func() bool
	}{
		{"space marks the row", func() { space(s) }, 1, func() bool { return s.list.marked(0) }},
		{"space again unmarks it", func() { space(s) }, 0, func() bool { return !s.list.marked(0) }},
		{"space on row 2, V on row 6 marks 2..6", func() {
			press(s, "down", "down")
			space(s)
			press(s, "down", "down", "down", "down", "V")
		}, 5, func() bool { return s.list.marked(2) && s.list.marked(6) && !s.list.marked(1) && !s.list.marked(7) }},
		{"V upwards from the last mark", func() { press(s, "k", "k", "k", "k", "k", "k", "V") }, 7,
			func() bool { return s.list.marked(0) && s.list.marked(1) }},
		{"marks survive paging to the end and back", func() {
			finish(s.Update(tea.KeyPressMsg{Code: tea.KeyEnd}), s)
			space(s)
			finish(s.Update(tea.KeyPressMsg{Code: tea.KeyHome}), s)
		}, 8, func() bool { return s.list.marked(0) && s.list.marked(6) }},
		{"esc clears, asking nothing", func() { press(s, "esc") }, 0, func() bool { return !s.list.marked(0) }},
		{"* marks every row", func() { press(s, "*") }, 1500, func() bool { return s.list.marked(0) && s.list.marked(10) }},
	}
	for _, tt := range tests {
		tt.do()
		if got := len(markedKeys(s)); got != tt.want || !tt.check() {
			t.Fatalf("%s: %d marked, want %d (check %v)\n%s", tt.name, got, tt.want, tt.check(), s.View())
		}
	}
	if v := s.View(); !strings.Contains(v, "1,500 marked (b: bulk)") || !strings.Contains(v, "* ") {
		t.Fatalf("no mark count or column:\n%s", v)
	}
}

// TestMarkAllFiltered: * marks only what passes the filter; marks stay
// when the filter is cleared (esc clears the filter first, then marks).
func TestMarkAllFiltered(t *testing.T) {
	rows := genRows(50)
	s := newTab(rows)
	press(s, "/")
	press(s, []string{"c", "u", "p"}...)
	press(s, "enter")
	n := s.list.len()
	if n == 0 || n == len(rows) {
		t.Fatalf("the filter passes %d of %d rows", n, len(rows))
	}
	press(s, "*")
	if got := len(markedKeys(s)); got != n {
		t.Fatalf("* marked %d, %d pass the filter", got, n)
	}
	press(s, "esc")
	if s.list.query != "" || len(markedKeys(s)) != n {
		t.Fatalf("first esc: filter %q, %d marked", s.list.query, len(markedKeys(s)))
	}
	press(s, "esc")
	if len(markedKeys(s)) != 0 {
		t.Fatalf("second esc leaves %d marked", len(markedKeys(s)))
	}
}

// TestBulkMenu: b opens the bulk menu only with marks; c and x ask for
// the batch of the marked keys, e exports them; any other key closes it.
func TestBulkMenu(t *testing.T) {
	tests := []struct {
		key  string
		kind string // BulkIntent kind, "" for none
		csv  bool
	}{
		{"c", BulkCaptureRest, false},
		{"x", BulkCancelRest, false},
		{"e", "", true},
		{"q", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			s := newTab(genRows(50))
			if cmd := s.Update(tea.KeyPressMsg{Code: 'b', Text: "b"}); cmd != nil || s.bulk {
				t.Fatal("b without marks opens the menu")
			}
			space(s)
			press(s, "down", "down", "V")
			want := slices.Clone(markedKeys(s))
			s.Update(tea.KeyPressMsg{Code: 'b', Text: "b"})
			if !s.Capturing() || !strings.Contains(s.View(), "x cancel the rest") {
				t.Fatalf("no menu:\n%s", s.View())
			}
			cmd := s.Update(tea.KeyPressMsg{Code: []rune(tt.key)[0], Text: tt.key})
			if s.bulk {
				t.Fatal("the menu stays open")
			}
			var msg tea.Msg
			if cmd != nil {
				msg = cmd()
			}
			switch i := msg.(type) {
			case BulkIntent:
				if i.Kind != tt.kind || !slices.Equal(i.Keys, want) {
					t.Fatalf("intent %+v, want %s of %v", i, tt.kind, want)
				}
			case ExportIntent:
				if !tt.csv || i.Format != "csv" || i.Table.Len != len(want) {
					t.Fatalf("export %+v", i)
				}
			default:
				if tt.kind != "" || tt.csv {
					t.Fatalf("message %T", msg)
				}
			}
		})
	}
}
