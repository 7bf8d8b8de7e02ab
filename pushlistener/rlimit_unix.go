//go:build unix

package pushlistener

import (
	"net"
	"syscall"
)

// openFileLimit is the process's soft limit on open descriptors, 0 if
// unknown.
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}

// hasPendingData reports whether bytes wait unread on c's socket: a
// connection whose request arrived but was not read yet is not silent.
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
