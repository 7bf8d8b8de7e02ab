//go:build unix

package hub

import (
	"io/fs"
	"syscall"
)

func ownerOf(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}
