package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerCPU returns a function that reads the CPU the PostgreSQL server
// behind url has used so far (its postmaster, the backends that ended and
// those alive), or nil when the server is not on this machine or its data
// directory cannot be read. A benchmark reads it before and after the work
// it measures: on a shared machine the server's CPU a row travels between
// runs, where the rows a second follow the machine's minute.
func ServerCPU(tb testing.TB, url string) func() time.Duration {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil
	}
	defer conn.Close(ctx)
	var dir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return nil
	}
	return func() time.Duration { return serverCPU(pm) }
}

func serverCPU(pm int) time.Duration {
	f := statFields(pm)
	if len(f) < 15 {
		return 0
	}
	sum := ticks(f[11:15]) // utime, stime, cutime, cstime: the ended backends are its children's
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return sum
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) >= 13 && f[1] == strconv.Itoa(pm) {
			sum += ticks(f[11:13])
		}
	}
	return sum
}

// statFields are /proc/PID/stat's fields after the command name, the
// first being field 3 (state).
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

func ticks(fs []string) time.Duration {
	var n int64
	for _, s := range fs {
		v, _ := strconv.ParseInt(s, 10, 64)
		n += v
	}
	return time.Duration(n) * (time.Second / 100) // the kernel's clock ticks: 100 a second on Linux
}
