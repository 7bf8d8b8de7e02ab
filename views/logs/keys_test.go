package logs

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/views"
)

// Every tab's list takes the same keys in the same way: "/" opens the
// prompt, text and a paste are typed (made inert), ctrl+w takes a word
// back, backspace a character, enter closes the prompt keeping the
// filter, esc clears it — on the paged tabs and on the logs alike.
func TestEveryTabTakesTheSameFilterKeys(t *testing.T) {
	tabs := map[string]func(*views.Context) views.Screen{
		"reservations": func(c *views.Context) views.Screen { return views.NewReservations(c) },
		"transactions": func(c *views.Context) views.Screen { return views.NewTransactions(c) },
		"pushes":       func(c *views.Context) views.Screen { return views.NewPushes(c, "") },
		"audit":        func(c *views.Context) views.Screen { return NewAudit(c) },
		"gateway log":  func(c *views.Context) views.Screen { return NewGatewayLog(c) },
		"approvals":    func(c *views.Context) views.Screen { return views.NewApprovals(c, true) },
	}
	type step struct {
		msg       tea.Msg
		line      string // the info line starts so (ASCII)
		capturing bool
	}
	text := func(s string) tea.Msg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }
	steps := []step{
		{text("/"), "/ ▏", true},
		{text("a"), "/ a▏", true},
		{text("b"), "/ ab▏", true},
		{text(" "), "/ ab ▏", true},
		{text("c"), "/ ab c▏", true},
		{tea.KeyPressMsg{Code: 'w', Mod: tea.ModCtrl}, "/ ab ▏", true},
		{tea.PasteMsg{Content: "x\x1b[31m"}, "/ ab x", true},
		{tea.KeyPressMsg{Code: tea.KeyBackspace}, "/ ab x", true},
		{tea.KeyPressMsg{Code: tea.KeyEnter}, "filter: ab x", false},
		{tea.KeyPressMsg{Code: tea.KeyEscape}, "", false}, // the tab's own hint again
	}
	for name, make := range tabs {
		t.Run(name, func(t *testing.T) {
			s := make(ctx())
			s.SetSize(120, 20)
			for i, st := range steps {
				s.Update(st.msg)
				raw, _, _ := strings.Cut(s.View(), "\n")
				first := ansi.Strip(raw)
				cleared := st.line == "" && (strings.Contains(first, "▏") || strings.HasPrefix(first, "filter:"))
				if !strings.HasPrefix(first, st.line) || cleared || s.Capturing() != st.capturing {
					t.Fatalf("step %d: %q, capturing %v; want it to start %q, capturing %v", i, first, s.Capturing(), st.line, st.capturing)
				}
				if strings.Contains(raw, "\x1b[31m") {
					t.Fatalf("step %d: the pasted escape sequence reached the prompt: %q", i, raw)
				}
			}
		})
	}
}
