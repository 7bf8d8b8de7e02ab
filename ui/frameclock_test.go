package ui

import (
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/views/forms"
)

// TestAgeTicksDrawOnlyWhatChanges: the console's age tick draws a frame
// only when the clock changed something on it. A minute of ticks over
// the reservations list, whose youngest age is "20m", draws one frame
// (at the minute, "21m"); the attention tab's ages in hours and days draw
// one in ten minutes (its deadlines are whole hours from the fixture's
// clock: "in 2h" turns to "in 1h" at once). Every tick's frame, drawn or handed on, is the
// frame a fresh draw makes at that time. A tick with an overlay open (the
// help) draws as before.
func TestAgeTicksDrawOnlyWhatChanges(t *testing.T) {
	for _, tc := range []struct {
		name   string
		st     Store
		keys   []string
		ticks  int
		frames int
	}{
		{"reservations, ages in minutes", fixture(), nil, 60, 1},
		{"attention, ages in hours and days", attentionFixture(), []string{"0"}, 600, 1},
		{"help open", fixture(), []string{"?"}, 10, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := testNow
			a := newTestApp(t, tc.st, 120, 36, func(c *Config) { c.Now = func() time.Time { return now } })
			press(t, a, tc.keys...)
			a.View()
			before := a.renders
			for i := 1; i <= tc.ticks; i++ {
				now = testNow.Add(time.Duration(i) * time.Second)
				a.Update(ageTickMsg{})
				got := a.View().Content
				if want := a.render(); got != want {
					t.Fatalf("at +%ds the frame is stale:\n%s\nwant\n%s", i, got, want)
				}
			}
			if got := a.renders - before; got != tc.frames {
				t.Errorf("%d ticks drew %d frames, want %d", tc.ticks, got, tc.frames)
			}
		})
	}
}

// TestAgeTickSaysALatePush: an operation's push that does not come within
// pushWait is said at the tick that passes it, though no age changed.
func TestAgeTickSaysALatePush(t *testing.T) {
	now := testNow
	a := newTestApp(t, fixture(), 120, 36, func(c *Config) { c.Now = func() time.Time { return now } })
	a.Update(forms.ResultMsg{ID: "x", Result: ops.Result{Action: api.ActionPay, Key: "CAPKEY", State: "settled"}})
	a.View()
	for i := 1; i <= int(pushWait/time.Second); i++ {
		now = testNow.Add(time.Duration(i) * time.Second)
		a.Update(ageTickMsg{})
		if got, want := a.View().Content, a.render(); got != want {
			t.Fatalf("at +%ds the frame is stale:\n%s\nwant\n%s", i, got, want)
		}
	}
}
