package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// maxSocketPath is the longest socket path every unix takes (sun_path is
// 108 bytes on Linux, 104 on the BSDs and macOS, with its NUL).
const maxSocketPath = 103

// Canonical is the cache's absolute path with its folder's symbolic links
// resolved, so two spellings of one cache find one socket.
func Canonical(cache string) string {
	abs, err := filepath.Abs(cache)
	if err != nil {
		return filepath.Clean(cache)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// Paths are where the owner of cache serves its socket, the first choice
// first: in $XDG_RUNTIME_DIR/paydesk/ (runtimeDir), named after the cache's
// file and a hash of its whole path, and beside the cache as FILE.sock.
// A path too long for a socket is left out.
func Paths(cache, runtimeDir string) []string {
	cache = Canonical(cache)
	var out []string
	if runtimeDir != "" && filepath.IsAbs(runtimeDir) {
		sum := sha256.Sum256([]byte(cache))
		name := unsafeName.ReplaceAllString(filepath.Base(cache), "_")
		if len(name) > 40 {
			name = name[:40]
		}
		out = append(out, filepath.Join(runtimeDir, "paydesk", name+"-"+hex.EncodeToString(sum[:6])+".sock"))
	}
	out = append(out, cache+".sock")
	kept := out[:0]
	for _, p := range out {
		if len(p) <= maxSocketPath {
			kept = append(kept, p)
		}
	}
	return kept
}

// privateDir makes dir (0700) when it is missing and refuses a folder that
// is not a folder of this user's that only it may enter.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to another user (uid %d)", dir, uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s has mode %04o: others may enter it (chmod 700 %s)", dir, perm, dir)
	}
	return nil
}

// errNotSocket: something other than a socket is where the socket goes.
var errNotSocket = errors.New("not a socket")

// removeSocket removes the socket file at path, and nothing else.
func removeSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s: %w", path, errNotSocket)
	}
	return os.Remove(path)
}
