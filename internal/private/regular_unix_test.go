//go:build unix

package private

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it has not returned by a deadline
// that only a stuck call misses (a FIFO open that waits for a writer).
func within(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("still blocked after 30 s: the read waits for a writer")
		return nil
	}
}

// issue 24: a FIFO, a device or a directory given as a secret file or a
// config is refused at once, naming what it is (no hang, no read of
// /dev/zero without end).
func TestReadRegularRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{"/dev/zero", "a character device"},
		{"/dev/null", "a character device"},
		{dir, "a directory"},
	} {
		if _, err := os.Stat(tc.path); err != nil {
			continue
		}
		err := within(t, func() error { _, err := ReadRegular(tc.path, 1<<20); return err })
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Kind != tc.kind {
			t.Errorf("ReadRegular(%s) = %v, want %s refused", tc.path, err, tc.kind)
		}
		err = within(t, func() error { _, err := ReadSecretFile(tc.path, "--secret-file"); return err })
		if err == nil || !strings.Contains(err.Error(), tc.kind) || strings.Contains(err.Error(), tc.path) {
			t.Errorf("ReadSecretFile(%s) = %v, want %s refused without the name", tc.path, err, tc.kind)
		}
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if _, err := ReadRegular(big, 1<<20); !errors.As(err, &tl) {
		t.Errorf("2 MiB file with a 1 MiB limit: %v", err)
	}
}

// issue 24: a secret file of 64 KiB of NUL bytes, or a secret holding a
// control character or of absurd length, is refused, and the error shows
// no part of it.
func TestReadSecretFileRefusesNonSecrets(t *testing.T) {
	dir := t.TempDir()
	const marker = "Zq9Secret"
	for _, tc := range []struct {
		name, content, want string
	}{
		{"64 KiB of NUL", strings.Repeat("\x00", 64<<10), "more than 1024 bytes"},
		{"NUL inside", marker + "\x00" + marker, "control character (U+0000) at byte 10"},
		{"escape inside", marker + "\x1b[2J" + marker, "control character (U+001B)"},
		{"tab inside", marker + "\t" + marker, "control character (U+0009)"},
		{"40,000 characters", strings.Repeat(marker, 40_000/len(marker)), "more than 1024 bytes"},
		{"not UTF-8", marker + "\xff", "not valid UTF-8"},
	} {
		p := filepath.Join(dir, "s")
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := ReadSecretFile(p, "--secret-file")
		if !errors.Is(err, ErrBadSecret) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), marker) ||
			strings.ContainsRune(err.Error(), 0) {
			t.Errorf("%s: %v, want %q without the secret", tc.name, err, tc.want)
		}
	}
	if err := CheckSecret("Good-Secret_0123456789"); err != nil {
		t.Errorf("a good secret: %v", err)
	}
}
