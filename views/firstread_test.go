package views

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

// limits records the row limit of every page a list asks its source.
type limits struct {
	slowSource
	asked *[]int
}

func (l limits) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	*l.asked = append(*l.asked, q.Limit)
	return l.slowSource.ReservationPage(ctx, q)
}

// TestFirstReadIsAScreenful: the list's first read asks the rows the
// screen shows, and the window is filled after it (the first frame waits
// for the first read only); a filter's read asks the screen and its
// margin, and nothing more until the screen scrolls (the next key does
// not wait for a second read).
func TestFirstReadIsAScreenful(t *testing.T) {
	for _, tc := range []struct {
		name   string
		height int
	}{
		{"36 lines", 36},
		{"20 lines", 20},
		{"a line", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []int
			s := NewReservations(NewContext(func() time.Time { return listNow }))
			s.SetSize(120, tc.height)
			src := limits{slowSource{&memSource{all: summaries(genRows(3000))}}, &asked}
			finish(s.Update(ReservationSourceMsg{Source: src}), s)
			screen := s.list.table.height
			if len(asked) < 2 || asked[0] != screen {
				t.Fatalf("reads %v: the first does not ask the %d rows on screen", asked, screen)
			}
			if len(s.list.rows) < screen+pageMargin {
				t.Errorf("the window holds %d rows after the first reads, want at least %d", len(s.list.rows), screen+pageMargin)
			}
			if !strings.Contains(s.View(), "3,000 reservations") {
				t.Errorf("no count:\n%s", s.View())
			}
			asked = nil
			press(s, "/")
			finish(s.Update(tea.KeyPressMsg{Code: 'r', Text: "r"}), s)
			if len(asked) != 1 || asked[0] != screen+pageMargin {
				t.Errorf("a filter's reads %v: want one of the %d rows on screen and the margin", asked, screen+pageMargin)
			}
			asked = nil
			finish(s.Update(tea.KeyPressMsg{Code: tea.KeyEnter}), s)
			for range screen {
				finish(s.Update(tea.KeyPressMsg{Code: tea.KeyDown}), s)
			}
			if len(asked) != 1 {
				t.Errorf("after the screen scrolled, reads %v: want the rest of the window asked", asked)
			}
		})
	}
}
