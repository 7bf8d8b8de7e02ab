package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestZeroWindowKeepsTheLastSize: over SSH a client that is no terminal
// ("ssh -tt" from a script) reports a 0×0 window, which can arrive after
// the size the server chose; the console keeps drawing at the last size
// instead of drawing nothing.
func TestZeroWindowKeepsTheLastSize(t *testing.T) {
	for _, size := range []tea.WindowSizeMsg{{}, {Width: 0, Height: 24}, {Width: 80, Height: 0}} {
		a := newTestApp(t, fixture(), 80, 24)
		before := ascii(a)
		a.Update(size)
		if a.width != 80 || a.height != 24 || ascii(a) != before {
			t.Fatalf("after %+v the console is %d×%d:\n%s", size, a.width, a.height, ascii(a))
		}
	}
}
