//go:build unix

package pushlistener

import "syscall"

// openFileLimit is the process's soft limit on open descriptors, 0 if
// unknown.
func openFileLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
