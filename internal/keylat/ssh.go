package main

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"paydesk/internal/pushload"
	"paydesk/store"
	"regexp"
	"syscall"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// sshServer is `paydesk serve --ssh` on a cache of its own, with a user
// alice whose key the OpenSSH client is given.
type sshServer struct {
	cmd  *exec.Cmd
	addr string // host:port of its SSH server
	key  string // alice's private key file
}

// startSSH starts bin serve --ssh on loopback in dir (its own home and
// cache), after adding alice with a new key.
func startSSH(bin, dir, db string, env []string) (*sshServer, error) {
	// A file is copied (the local console owns the original); a team's
	// database is served as it is, beside the consoles on it.
	cache := db
	if !store.IsPostgresURL(db) {
		cache = filepath.Join(dir, "cache.db")
		if err := pushload.CopyFile(db, cache); err != nil {
			return nil, err
		}
	}
	key, pub, err := writeKey(dir)
	if err != nil {
		return nil, err
	}
	add := exec.Command(bin, "user", "add", "alice", "--key", pub, "--role", "agent", "--db", cache)
	add.Env = env
	if out, err := add.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("user add: %w: %s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--db", cache, "--ssh", "127.0.0.1:0")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &sshServer{cmd: cmd, key: key}
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`ssh:\s+(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a, ok := <-found:
		if !ok {
			s.stop()
			return nil, errors.New("paydesk serve printed no ssh address")
		}
		s.addr = a
	case <-time.After(time.Minute):
		s.stop()
		return nil, errors.New("paydesk serve printed no ssh address within a minute")
	}
	return s, nil
}

// argv is the OpenSSH client's command line for a console as alice: -tt
// gives the session a pty of the client's terminal's size.
func (s *sshServer) argv() ([]string, error) {
	_, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return nil, err
	}
	return []string{"ssh", "-tt", "-p", port, "-i", s.key, "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "alice@127.0.0.1"}, nil
}

func (s *sshServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
}

// writeKey makes alice's key pair in dir: the private key for ssh -i, the
// public one for paydesk user add.
func writeKey(dir string) (string, string, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	block, err := gossh.MarshalPrivateKey(priv, "keylat")
	if err != nil {
		return "", "", err
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		return "", "", err
	}
	key, pubFile := filepath.Join(dir, "id_ed25519"), filepath.Join(dir, "id_ed25519.pub")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pubFile, gossh.MarshalAuthorizedKey(sshPub), 0o600); err != nil {
		return "", "", err
	}
	return key, pubFile, nil
}
