package forms

import (
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/ops"
)

// Form is an operation form on the console's dialog stack. It sees
// messages first while it is on top; it asks to be popped with CloseMsg.
type Form interface {
	Init() tea.Cmd
	Update(tea.Msg) (Form, tea.Cmd)
	View() string
	SetSize(width, height int)
	// Title names the form for the dialog frame and the help.
	Title() string
	// ID tells the form's messages apart from another form's.
	ID() string
	// Busy is true while an intent is on its way: the host must not close
	// the form then.
	Busy() bool
	// Closed reports that the form asked to be closed (its CloseMsg is on
	// its way) and its last result: the host pops it at once, so the keys
	// typed after the closing key go to what lies under it.
	Closed() (*ops.Result, bool)
}

// SubmitMsg asks the host to run an intent (once: the form will not send
// another while it waits) and to answer with a ResultMsg carrying the same
// ID.
type SubmitMsg struct {
	ID     string
	Intent ops.Intent
}

// ResultMsg is the host's answer to a SubmitMsg.
type ResultMsg struct {
	ID     string
	Result ops.Result
	Err    error
}

// CloseMsg asks the host to pop the form; Result is the last result, if
// any (the host refreshes what it shows).
type CloseMsg struct {
	ID     string
	Result *ops.Result
}
