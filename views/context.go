package views

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/ui/keys"
	"paydesk/ui/theme"
)

// Context is what every screen shares: theme, keymap, clock and the
// console's mode. The console owns it; screens only read it.
type Context struct {
	Theme *theme.Theme
	Keys  *keys.KeyMap
	// Now is the clock for ages and the 14-day window; tests pin it.
	Now func() time.Time
	// Tick is the timer of the screens' waits (the whole count's pause);
	// nil is tea.Tick. Tests hold the ticks back and fire them themselves.
	Tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
	// ReadOnly disables every action that changes something.
	ReadOnly bool
	// CanResend is true when the console drives an embedded sandbox that
	// can resend pushes (and so --demo can fill it).
	CanResend bool
	// Live is true against a live gateway: no test reservations there.
	Live bool
	// Location is the time zone times are shown in; nil means time.Local.
	Location *time.Location
	// IntakeURL is the listener's order intake (…/orders), named where a
	// reservation lacks its order.
	IntakeURL string
	// Forwarding is true when pushes are delivered to shop endpoints
	// (forward-to): the bulk menu then offers to resend the marked
	// reservations' deliveries.
	Forwarding bool
}

// NewContext returns a context with the default theme and keymap.
func NewContext(now func() time.Time) *Context {
	if now == nil {
		now = time.Now
	}
	return &Context{Theme: theme.New(true), Keys: keys.Default(), Now: now}
}

// After is a command that returns fn's message after d, on the context's
// timer.
func (c *Context) After(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	if c.Tick != nil {
		return c.Tick(d, fn)
	}
	return tea.Tick(d, fn)
}

func (c *Context) loc() *time.Location {
	if c.Location != nil {
		return c.Location
	}
	return time.Local
}
