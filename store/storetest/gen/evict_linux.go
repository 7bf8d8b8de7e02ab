package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// evict drops a file's clean pages from the kernel's page cache, as after
// a reboot: pages a running process maps stay, so the file must be closed.
func evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("evict %s: %w", path, err)
	}
	return nil
}
