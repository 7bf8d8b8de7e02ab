package views

import "time"

// A console draws its frame again every second so that its ages tick, yet
// an age shown as "3m" or "5d" reads the same for a minute or a day: fifty
// consoles over SSH drawing the same frame every second were half of what
// they cost the server. The screens whose only clock-driven text is known
// (the attention tab, the reservations list) note, while they draw, the
// first instant at which the clock alone changes what they drew; the
// console skips the ticks before it (ui: frameUntil).

// textUntil gathers the earliest instant after now at which some text
// drawn at now reads otherwise.
type textUntil struct {
	now, at time.Time
}

func newTextUntil(now time.Time) textUntil { return textUntil{now: now} }

// note brings the instant forward to t; t at or before now means at once
// (the next tick draws).
func (u *textUntil) note(t time.Time) {
	if !t.After(u.now) {
		t = u.now.Add(time.Nanosecond)
	}
	if u.at.IsZero() || t.Before(u.at) {
		u.at = t
	}
}

// ageUnit is the step of age's text for a duration d ≥ 0.
func ageUnit(d time.Duration) time.Duration {
	switch {
	case d < time.Minute:
		return time.Second
	case d < time.Hour:
		return time.Minute
	case d < 48*time.Hour:
		return time.Hour
	case d < 14*24*time.Hour:
		return 24 * time.Hour
	case d < 365*24*time.Hour:
		return 7 * 24 * time.Hour
	}
	return 365 * 24 * time.Hour
}

// countdownChanges is the first instant after now at which age(·, t) —
// the time left until t, "in 5m" — reads otherwise (or an earlier one,
// never a later). The text is the whole units left; it changes when the
// time left falls below them.
func countdownChanges(t, now time.Time) time.Time {
	d := t.Sub(now)
	if d <= 0 {
		return now.Add(time.Nanosecond)
	}
	u := ageUnit(d)
	return t.Add(-(d / u) * u)
}

// whenChanges is when whenText(r, ·) reads otherwise after now.
func whenChanges(r AttentionRow, now time.Time) time.Time {
	switch {
	case r.When.IsZero():
		return time.Time{}
	case r.When.After(now):
		return countdownChanges(r.When, now)
	}
	return ageChanges(r.When, now)
}

// nextMidnight is the start of the day after now's, in now's zone: when a
// count of calendar days left (Summary.DaysLeft) changes.
func nextMidnight(now time.Time) time.Time {
	y, m, d := now.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
}
