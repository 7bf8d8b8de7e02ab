//go:build unix

package kv

import (
	"os"
	"syscall"
)

// heldByOther reports whether another process holds the cache file's lock
// (bbolt's flock): its pages may be changing under a reader, so what a
// read of them found is not evidence of damage.
func heldByOther(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}
