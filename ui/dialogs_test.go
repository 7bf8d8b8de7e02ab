package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/access"
)

// TestEscapesAfterAFormReachThePage: keys typed faster than the form's
// close message comes back (esc esc at once) must not all land on the
// closing form. The first esc closes the form, the second leaves the
// reservation's page: nothing of the returned commands runs in between.
func TestEscapesAfterAFormReachThePage(t *testing.T) {
	tests := []struct {
		name       string
		escs       int
		wantDialog int
		wantPages  int
	}{
		{"one esc closes the form", 1, 0, 1},
		{"two escs leave the page too", 2, 0, 0},
		{"three escs end on the list", 3, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestApp(t, fixture(), 100, 30, func(c *Config) { c.Ops = roleService(t, "alice", access.Admin, "") })
			press(t, a, "down", "enter", "c")
			if len(a.dialogs) != 1 || len(a.stacks[a.active]) != 1 {
				t.Fatalf("set-up: %d dialogs, %d pages, want the capture form over a page:\n%s", len(a.dialogs), len(a.stacks[a.active]), ascii(a))
			}
			var cmds []tea.Cmd
			for range tt.escs {
				_, cmd := a.Update(keyPress("esc"))
				cmds = append(cmds, cmd)
			}
			if len(a.dialogs) != tt.wantDialog || len(a.stacks[a.active]) != tt.wantPages {
				t.Fatalf("after %d esc: %d dialogs and %d pages, want %d and %d:\n%s",
					tt.escs, len(a.dialogs), len(a.stacks[a.active]), tt.wantDialog, tt.wantPages, ascii(a))
			}
			// The close messages that come back later change nothing more.
			for _, c := range cmds {
				pump(t, a, c)
			}
			if len(a.dialogs) != tt.wantDialog || len(a.stacks[a.active]) != tt.wantPages {
				t.Fatalf("after the commands ran: %d dialogs and %d pages, want %d and %d",
					len(a.dialogs), len(a.stacks[a.active]), tt.wantDialog, tt.wantPages)
			}
		})
	}
}
