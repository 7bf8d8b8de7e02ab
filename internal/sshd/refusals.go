package sshd

import (
	"net"
	"sync"
	"time"

	"paydesk/internal/textsafe"
)

// refusals logs refused logins, boundedly: a flood of unknown keys (a
// scanner on the port) cannot fill the disk. The first perWindow of a
// window are logged each; the rest are counted and said in one line when
// the next refusal comes after the window.
type refusals struct {
	now       func() time.Time
	logf      func(string, ...any)
	perWindow int
	window    time.Duration

	mu      sync.Mutex
	start   time.Time
	logged  int
	dropped int
	total   int
}

func (r *refusals) refuse(from net.Addr, user, fp string, why error) {
	r.mu.Lock()
	now := r.now()
	r.total++
	if now.Sub(r.start) >= r.window {
		if r.dropped > 0 {
			r.logf("ssh: %d more logins refused from %s on, not logged one by one", r.dropped, r.start.Format(time.RFC3339))
		}
		r.start, r.logged, r.dropped = now, 0, 0
	}
	if r.logged >= r.perWindow {
		r.dropped++
		r.mu.Unlock()
		return
	}
	r.logged++
	r.mu.Unlock()
	// The user name is the client's: made inert before the log.
	r.logf("ssh: login refused: %s as %q with key %s: %v", from, textsafe.Clean(user), fp, why)
}

// Refused is how many logins were refused since the start.
func (s *Server) Refused() int {
	s.refs.mu.Lock()
	defer s.refs.mu.Unlock()
	return s.refs.total
}
