//go:build unix

package pushlistener

import (
	"net"
	"syscall"
)

// raiseOpenFileLimit lifts the process's soft limit on open descriptors
// towards want (never past the hard limit) and returns the soft limit
// then in force, 0 if unknown. The Go runtime already raises it to the
// hard limit at start on Linux; this covers a process that lowered it.
func raiseOpenFileLimit(want int) int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	if w := uint64(want); r.Cur < w && r.Cur < r.Max {
		r.Cur = min(w, r.Max)
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r) != nil {
			_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
		}
	}
	return int(r.Cur)
}

// hasPendingData reports whether bytes wait unread on c's socket: a
// connection whose request arrived but was not read yet is not waiting
// for its client.
func hasPendingData(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	pending := false
	var buf [1]byte
	// Control, not Read: net/http's goroutine may be blocked in a read
	// of this connection, holding the read lock that Read would wait for.
	_ = raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		pending = err == nil && n > 0
	})
	return pending
}
