package store

import (
	"os"
	"syscall"
)

// fdatasync makes f's data durable without its times (the inbox's append;
// its size, which fdatasync does write, is what a read needs).
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
