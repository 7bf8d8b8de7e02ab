package ui

import (
	"context"
	"testing"
	"time"
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
	a := New(Config{Store: st, Now: func() time.Time { return testNow }, ExportDir: t.TempDir(), FixtureDir: t.TempDir()})
	cmd := a.warmLists()
	if cmd == nil {
		t.Fatal("no warm-up for a store that can warm its lists")
	}
	start := time.Now()
	go cmd()
	select {
	case <-st.started:
		if d := time.Since(start); d < warmDelay {
			t.Errorf("warm-up began after %s, before the first frame's %s", d, warmDelay)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the warm-up did not start")
	}
	a.Close()
	select {
	case <-st.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the console did not end the warm-up")
	}
	if New(Config{Store: &fakeStore{}}).warmLists() != nil {
		t.Error("a warm-up for a store that cannot warm")
	}
}
