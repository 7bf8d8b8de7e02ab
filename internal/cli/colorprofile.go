package cli

import (
	"io"
	"os"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// colorProfileOption hands Bubble Tea the color profile lipgloss detected
// for the process's stdout when the console draws there, so that the
// program does not detect it again. Inside tmux the detection runs `tmux
// info` (colorprofile), 20–60 ms on the 2-core VM, and lipgloss has
// already run it once, for the same stdout and environment, when its
// package was initialised; Bubble Tea would run it a second time before
// the first frame. Any other output (a test's buffer, an SSH session) is
// detected by Bubble Tea as before.
func colorProfileOption(out io.Writer) []tea.ProgramOption {
	if f, ok := out.(*os.File); !ok || f != os.Stdout || lipgloss.Writer == nil {
		return nil
	}
	return []tea.ProgramOption{tea.WithColorProfile(lipgloss.Writer.Profile)}
}
