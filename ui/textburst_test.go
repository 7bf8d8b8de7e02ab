package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/internal/ops"
	"paydesk/views/forms"
)

// burstText is 100 characters, each ten-character group numbered, so that
// a lost or reordered key shows.
func burstText() string {
	var b strings.Builder
	for i := range 10 {
		b.WriteString("x" + string(rune('0'+i)) + "abcdefgh")
	}
	return b.String()
}

// Every text field takes a 100-character burst at once: the keys reach
// the field as the console's Update sees them, one after the other, and
// none waits for what the key before started (the cursor's blink). The
// test runs no command at all between the keys: a key held behind its
// predecessor's blink would still be waiting when the burst is over.
func TestTextFieldsTakeABurstAtOnce(t *testing.T) {
	text := burstText()
	tests := []struct {
		name  string
		width int
		open  func(t *testing.T, a *App)
	}{
		{
			name: "the batch page's manifest path",
			open: func(t *testing.T, a *App) {
				update(a, keyPress("B"))
				if !strings.Contains(ascii(a), "manifest:") {
					t.Fatalf("B did not open the path field:\n%s", ascii(a))
				}
			},
		},
		{
			name:  "the reservations' filter",
			width: 200, // the info line shows the whole filter
			open:  func(t *testing.T, a *App) { update(a, keyPress("/")) },
		},
		{
			name: "the new test reservation's invoice",
			open: func(t *testing.T, a *App) {
				f := forms.NewTestReservation(ops.ModeSandbox, testNow, "EUR")
				update(a, openDialogMsg{FormDialog(f)})
				for range len("TEST-20261125-") + 16 { // empty the prefilled invoice
					update(a, keyPress("backspace"))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestApp(t, fixture(), max(tt.width, 120), 40)
			tt.open(t, a)
			for _, r := range text {
				update(a, keyPress(string(r)))
			}
			if a.held != 0 || len(a.waiting) != 0 {
				t.Fatalf("after the burst %d command(s) hold %d key(s) back", a.held, len(a.waiting))
			}
			// The field shows a window of 90 characters at either end: the
			// end after the burst, the start after home.
			if f := screenText(a); !strings.Contains(f, text[len(text)-90:]) {
				t.Fatalf("the field does not end with the burst's end %q:\n%s", text[len(text)-90:], f)
			}
			update(a, keyPress("home"))
			if f := screenText(a); !strings.Contains(f, text[:90]) {
				t.Fatalf("the field does not start with the burst's start %q:\n%s", text[:90], f)
			}
		})
	}
}

// screenText is the frame without styles.
func screenText(a *App) string { return ansi.Strip(ascii(a)) }

// update gives the console one message and returns its command, not run.
func update(a *App, msg tea.Msg) tea.Cmd {
	_, cmd := a.Update(msg)
	return cmd
}
