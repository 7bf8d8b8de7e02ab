package ui

import (
	"time"
)

// The console draws once a second so that its ages tick (ageTickMsg). An
// age shown as "3m" or "5d" changes once a minute or a day, so most of
// those frames were the frame before: fifty consoles over SSH drawing
// them cost the server half its drawing. After each frame the console
// works out when the clock alone next changes it (frameUntil); a tick
// before that hands the renderer the frame before, as a change notice
// does (sameFrame). Only what is known is skipped: a screen that does not
// say when its text changes (textClock), an overlay or a text field open,
// and the console draws every second as before.

// textClock is a screen that knows, once drawn, the first instant at
// which the clock alone changes what it drew (zero: not known).
type textClock interface {
	TextUntil() time.Time
}

// frameUntilAfterRender is when the clock alone changes the frame just
// drawn at now, or zero when that is not known.
func (a *App) frameUntilAfterRender(now time.Time) time.Time {
	if len(a.dialogs) > 0 || a.palette != nil || a.help {
		return time.Time{}
	}
	top := a.top()
	tc, ok := top.(textClock)
	if !ok || top.Capturing() {
		return time.Time{}
	}
	until := tc.TextUntil()
	// The tab bar and the status line count the attention rows.
	count := a.attention().CountUntil()
	if until.IsZero() || count.IsZero() {
		return time.Time{}
	}
	until = earlier(until, count)
	// The status line counts the operations whose push is late.
	if late, ok := a.pushWatch.nextLate(now); ok {
		until = earlier(until, late)
	}
	return until
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// tickChangesNothing reports whether the frame drawn last still shows
// what a frame drawn now would: the clock has not reached frameUntil.
func (a *App) tickChangesNothing() bool {
	return a.lastFrame != "" && !a.frameUntil.IsZero() && a.cfg.Now().Before(a.frameUntil)
}
