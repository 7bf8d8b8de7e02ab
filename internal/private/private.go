package private

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ErrTooOpen: the file can be read by others than its owner, or belongs
// to another user.
var ErrTooOpen = errors.New("readable by others")

// Check refuses a file that group or others may read or write, or that
// another user owns, with the command that fixes it. On systems without
// Unix permissions it accepts every file.
func Check(path string, fi fs.FileInfo) error {
	if !unixPerms {
		return nil
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to another user (uid %d): %w; copy it to a file of your own (cp %s NEWFILE; chmod 600 NEWFILE)", path, uid, ErrTooOpen, shellQuote(path))
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o, %w: run chmod 600 %s", path, perm, ErrTooOpen, shellQuote(path))
	}
	return nil
}

// CheckPath is Check on the file at path; a missing file passes (it will
// be created private).
func CheckPath(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return Check(path, fi)
}

// ReadSecretFile reads a secret key from the file at path, refusing a file
// that others may read. Its errors never repeat path: a user who typed the
// secret itself where the file's name belongs (secret-file = s3cr3t) would
// see the secret echoed back, in a terminal or a log. flag names where the
// path came from ("--secret-file").
func ReadSecretFile(path, flag string) (string, error) {
	f, fi, err := OpenRegular(path)
	var nr *NotRegularError
	switch {
	case errors.As(err, &nr):
		return "", fmt.Errorf("the file named by %s %s: refused (its name is not shown: it might be the secret itself)", flag, nr.Kind)
	case err != nil:
		return "", fmt.Errorf("the file named by %s cannot be opened: %w (its name is not shown: it might be the secret itself)", flag, bare(err))
	}
	defer f.Close()
	if err := Check(path, fi); err != nil {
		return "", fmt.Errorf("the secret file: %w", err)
	}
	// One byte more than a secret and its line end may take tells a file
	// that is too long without reading all of it.
	b, err := io.ReadAll(io.LimitReader(f, MaxSecret+3))
	if err != nil {
		return "", fmt.Errorf("the file named by %s: %w", flag, bare(err))
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("the file named by %s is empty", flag)
	}
	if len(b) > MaxSecret+2 {
		return "", fmt.Errorf("the file named by %s: %w: more than %d bytes", flag, ErrBadSecret, MaxSecret)
	}
	if err := CheckSecret(s); err != nil {
		return "", fmt.Errorf("the file named by %s: %w", flag, err)
	}
	return s, nil
}

// bare is err without the path an *fs.PathError carries.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == '+' || r == ':' || r == ',' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
