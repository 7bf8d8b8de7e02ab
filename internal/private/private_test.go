package private

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSecretFile (F9): a secret file others may read is refused with
// the chmod to run, and no error repeats the file's name, which might be
// the secret itself.
func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("ok", " s3cret\n", 0o600)
	if s, err := ReadSecretFile(ok, "--secret-file"); err != nil || s != "s3cret" {
		t.Fatalf("ReadSecretFile = %q, %v", s, err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o666, 0o604} {
		p := write("open"+mode.String(), "s3cret", mode)
		_, err := ReadSecretFile(p, "--secret-file")
		if !errors.Is(err, ErrTooOpen) || !strings.Contains(err.Error(), "chmod 600 "+p) {
			t.Errorf("mode %04o: %v, want refused with the chmod", mode, err)
		}
	}
	const secret = "Sup3rS3cretValue0123"
	for _, path := range []string{secret, filepath.Join(dir, secret)} {
		_, err := ReadSecretFile(path, "secret-file in the config")
		if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "secret-file in the config") {
			t.Errorf("missing file: %v (must name the setting, never the value)", err)
		}
	}
	empty := write("empty", "\n", 0o600)
	if _, err := ReadSecretFile(empty, "--secret-file"); err == nil {
		t.Error("an empty secret file was accepted")
	}
}

func TestCheckPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cache.db")
	if err := CheckPath(p); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckPath(p); err != nil {
		t.Fatalf("0600: %v", err)
	}
	_ = os.Chmod(p, 0o644)
	if err := CheckPath(p); !errors.Is(err, ErrTooOpen) {
		t.Fatalf("0644: %v", err)
	}
}

// TestCheckOtherOwner: a file of another user is refused (needs root to
// make one).
func TestCheckOtherOwner(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file away")
	}
	p := filepath.Join(t.TempDir(), "cache.db")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if err := CheckPath(p); !errors.Is(err, ErrTooOpen) || !strings.Contains(err.Error(), "another user") {
		t.Fatalf("CheckPath = %v", err)
	}
}
