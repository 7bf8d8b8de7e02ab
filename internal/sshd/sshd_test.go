package sshd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/vt"
	gossh "golang.org/x/crypto/ssh"

	"paydesk/internal/access"
)

// stuck is how long a test waits for a condition before calling it stuck:
// generous, it fails only a test that hangs.
const stuck = 20 * time.Second

// users is the tests' user table: fingerprint → principal, changeable.
type users struct {
	mu sync.Mutex
	by map[string]access.Principal
}

func (u *users) lookup(_ context.Context, user, fp string) (access.Principal, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	p, ok := u.by[fp]
	if !ok || p.User != user {
		return access.Principal{}, fmt.Errorf("%w: %s as %s", ErrUnknownKey, fp, user)
	}
	return p, nil
}

func (u *users) set(fp string, p *access.Principal) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if p == nil {
		delete(u.by, fp)
		return
	}
	u.by[fp] = *p
}

// newKey makes a client key.
func newKey(t testing.TB) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// lineModel is a console stand-in: it shows who it runs for and the keys
// typed, and quits on q.
type lineModel struct {
	who   string
	typed string
}

func (m lineModel) Init() tea.Cmd { return nil }
func (m lineModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if k.String() == "q" {
			return m, tea.Quit
		}
		m.typed += k.String()
	}
	return m, nil
}
func (m lineModel) View() tea.View {
	return tea.NewView("console of " + m.who + " typed:" + m.typed + "|")
}

// testServer starts a server whose commands are run; the users are us.
func testServer(t testing.TB, us *users, run func(ctx context.Context, p access.Principal, args []string, s Streams) int, tweak func(*Config)) (*Server, *lockedLog) {
	t.Helper()
	log := &lockedLog{}
	cfg := Config{
		Addr: "127.0.0.1:0", HostKey: filepath.Join(t.TempDir(), "host_key"),
		Lookup: us.lookup, Run: run, Logf: log.logf, Recheck: time.Hour,
		Console: func(ctx context.Context, p access.Principal) (tea.Model, func(), error) {
			return lineModel{who: p.String()}, func() {}, nil
		},
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, log
}

type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *lockedLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func dial(s *Server, user string, auth ...gossh.AuthMethod) (*gossh.Client, error) {
	return gossh.Dial("tcp", s.Addr().String(), &gossh.ClientConfig{User: user, Auth: auth,
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: stuck})
}

// echoRun prints who runs what and exits with the number of arguments.
func echoRun(_ context.Context, p access.Principal, args []string, s Streams) int {
	fmt.Fprintf(s.Stdout, "%s ran %s\n", p, strings.Join(args, " "))
	fmt.Fprintln(s.Stderr, "to stderr")
	return len(args)
}

func alice(t testing.TB, us *users) gossh.Signer {
	k := newKey(t)
	fp := gossh.FingerprintSHA256(k.PublicKey())
	us.set(fp, &access.Principal{User: "alice", Role: access.Agent, Via: access.SSH, Key: fp})
	return k
}

// TestCommandOverSSH: a command line runs as the key's user with its
// stdout, stderr and exit code.
func TestCommandOverSSH(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	s, log := testServer(t, us, echoRun, nil)
	c, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		cmd  string
		code int
	}{{"reservations --json", 2}, {"show 'a b' c", 3}, {"x", 1}} {
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		sess.Stdout, sess.Stderr = &out, &errb
		err = sess.Run(tc.cmd)
		var ee *gossh.ExitError
		if !errors.As(err, &ee) || ee.ExitStatus() != tc.code {
			t.Errorf("%s: %v; want exit %d", tc.cmd, err, tc.code)
		}
		fp := gossh.FingerprintSHA256(key.PublicKey())
		if want := "alice (" + fp + ") ran "; !strings.HasPrefix(out.String(), want) {
			t.Errorf("%s: stdout %q; want %q…", tc.cmd, out.String(), want)
		}
		if errb.String() != "to stderr\n" {
			t.Errorf("%s: stderr %q", tc.cmd, errb.String())
		}
	}
	if !strings.Contains(log.text(), "from 127.0.0.1") {
		t.Errorf("the login is not logged: %s", log.text())
	}
}

// TestRefusedLogins: an unknown key, a known key as another user, a
// password and keyboard-interactive are all refused, and logged.
func TestRefusedLogins(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	s, log := testServer(t, us, echoRun, nil)
	for _, tc := range []struct {
		name string
		user string
		auth gossh.AuthMethod
	}{
		{"unknown key", "alice", gossh.PublicKeys(newKey(t))},
		{"alice's key as bob", "bob", gossh.PublicKeys(key)},
		{"password", "alice", gossh.Password("alice")},
		{"keyboard-interactive", "alice", gossh.KeyboardInteractive(func(string, string, []string, []bool) ([]string, error) {
			return []string{"alice"}, nil
		})},
	} {
		if c, err := dial(s, tc.user, tc.auth); err == nil {
			c.Close()
			t.Errorf("%s: logged in", tc.name)
		}
	}
	if got := s.Refused(); got != 2 {
		t.Errorf("refused %d keys; want 2 (passwords are never asked)", got)
	}
	if !strings.Contains(log.text(), "login refused") {
		t.Errorf("refusals not logged: %s", log.text())
	}
}

// TestRefusalLogBounded: a flood of refused logins logs perWindow lines a
// window and one line for the rest.
func TestRefusalLogBounded(t *testing.T) {
	now := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	log := &lockedLog{}
	r := &refusals{now: func() time.Time { return now }, logf: log.logf, perWindow: 10, window: time.Minute}
	for i := 0; i < 10000; i++ {
		r.refuse(nil, "mallory", "SHA256:x", ErrUnknownKey)
	}
	now = now.Add(time.Minute)
	r.refuse(nil, "mallory\x1b[31m", "SHA256:x", ErrUnknownKey)
	lines := strings.Split(log.text(), "\n")
	if len(lines) != 12 || !strings.Contains(lines[10], "9990 more logins refused") {
		t.Fatalf("%d lines logged; want 10, a count, 1:\n%s", len(lines), log.text())
	}
	if strings.ContainsRune(lines[11], 0x1b) {
		t.Errorf("a client's user name reaches the log raw: %q", lines[11])
	}
}

// waitFor waits for cond, failing the test only when it is stuck.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stuck)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("stuck waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRemovedUserCutOff: removing a user ends their open sessions, a
// command and a console, at once.
func TestRemovedUserCutOff(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	started := make(chan struct{}, 1)
	s, _ := testServer(t, us, func(ctx context.Context, _ access.Principal, _ []string, _ Streams) int {
		started <- struct{}{}
		<-ctx.Done()
		return 0
	}, nil)
	c, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var cmdErr bytes.Buffer
	cmd.Stderr = &cmdErr
	cmdDone := make(chan error, 1)
	go func() { cmdDone <- cmd.Run("sync") }()
	<-started
	con, out := openConsole(t, c)
	if err := con.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the console", func() bool { return strings.Contains(out.String(), "console of alice") })
	us.set(gossh.FingerprintSHA256(key.PublicKey()), nil)
	s.Recheck()
	var ee *gossh.ExitError
	if err := <-cmdDone; !errors.As(err, &ee) || ee.ExitStatus() != 1 {
		t.Errorf("the command of a removed user: %v; want exit 1", err)
	}
	if !strings.Contains(cmdErr.String(), "was removed; the session ends") {
		t.Errorf("the command's stderr: %q", cmdErr.String())
	}
	if err := con.Wait(); err == nil {
		t.Errorf("the console of a removed user ended well")
	}
	waitFor(t, "no sessions", func() bool { return s.Sessions() == 0 })
	if c2, err := dial(s, "alice", gossh.PublicKeys(key)); err == nil {
		c2.Close()
		t.Error("a removed user logged in again")
	}
}

// syncBuffer is a buffer the session's copier writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// consoleOut is what a console session sends: the bytes as received and
// the screen they draw on a terminal emulator of the pty's size. The
// renderer sends only the cells that changed, so what a console shows is
// read off the screen; the bytes still hold one-off text (a goodbye).
type consoleOut struct {
	syncBuffer
	mu   sync.Mutex
	term *vt.Emulator
}

func newConsoleOut(w, h int) *consoleOut {
	o := &consoleOut{term: vt.NewEmulator(w, h)}
	// The emulator answers the program's queries on a pipe of its own; a
	// terminal nobody reads from would hold the writer. The stand-in
	// console needs no answers.
	go func() { _, _ = io.Copy(io.Discard, o.term) }()
	return o
}

func (o *consoleOut) Write(p []byte) (int, error) {
	_, _ = o.syncBuffer.Write(p)
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.term.Write(p)
}

// screen is the emulator's screen as plain text.
func (o *consoleOut) screen() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.term.String()
}

// openConsole opens a pty session of 80×24 with a shell: the console.
func openConsole(t testing.TB, c *gossh.Client) (*gossh.Session, *consoleOut) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out := newConsoleOut(80, 24)
	sess.Stdout = out
	if err := sess.RequestPty("xterm", 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	return sess, out
}

// TestConsoleOverSSH: a pty without a command is the console, as the
// key's user: keys typed reach it, q ends it.
func TestConsoleOverSSH(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	s, _ := testServer(t, us, echoRun, nil)
	c, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out := openConsole(t, c)
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the console", func() bool { return strings.Contains(out.String(), "console of alice (SHA256:") })
	if _, err := io.WriteString(in, "xy"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the keys typed", func() bool { return strings.Contains(out.screen(), "typed:xy|") })
	if _, err := io.WriteString(in, "q"); err != nil {
		t.Fatal(err)
	}
	if err := sess.Wait(); err != nil {
		t.Errorf("the console ended with %v", err)
	}
}

// TestEmptyWindowKeepsDrawing: a client whose own side is no terminal
// (ssh -tt from a script) reports a window of 0×0, first in its pty request
// and again as a window change; the console keeps the size it had and
// goes on drawing (a 0×0 reaching the program shrank its renderer to
// nothing: the console over SSH cleared the screen and drew nothing more).
func TestEmptyWindowKeepsDrawing(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	s, _ := testServer(t, us, echoRun, nil)
	c, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out := openConsole(t, c)
	in, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the console", func() bool { return strings.Contains(out.String(), "console of alice (SHA256:") })
	if err := sess.WindowChange(0, 0); err != nil {
		t.Fatal(err)
	}
	// One key at a time, each drawn before the next: the renderer sends
	// only what changed, so the keys are read off the screen, never off the
	// bytes (all three in one frame, or one frame each, depending on load).
	typed := ""
	for _, k := range []string{"x", "y", "z"} {
		if _, err := io.WriteString(in, k); err != nil {
			t.Fatal(err)
		}
		typed += k
		waitFor(t, "the keys typed after an empty window", func() bool { return strings.Contains(out.screen(), "typed:"+typed+"|") })
	}
	if _, err := io.WriteString(in, "q"); err != nil {
		t.Fatal(err)
	}
	if err := sess.Wait(); err != nil {
		t.Errorf("the console ended with %v", err)
	}
}

// TestIdleSessionCloses: a console nobody types in closes after Idle.
func TestIdleSessionCloses(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	s, _ := testServer(t, us, echoRun, func(c *Config) { c.Idle = 300 * time.Millisecond })
	c, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, out := openConsole(t, c)
	var errb syncBuffer
	sess.Stderr = &errb
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case <-done:
	case <-time.After(stuck):
		t.Fatal("an idle console stayed open")
	}
	if !strings.Contains(out.String()+errb.String(), "idle for 300ms") {
		t.Errorf("the client is not told why: %q %q", out.String(), errb.String())
	}
}

// TestManySessions: 200 sessions at once, each on its own connection,
// each gets its own answer.
func TestManySessions(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	release := make(chan struct{})
	var open sync.WaitGroup
	open.Add(200)
	s, _ := testServer(t, us, func(ctx context.Context, p access.Principal, args []string, st Streams) int {
		open.Done()
		<-release // all 200 are open at once
		fmt.Fprintln(st.Stdout, args[0])
		return 0
	}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dial(s, "alice", gossh.PublicKeys(key))
			if err != nil {
				errs <- err
				open.Done()
				return
			}
			defer c.Close()
			sess, err := c.NewSession()
			if err != nil {
				errs <- err
				open.Done()
				return
			}
			out, err := sess.Output(fmt.Sprint("n", i))
			if err != nil || string(out) != fmt.Sprintf("n%d\n", i) {
				errs <- fmt.Errorf("session %d: %q, %v", i, out, err)
			}
		}()
	}
	open.Wait()
	if n := s.Sessions(); n != 200 {
		t.Errorf("%d sessions open; want 200", n)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestStalledReaderDoesNotBlockOthers: a client that stops reading a
// command's endless output stalls only its own session.
func TestStalledReaderDoesNotBlockOthers(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	key := alice(t, us)
	flooding := make(chan struct{})
	var once sync.Once
	s, _ := testServer(t, us, func(ctx context.Context, _ access.Principal, args []string, st Streams) int {
		if args[0] != "flood" {
			fmt.Fprintln(st.Stdout, "ok")
			return 0
		}
		line := bytes.Repeat([]byte("x"), 4096)
		for ctx.Err() == nil {
			if _, err := st.Stdout.Write(line); err != nil {
				return 1
			}
			once.Do(func() { close(flooding) })
		}
		return 1
	}, nil)
	stalled, err := dial(s, "alice", gossh.PublicKeys(key))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	fs, err := stalled.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	// StdoutPipe never read: the channel's window fills and the server's
	// writes block.
	if _, err := fs.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := fs.Start("flood"); err != nil {
		t.Fatal(err)
	}
	<-flooding
	for i := 0; i < 20; i++ {
		c, err := dial(s, "alice", gossh.PublicKeys(key))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if out, err := sess.Output("look"); err != nil || string(out) != "ok\n" {
			t.Fatalf("beside a stalled reader: %q, %v", out, err)
		}
		c.Close()
	}
}

// TestHostKeyMadeOnce: the host key is made 0600 on first start and the
// same key is used again.
func TestHostKeyMadeOnce(t *testing.T) {
	us := &users{by: map[string]access.Principal{}}
	path := filepath.Join(t.TempDir(), "host_key")
	var keys []string
	for i := 0; i < 2; i++ {
		s, _ := testServer(t, us, echoRun, func(c *Config) { c.HostKey = path })
		var got gossh.PublicKey
		c, err := gossh.Dial("tcp", s.Addr().String(), &gossh.ClientConfig{User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(newKey(t))},
			HostKeyCallback: func(_ string, _ net.Addr, k gossh.PublicKey) error { got = k; return nil }})
		if err == nil {
			c.Close()
		}
		if got == nil {
			t.Fatal("no host key seen")
		}
		keys = append(keys, gossh.FingerprintSHA256(got))
		_ = s.Close()
	}
	if keys[0] != keys[1] {
		t.Errorf("host key changed between starts: %v", keys)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("host key file: %v, %v; want mode 0600", fi.Mode(), err)
	}
}

// TestKeepWindow: what the console's filter drops, turns and keeps.
func TestKeepWindow(t *testing.T) {
	for _, c := range []struct {
		name string
		in   tea.Msg
		want tea.Msg
	}{
		{"no size", tea.WindowSizeMsg{}, nil},
		{"no width", tea.WindowSizeMsg{Height: 24}, nil},
		{"no height", tea.WindowSizeMsg{Width: 80}, nil},
		{"a size", tea.WindowSizeMsg{Width: 80, Height: 24}, tea.WindowSizeMsg{Width: 80, Height: 24}},
		{"suspend", tea.SuspendMsg{}, tea.ResumeMsg{}},
		{"a key", tea.KeyPressMsg{Code: 'x', Text: "x"}, tea.KeyPressMsg{Code: 'x', Text: "x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := keepWindow(nil, c.in); got != c.want {
				t.Errorf("keepWindow(%#v) = %#v; want %#v", c.in, got, c.want)
			}
		})
	}
}
