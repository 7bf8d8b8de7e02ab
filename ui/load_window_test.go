package ui

import (
	"testing"
	"time"
)

// After a quiet spell the first change shows at once (25 ms to gather a
// burst); while changes keep coming the lists reload four times a second.
func TestChangeWindow(t *testing.T) {
	for _, tc := range []struct {
		since time.Duration
		want  time.Duration
	}{
		{0, streamWindow},
		{100 * time.Millisecond, streamWindow},
		{streamWindow, coalesceWindow},
		{time.Minute, coalesceWindow},
		{-time.Second, coalesceWindow}, // a clock stepped back: treated as quiet
	} {
		if got := changeWindow(tc.since); got != tc.want {
			t.Errorf("changeWindow(%s) = %s, want %s", tc.since, got, tc.want)
		}
	}
}
