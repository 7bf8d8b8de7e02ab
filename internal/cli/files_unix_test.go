//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin is runCLI that fails the test if the command has not returned
// by a deadline only a stuck command misses (a FIFO open waiting for a
// writer hangs, deaf to SIGTERM).
func runWithin(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	type res struct {
		code      int
		out, errs string
	}
	done := make(chan res, 1)
	go func() {
		code, out, errs := runCLI(t, dir, "", args...)
		done <- res{code, out, errs}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errs
	case <-time.After(30 * time.Second):
		t.Fatalf("paydesk %s: still running after 30 s", strings.Join(args, " "))
		return 0, "", ""
	}
}

// issue 24: a FIFO, a device or a directory as --config, --secret-file, a
// replay file or a manifest is refused at once with what it is; /dev/zero
// no longer reads without end.
func TestNonRegularFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"FIFO as --config", []string{"--config", fifo, "reservations"}, "a named pipe (FIFO), not a regular file"},
		{"/dev/zero as --config", []string{"--config", "/dev/zero", "reservations"}, "a character device, not a regular file"},
		{"directory as --config", []string{"--config", dir, "reservations"}, "a directory, not a regular file"},
		{"FIFO as --secret-file", []string{"--website-key", "K", "--secret-file", fifo, "replay", fifo, "--to", "http://127.0.0.1:1/push"}, "a named pipe (FIFO)"},
		{"/dev/zero as a replay file", []string{"replay", "/dev/zero", "--to", "http://127.0.0.1:1/push"}, "a character device, not a regular file"},
		// A manifest or an import may come through a pipe (<(wms-export)): a
		// FIFO no one writes to reads as empty, and a device is read as the
		// stream it is, within the limits.
		{"FIFO as a manifest", []string{"batch", "capture", fifo, "--dry-run"}, "manifest is empty"},
		{"/dev/zero as a manifest", []string{"batch", "capture", "/dev/zero", "--dry-run"}, "a row longer than 64 KiB"},
		{"FIFO to import", []string{"import", fifo}, "0 records read"},
		{"/dev/zero to import", []string{"import", "/dev/zero"}, "longer than 1048576 bytes"},
		{"directory to import", []string{"import", dir}, "a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.args[0] == "replay" {
				secret := filepath.Join(dir, "secret")
				if err := os.WriteFile(secret, []byte("S3cret-key-0123"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append([]string{"--website-key", "K", "--secret-file", secret}, args...)
			}
			code, out, errs := runWithin(t, dir, args...)
			if code == 0 || !strings.Contains(out+errs, tc.want) {
				t.Fatalf("exit %d, want refused with %q:\n%s%s", code, tc.want, out, errs)
			}
		})
	}
}
