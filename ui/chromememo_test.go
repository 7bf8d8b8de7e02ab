package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
	"paydesk/ui/theme"
	"paydesk/views/forms"
)

// TestBarsDrawnWhenTheyChange: the tab bar and the status line are drawn
// again only when what they show changed — a frame for a row elsewhere
// takes them as they were — and are then what a fresh draw makes: the
// counts, the pushes of the session, a late push, the attention tab's
// count, the tab, the width and the theme each draw them again.
func TestBarsDrawnWhenTheyChange(t *testing.T) {
	now := testNow
	a := newTestApp(t, attentionFixture(), 120, 36, func(c *Config) { c.Now = func() time.Time { return now } })
	a.render()
	for _, step := range []struct {
		name  string
		do    func()
		drawn int
	}{
		{"nothing changed", func() {}, 0},
		{"the cursor moves", func() { press(t, a, "down") }, 0},
		{"the counts", func() { a.Update(countsMsg{store.Counts{Pushes: 99, Rejected: 3, OutcomeUnknown: 2}}) }, 1},
		{"a push of the session", func() { a.sessionPushes++ }, 1},
		{"another tab", func() { press(t, a, "2") }, 1},
		{"a late push", func() {
			a.Update(forms.ResultMsg{ID: "x", Result: ops.Result{Action: api.ActionPay, Key: "CAPKEY", State: store.OpSettled}})
			now = now.Add(pushWait)
		}, 1},
		{"a narrower terminal", func() { a.Update(tea.WindowSizeMsg{Width: 100, Height: 30}) }, 2},
		{"the light theme", func() { *a.vctx.Theme = *theme.New(false) }, 2},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.do()
			before := a.chrome.drawn
			a.render()
			if got := a.chrome.drawn - before; got != step.drawn {
				t.Errorf("%d bars drawn afresh, want %d", got, step.drawn)
			}
			if got, want := a.tabBar(), a.drawTabBar(); got != want {
				t.Errorf("tab bar\n%q\nwant\n%q", got, want)
			}
			if got, want := a.statusBar(), a.drawStatusBar(); got != want {
				t.Errorf("status line\n%q\nwant\n%q", got, want)
			}
		})
	}
}
