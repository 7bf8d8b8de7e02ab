package burst

import (
	"sync"
	"time"
)

// Window is the span over which arrivals are counted: Busy looks at the
// current window and the one before it, so a burst's end is seen within
// two windows.
const Window = 250 * time.Millisecond

// Meter counts arrivals in two windows. The zero value is ready; it is
// safe for use by several goroutines.
type Meter struct {
	mu       sync.Mutex
	window   int64 // the current window's number (Unix time / Window)
	arrived  int   // arrivals in the current window
	previous int   // and in the one before it
}

// Add counts n arrivals at now (none for n ≤ 0).
func (m *Meter) Add(now time.Time, n int) {
	if n <= 0 {
		return
	}
	m.mu.Lock()
	m.roll(now)
	m.arrived += n
	m.mu.Unlock()
}

// Busy says whether arrivals come at perSecond or more.
func (m *Meter) Busy(now time.Time, perSecond int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(now)
	return float64(m.arrived+m.previous) >= float64(perSecond)*Window.Seconds()
}

// roll moves the windows on to now's; m.mu is held.
func (m *Meter) roll(now time.Time) {
	win := now.UnixNano() / int64(Window)
	switch {
	case win == m.window:
	case win == m.window+1:
		m.previous, m.arrived = m.arrived, 0
	default:
		m.previous, m.arrived = 0, 0
	}
	m.window = win
}
