package ui

import (
	"testing"
	"time"

	"paydesk/store"
)

// TestStreamWindowGrows: a console over SSH gathers a stream's changes
// for 1 s, then 2 s, then 3 s while the stream goes on (fifty consoles
// drawing every second halved the listener beside them); after a quiet
// spell's 25 ms the stream starts again at 1 s. A console with no maximum
// keeps its window.
func TestStreamWindowGrows(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, top  time.Duration
		used, want time.Duration
	}{
		{"after a quiet spell", time.Second, 3 * time.Second, coalesceWindow, time.Second},
		{"second gathering", time.Second, 3 * time.Second, time.Second, 2 * time.Second},
		{"third gathering", time.Second, 3 * time.Second, 2 * time.Second, 3 * time.Second},
		{"bounded", time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{"local console: no maximum", 0, 0, streamWindow, streamWindow},
		{"local console after a quiet spell", 0, 0, coalesceWindow, streamWindow},
		{"a maximum below the window", time.Second, time.Millisecond, time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Config{Store: nil, StreamWindow: tc.base, StreamWindowMax: tc.top})
			if got := a.growStream(tc.used); got != tc.want {
				t.Errorf("growStream(%s) = %s, want %s", tc.used, got, tc.want)
			}
		})
	}
}

// TestWaitChangeUsesTheStreamWindow: a change within the stream's reach
// of the last is gathered for the (grown) stream window and says so; the
// first change, or one after a quiet spell, for the short one.
func TestWaitChangeUsesTheStreamWindow(t *testing.T) {
	const stream = 7 * time.Millisecond
	for _, tc := range []struct {
		name string
		last time.Time
		want time.Duration
	}{
		{"first change", time.Time{}, coalesceWindow},
		{"in a stream", testNow.Add(-time.Second), stream},
		{"after a quiet spell", testNow.Add(-time.Hour), coalesceWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan store.Change, 1)
			ch <- store.Change{Pushes: 1}
			msg, ok := waitChange(ch, func() time.Time { return testNow }, tc.last, time.Minute, stream)().(changeMsg)
			if !ok || msg.Change.Pushes != 1 {
				t.Fatalf("waitChange gave %#v, want the change", msg)
			}
			if msg.Window != tc.want {
				t.Errorf("gathered for %s, want %s", msg.Window, tc.want)
			}
		})
	}
}
