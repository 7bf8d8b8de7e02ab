package teacmd

import (
	"testing"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

func TestTimer(t *testing.T) {
	in := textinput.New()
	blink := in.Focus()
	tests := []struct {
		name string
		cmd  tea.Cmd
		want bool
	}{
		{"tea.Tick", tea.Tick(time.Hour, func(time.Time) tea.Msg { return nil }), true},
		{"tea.Every", tea.Every(time.Hour, func(time.Time) tea.Msg { return nil }), true},
		{"a text cursor's blink", blink, true},
		{"a command of one's own", func() tea.Msg { return nil }, false},
		{"tea.Quit", tea.Quit, false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := Timer(tt.cmd); got != tt.want {
			t.Errorf("%s (%s): Timer = %v, want %v", tt.name, Name(tt.cmd), got, tt.want)
		}
	}
}
