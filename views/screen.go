package views

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Screen is one page of the console: a tab's list or a detail page opened
// above it. Screens are plain structs driven by the console; Update never
// does I/O, it returns commands and intents.
type Screen interface {
	// Title names the screen in the tab bar and the palette.
	Title() string
	SetSize(width, height int)
	Update(msg tea.Msg) tea.Cmd
	View() string
	// Actions are the screen's own bindings (beyond the global ones), for
	// the footer, the help overlay and the command palette.
	Actions() []Action
	// Capturing is true while the screen takes raw text (the filter prompt):
	// the console then sends it every key, global ones included, and does
	// not hold the keys after it (see ui's hold): a key that opens
	// something (Enter on the batch page's path) leaves Capturing false.
	Capturing() bool
}

// Action is one thing a screen can do from a key.
type Action struct {
	Key key.Binding
	// Changes is true for actions that change the gateway or the cache;
	// read-only mode disables them.
	Changes bool
}

// Level says how a status message is coloured.
type Level int

// Status message levels.
const (
	LevelInfo Level = iota
	LevelOK
	LevelWarn
	LevelError
)

// StatusMsg puts a message into the status line.
type StatusMsg struct {
	Text  string
	Level Level
}

// Status returns a command that shows text in the status line.
func Status(level Level, text string) tea.Cmd {
	return func() tea.Msg { return StatusMsg{Text: text, Level: level} }
}

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }
