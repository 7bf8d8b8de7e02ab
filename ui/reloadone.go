package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// A change's reload reads the counts, the lists, the logs and the
// attention rows: about ten results. The program draws the whole screen
// after every message, so ten messages were ten screens drawn per change
// and console, nine of them never shown — the most of what fifty consoles
// over SSH cost the push listener beside them. reloadAsOne runs the
// reload's reads one after the other in one command and hands the
// results to the console as one message: one screen per change.

// reloadedMsg is a change's reload, its results in the order read.
type reloadedMsg struct{ msgs []tea.Msg }

// reloadAsOne is a.reload(c) as one message.
func (a *App) reloadAsOne(c changeMsg) tea.Cmd {
	cmd := a.reload(c.Change)
	if cmd == nil {
		return nil
	}
	return func() tea.Msg {
		var out []tea.Msg
		gather(cmd, &out)
		return reloadedMsg{out}
	}
}

// gather runs cmd and, for a batch, the commands in it, collecting their
// messages.
func gather(cmd tea.Cmd, out *[]tea.Msg) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			gather(c, out)
		}
		return
	}
	if msg != nil {
		*out = append(*out, msg)
	}
}

// updateReloaded gives the console each result of a reload, and batches
// what they ask for next.
func (a *App) updateReloaded(msg reloadedMsg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(msg.msgs))
	for _, m := range msg.msgs {
		_, c := a.Update(m)
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...)
}

// streamWindow is the console's window while changes keep coming.
func (a *App) streamWindow() time.Duration {
	if a.cfg.StreamWindow > 0 {
		return a.cfg.StreamWindow
	}
	return streamWindow
}

// growStream is the window of the next gathering of a stream after one of
// used: the stream's window after a quiet spell's short one, then twice
// the last, up to Config.StreamWindowMax. Fifty consoles over SSH reloading
// and drawing every second while the listener takes a thousand pushes a
// second cost it half its pushes; the longer the stream lasts, the less
// its frames tell a person watching, and the sooner a console draws again
// when it ends (a change after a quiet spell: 25 ms).
func (a *App) growStream(used time.Duration) time.Duration {
	base := a.streamWindow()
	top := max(a.cfg.StreamWindowMax, base)
	if used < base {
		return base
	}
	return min(2*used, top)
}
