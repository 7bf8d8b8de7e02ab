package ui

import (
	tea "charm.land/bubbletea/v2"

	"paydesk/views"
)

// inFlightText is said when q or ctrl+c comes while an operation is on its
// way. Quitting then leaves the journal entry pending; the next start
// turns it into "outcome unknown" (the request may have reached the
// gateway), where the resolve form can ask the gateway about it.
const inFlightText = "An operation is being sent: wait for its answer (quit anyway: ctrl+c again → it is left as outcome unknown and shown after restart)."

// inFlight reports an operation on its way: a form waiting for its answer,
// or a batch running.
func (a *App) inFlight() bool {
	if a.batchRuns > 0 {
		return true
	}
	for _, d := range a.dialogs {
		if d.Busy() {
			return true
		}
	}
	return false
}

// quit answers q and ctrl+c: at once when nothing is in flight; while
// something is, it says so, and only a second ctrl+c quits.
func (a *App) quit(key string) tea.Cmd {
	if !a.inFlight() {
		return tea.Quit
	}
	if key == "ctrl+c" && a.quitArmed {
		return tea.Quit
	}
	if key == "ctrl+c" {
		a.quitArmed = true
	}
	a.status = views.StatusMsg{Level: views.LevelWarn, Text: inFlightText}
	return nil
}

// landed is called after an answer came: with nothing in flight any more,
// a ctrl+c quits at once again and the warning goes.
func (a *App) landed() {
	if a.inFlight() {
		return
	}
	a.quitArmed = false
	if a.status.Text == inFlightText {
		a.status = views.StatusMsg{}
	}
}
