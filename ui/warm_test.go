package ui

import (
	"context"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// warmingStore records the console's warm-up of the lists.
type warmingStore struct {
	*fakeStore
	started, stopped chan struct{}
}

func (w warmingStore) WarmLists(ctx context.Context) error {
	close(w.started)
	<-ctx.Done() // a long warm-up, as on a cold million-row file
	close(w.stopped)
	return ctx.Err()
}

// The console warms a store's lists in the background once it is up (not
// before its first frame), and closing the console ends the warm-up.
func TestConsoleWarmsListsAndStopsOnClose(t *testing.T) {
	st := warmingStore{fakeStore: &fakeStore{}, started: make(chan struct{}), stopped: make(chan struct{})}
	var ticks []time.Duration
	var fire func(time.Time) tea.Msg
	a := New(Config{Store: st, Now: func() time.Time { return testNow }, ExportDir: t.TempDir(), FixtureDir: t.TempDir(),
		Tick: func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
			ticks, fire = append(ticks, d), fn
			return func() tea.Msg { return nil } // the test fires the tick below
		}})
	cmd := a.warmLists()
	if cmd == nil {
		t.Fatal("no warm-up for a store that can warm its lists")
	}
	cmd()
	select {
	case <-st.started:
		t.Fatal("the warm-up began before its tick")
	default:
	}
	if len(ticks) != 1 || ticks[0] < warmDelay {
		t.Fatalf("the warm-up waits %v, want one wait of at least the first frame's %s", ticks, warmDelay)
	}
	go fire(testNow.Add(warmDelay))
	select {
	case <-st.started:
	case <-time.After(time.Minute):
		t.Fatal("the warm-up did not start")
	}
	a.Close()
	select {
	case <-st.stopped:
	case <-time.After(time.Minute):
		t.Fatal("closing the console did not end the warm-up")
	}
	if New(Config{Store: &fakeStore{}}).warmLists() != nil {
		t.Error("a warm-up for a store that cannot warm")
	}
}
