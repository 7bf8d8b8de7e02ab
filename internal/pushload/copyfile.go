package pushload

import (
	"fmt"
	"io"
	"os"
)

// CopyFile copies the cache file from to to (mode 0600), streamed: the
// load tools give each binary they measure a copy of one cache, and a
// million reservations are 3 GB, more than they should hold in memory.
func CopyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return out.Close()
}
