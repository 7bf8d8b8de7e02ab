package pushload

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// ProcCPU reads utime+stime of /proc/PID/stat, in the kernel's clock
// ticks (100 a second on Linux); 0 when it cannot be read. The load tools
// measure a target's CPU with it from outside its process.
func ProcCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from after it.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s) // f[0] is field 3 (state): utime is field 14, stime 15
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	_, _ = fmt.Sscan(f[11], &utime)
	_, _ = fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * (time.Second / 100)
}
