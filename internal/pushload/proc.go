package pushload

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ProcCPU reads utime+stime of /proc/PID/stat, in the kernel's clock
// ticks (100 a second on Linux); 0 when it cannot be read. The load tools
// measure a target's CPU with it from outside its process.
func ProcCPU(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	return ticks(f[11:13]) // f[0] is field 3 (state): utime is field 14, stime 15
}

// Postmaster is the process ID of the PostgreSQL server whose data
// directory is dir (its postmaster.pid), 0 when it cannot be read: the
// server is on another machine or its directory is not readable.
func Postmaster(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pm, _ := strconv.Atoi(strings.TrimSpace(first))
	return pm
}

// ServerCPU is the CPU a PostgreSQL server used so far: its postmaster's
// own, what it collected of the backends that ended (their children's
// times) and the backends alive now; 0 for pm 0.
func ServerCPU(pm int) time.Duration {
	if pm == 0 {
		return 0
	}
	f := statFields(pm)
	if len(f) < 15 {
		return 0
	}
	sum := ticks(f[11:15]) // utime, stime, cutime, cstime
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return sum
	}
	parent := strconv.Itoa(pm)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) >= 13 && f[1] == parent {
			sum += ticks(f[11:13])
		}
	}
	return sum
}

// statFields are /proc/PID/stat's fields after the command name (which
// may hold spaces), the first being field 3 (state).
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Fields(s)
}

// ticks sums fields counted in the kernel's clock ticks (100 a second on
// Linux).
func ticks(fs []string) time.Duration {
	var n int64
	for _, s := range fs {
		v, _ := strconv.ParseInt(s, 10, 64)
		n += v
	}
	return time.Duration(n) * (time.Second / 100)
}
