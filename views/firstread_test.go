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

// TestRestOfWindowWaitsForTheFirstFrame: after the list's first answer
// (a screenful) the rest of the window is asked once restAfterFirstFrame
// has passed, so that the terminal draws the first frame without a read
// beside it; a key that scrolls the screen meanwhile reads at once, and a
// list whose first answer holds all its rows asks nothing more.
func TestRestOfWindowWaitsForTheFirstFrame(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows       int
		scroll     bool // the screen scrolls before the wait is over
		wantTicks  int
		wantBefore int // reads before the wait is over
		wantAll    int // reads in all
	}{
		{"the rest after the wait", 3000, false, 1, 1, 2},
		{"a scroll reads at once", 3000, true, 1, 2, 2},
		{"all rows in the first answer", 10, false, 0, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []int
			ctx := NewContext(func() time.Time { return listNow })
			ctx.Tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
				return func() tea.Msg { return heldTick{d: d, fn: fn} }
			}
			s := NewReservations(ctx)
			s.SetSize(120, 36)
			src := limits{slowSource{&memSource{all: summaries(genRows(tc.rows))}}, &asked}
			var ticks []heldTick
			run := runHolding(s, &ticks)
			run(s.Update(ReservationSourceMsg{Source: src}))
			screen := s.list.table.height
			if len(asked) == 0 || asked[0] != screen {
				t.Fatalf("reads %v: the first does not ask the %d rows on screen", asked, screen)
			}
			if len(ticks) != tc.wantTicks {
				t.Fatalf("%d waits after the first answer, want %d", len(ticks), tc.wantTicks)
			}
			if tc.scroll {
				for range screen {
					run(s.Update(tea.KeyPressMsg{Code: tea.KeyDown}))
				}
			}
			if len(asked) != tc.wantBefore {
				t.Fatalf("reads before the wait is over: %v, want %d", asked, tc.wantBefore)
			}
			for len(ticks) > 0 {
				tick := ticks[0]
				ticks = ticks[1:]
				if tick.d != restAfterFirstFrame {
					t.Errorf("a wait of %s, want %s", tick.d, restAfterFirstFrame)
				}
				run(func() tea.Msg { return tick.fn(listNow.Add(tick.d)) })
			}
			if len(asked) != tc.wantAll {
				t.Errorf("reads in all: %v, want %d", asked, tc.wantAll)
			}
			if want := min(tc.rows, screen+pageMargin); len(s.list.rows) < want {
				t.Errorf("the window holds %d rows, want at least %d", len(s.list.rows), want)
			}
		})
	}
}
