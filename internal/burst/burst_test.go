package burst

import (
	"testing"
	"time"
)

// TestBurstMeter: 200 a second is a burst when the current and the
// previous window together hold 50.
func TestBurstMeter(t *testing.T) {
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC) // on a window's edge
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	type arrival struct{ ms, n int }
	for _, tc := range []struct {
		name     string
		arrivals []arrival
		askMs    int
		want     bool
	}{
		{"none", nil, 0, false},
		{"one short of a burst in one window", []arrival{{0, 49}}, 100, false},
		{"a burst in one window", []arrival{{0, 50}}, 100, true},
		{"a burst over two windows", []arrival{{100, 25}, {300, 25}}, 400, true},
		{"the burst's windows passed", []arrival{{0, 500}}, 600, false},
		{"the previous window still counts", []arrival{{0, 500}}, 300, true},
		{"a gap of a window forgets", []arrival{{0, 500}, {600, 1}}, 600, false},
		{"nothing counted for none", []arrival{{0, 0}, {0, -5}}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Meter
			for _, a := range tc.arrivals {
				m.Add(at(a.ms), a.n)
			}
			if got := m.Busy(at(tc.askMs), 200); got != tc.want {
				t.Errorf("busy = %v, want %v", got, tc.want)
			}
		})
	}
}
