package cli

import (
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/vt"
	gossh "golang.org/x/crypto/ssh"
)

// screenOverSSH is a console session through a Go SSH client with a pty
// of a fixed size; everything the server sends is drawn on a terminal
// emulator of that size.
type screenOverSSH struct {
	mu   sync.Mutex
	term *vt.Emulator
	sess *gossh.Session
	inMu sync.Mutex
	in   io.Writer
}

// press sends keys as typed, between the terminal's own answers.
func (s *screenOverSSH) press(keys string) {
	s.inMu.Lock()
	defer s.inMu.Unlock()
	_, _ = io.WriteString(s.in, keys)
}

func (s *screenOverSSH) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.Write(p)
}

// text is the screen as plain text: no colours or styles, trailing
// blanks off each line.
func (s *screenOverSSH) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := strings.Split(s.term.String(), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

func openSSHScreen(t *testing.T, d *sshDesk, user, keyFile string, w, h int) *screenOverSSH {
	t.Helper()
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := gossh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gossh.Dial("tcp", net.JoinHostPort("127.0.0.1", d.port), &gossh.ClientConfig{User: user,
		Auth: []gossh.AuthMethod{gossh.PublicKeys(signer)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: stuckAfter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	s := &screenOverSSH{term: vt.NewEmulator(w, h), sess: sess}
	sess.Stdout = s
	sess.Stderr = s
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.in = in
	// The terminal answers the program's queries (its colours, the
	// cursor) on the program's input, as a real one does.
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := s.term.Read(buf)
			if n > 0 {
				s.press(string(buf[:n]))
			}
			if err != nil {
				return
			}
		}
	}()
	// The emulator is not closed: its Close is not safe beside the Read
	// this goroutine is blocked in, and nothing writes to it after the
	// session ends; the goroutine ends with the test binary.
	if err := sess.RequestPty("xterm", h, w, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	return s
}

// ports are the listener's and the sandbox's, a free port each run.
var ports = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// settle waits until the screen, its ports named PORT, is the golden
// file's (when updating: shows every marker), and compares it with the golden:
// a screen drawn through the session in frames is compared once whole.
func (s *screenOverSSH) settle(t *testing.T, markers ...string) {
	t.Helper()
	screen := func() string { return ports.ReplaceAllString(s.text(), "127.0.0.1:PORT") }
	want, _ := os.ReadFile(filepath.Join("testdata", t.Name()+".golden"))
	done := func(got string) bool {
		if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
			for _, m := range markers {
				if !strings.Contains(got, m) {
					return false
				}
			}
			return true
		}
		return got == string(want)
	}
	got := screen()
	for deadline := time.Now().Add(stuckAfter); !done(got) && time.Now().Before(deadline); got = screen() {
		time.Sleep(5 * time.Millisecond)
	}
	golden.RequireEqual(t, got)
}

// TestGoldenConsoleOverSSH (issue 27): the console served by paydesk
// serve --ssh, through a real SSH session with a pty of a fixed size,
// drawn on a terminal emulator of that size: the user's console whole,
// at the client's size, with what the user's role may do.
func TestGoldenConsoleOverSSH(t *testing.T) {
	d := startSSHDesk(t)
	aliceKey, carolKey := userKey(t), userKey(t)
	d.addUser(t, "alice", aliceKey, "agent")
	d.addUser(t, "carol", carolKey, "warehouse")
	for _, tc := range []struct {
		name, user, key string
		w, h            int
		keys            string
		markers         []string
	}{
		{"agent/80x24", "alice", aliceKey, 80, 24, "", []string{"import FILE"}},
		{"agent/120x36", "alice", aliceKey, 120, 36, "", []string{"import FILE"}},
		{"warehouse/80x24", "carol", carolKey, 80, 24, "", []string{"import FILE"}},
		{"warehouse_help/80x24", "carol", carolKey, 80, 24, "?", []string{"Keys", "attention"}},
	} {
		tc.markers = append(tc.markers, "? help", "unknown 0")
		t.Run(tc.name, func(t *testing.T) {
			s := openSSHScreen(t, d, tc.user, tc.key, tc.w, tc.h)
			if tc.keys != "" {
				waitScreen(t, s, "import FILE")
				s.press(tc.keys)
			}
			s.settle(t, tc.markers...)
		})
	}
}

// waitScreen waits until the screen shows text.
func waitScreen(t *testing.T, s *screenOverSSH, text string) {
	t.Helper()
	for deadline := time.Now().Add(stuckAfter); !strings.Contains(s.text(), text); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q:\n%s", text, s.text())
		}
	}
}
