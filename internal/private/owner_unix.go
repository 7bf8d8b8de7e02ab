//go:build unix

package private

import (
	"io/fs"
	"syscall"
)

const unixPerms = true

func owner(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

// openNoBlock keeps the open of a FIFO from waiting for a writer.
const openNoBlock = syscall.O_NONBLOCK
