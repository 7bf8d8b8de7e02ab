package sshd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"paydesk/internal/access"
	"paydesk/internal/textsafe"
)

// ErrUnknownKey is what Config.Lookup returns for a key that names nobody
// (or not the user the client asked for).
var ErrUnknownKey = errors.New("unknown key")

// Streams are a command's standard streams over its session.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Terminal: the client asked for a pty (ssh -t), so someone can answer
	// a question.
	Terminal bool
}

// Config wires a Server.
type Config struct {
	// Addr is the TCP address to listen on ("127.0.0.1:2222"; port 0 picks
	// one).
	Addr string
	// HostKey is the host key's file, made once (ed25519, 0600) when
	// missing.
	HostKey string
	// Lookup names the principal whose key has the SHA256 fingerprint fp,
	// asked for as user; ErrUnknownKey (wrapped) when there is none. Any
	// other error refuses the login too, and is logged.
	Lookup func(ctx context.Context, user, fp string) (access.Principal, error)
	// Console builds the console for p; done is called when its session
	// ends.
	Console func(ctx context.Context, p access.Principal) (m tea.Model, done func(), err error)
	// Run runs a command line for p and returns its exit code.
	Run func(ctx context.Context, p access.Principal, args []string, s Streams) int
	// Idle closes a session after this long without input (and a
	// connection without any traffic); 0 means never.
	Idle time.Duration
	// Recheck is how often open sessions are looked up again (a user
	// removed by another server on the same database); Server.Recheck
	// does it at once. 0 means every 2 s.
	Recheck time.Duration
	// MaxSessions bounds the open sessions; 0 means 1000.
	MaxSessions int
	// Logf records logins and refusals (the runtime's log).
	Logf func(format string, args ...any)
	// Now is the clock of the refusal log; nil means time.Now.
	Now func() time.Time
}

// Server is a running SSH server.
type Server struct {
	cfg  Config
	srv  *ssh.Server
	ln   net.Listener
	refs *refusals

	mu       sync.Mutex
	sessions map[ssh.Session]*session
	closed   bool

	recheck chan struct{}
	stop    chan struct{}
	done    sync.WaitGroup
}

// session is one open session: a console or a command.
type session struct {
	sess    ssh.Session
	p       access.Principal
	ctx     context.Context
	cancel  context.CancelFunc
	console bool
	// why is set when the server ends the session (user removed, idle).
	mu  sync.Mutex
	why string
}

func (se *session) end(why string) {
	se.mu.Lock()
	if se.why == "" {
		se.why = why
	}
	se.mu.Unlock()
	se.cancel()
}

func (se *session) reason() string {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.why
}

type principalKey struct{}

// Start listens on cfg.Addr and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Lookup == nil || cfg.Run == nil || cfg.Console == nil {
		return nil, errors.New("ssh: Lookup, Run and Console must be set")
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = 2 * time.Second
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 1000
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HostKey == "" {
		return nil, errors.New("ssh: host key: no file named")
	}
	s := &Server{cfg: cfg, sessions: map[ssh.Session]*session{}, recheck: make(chan struct{}, 1), stop: make(chan struct{}),
		refs: &refusals{now: cfg.Now, logf: cfg.Logf, perWindow: 10, window: time.Minute}}
	srv, err := wish.NewServer(
		wish.WithHostKeyPath(cfg.HostKey),
		wish.WithPublicKeyAuth(s.publicKey),
		wish.WithIdleTimeout(cfg.Idle),
		// Last is outermost: track sees every session first; the
		// console middleware runs a program for a pty without a command
		// and hands the rest to the command handler.
		wish.WithMiddleware(func(ssh.Handler) ssh.Handler { return s.command }, bm.MiddlewareWithProgramHandler(s.program), s.track),
	)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	// Public keys only: no password, no keyboard-interactive.
	srv.PasswordHandler = nil
	srv.KeyboardInteractiveHandler = nil
	srv.Version = "paydesk"
	s.srv = srv
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("ssh: listen %s: %w", cfg.Addr, err)
	}
	s.ln = ln
	s.done.Add(2)
	go func() {
		defer s.done.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, ssh.ErrServerClosed) {
			cfg.Logf("ssh: %v", err)
		}
	}()
	go func() {
		defer s.done.Done()
		s.watch()
	}()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops listening and ends every session.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, se := range s.sessions {
		se.end("the server stops")
	}
	s.mu.Unlock()
	close(s.stop)
	err := s.srv.Close()
	s.done.Wait()
	return err
}

// Sessions is the number of open sessions.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Recheck looks every open session's user up again now (a user was
// removed or changed in this process).
func (s *Server) Recheck() {
	select {
	case s.recheck <- struct{}{}:
	default:
	}
}

// watch looks the open sessions' users up every cfg.Recheck, and when
// asked.
func (s *Server) watch() {
	t := time.NewTicker(s.cfg.Recheck)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.recheck:
		}
		s.recheckNow()
	}
}

func (s *Server) recheckNow() {
	s.mu.Lock()
	open := make([]*session, 0, len(s.sessions))
	for _, se := range s.sessions {
		open = append(open, se)
	}
	s.mu.Unlock()
	for _, se := range open {
		p, err := s.cfg.Lookup(se.ctx, se.p.User, se.p.Key)
		switch {
		case errors.Is(err, ErrUnknownKey):
			s.cfg.Logf("ssh: %s: no longer a user with this key; the session ends", se.p)
			se.end(fmt.Sprintf("user %s with key %s was removed", se.p.User, se.p.Key))
		case err != nil:
			// The database did not answer: keep the session, ask again.
			s.cfg.Logf("ssh: looking %s up again: %v", se.p, err)
		case p.Role != se.p.Role:
			s.cfg.Logf("ssh: %s: role %s is now %s; the session ends", se.p, se.p.Role, p.Role)
			se.end(fmt.Sprintf("user %s's role is now %s: log in again", se.p.User, p.Role))
		}
	}
}

// publicKey is the only way in: the key must name the user asked for.
func (s *Server) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	fp := gossh.FingerprintSHA256(key)
	p, err := s.cfg.Lookup(ctx, ctx.User(), fp)
	if err != nil {
		s.refs.refuse(ctx.RemoteAddr(), ctx.User(), fp, err)
		return false
	}
	ctx.SetValue(principalKey{}, p)
	return true
}

// track registers every session, ends it when its user goes, and reports
// why the server ended it.
func (s *Server) track(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		p, err := s.principalOf(sess)
		if err != nil {
			fmt.Fprintf(sess.Stderr(), "paydesk: %v\n", err)
			_ = sess.Exit(1)
			return
		}
		ctx, cancel := context.WithCancel(access.With(sess.Context(), p))
		defer cancel()
		se := &session{sess: sess, p: p, ctx: ctx, cancel: cancel}
		_, _, pty := sess.Pty()
		se.console = pty && len(sess.Command()) == 0
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			fmt.Fprintln(sess.Stderr(), "paydesk: the server is stopping")
			_ = sess.Exit(1)
			return
		case len(s.sessions) >= s.cfg.MaxSessions:
			s.mu.Unlock()
			s.cfg.Logf("ssh: %s refused: %d sessions open already", p, s.cfg.MaxSessions)
			fmt.Fprintf(sess.Stderr(), "paydesk: %d sessions are open, the most this server takes: try again later\n", s.cfg.MaxSessions)
			_ = sess.Exit(1)
			return
		}
		s.sessions[sess] = se
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.sessions, sess)
			s.mu.Unlock()
		}()
		what := "the console"
		if !se.console {
			what = textsafe.Clean(sess.RawCommand())
		}
		s.cfg.Logf("ssh: %s from %s: %s", p, sess.RemoteAddr(), what)
		// Closing the channel is what ends the client's ssh: a command
		// still running here ends with its context.
		// It runs once: when the server ends the session (a command or a
		// console blocked on a client may not return before), or after the
		// handler returned, whichever comes first; the other waits for it.
		report := sync.OnceFunc(func() {
			if why := se.reason(); why != "" {
				fmt.Fprintf(sess.Stderr(), "\r\npaydesk: %s; the session ends\r\n", why)
				_ = sess.Exit(1)
				_ = sess.Close()
			}
		})
		stopWatch := context.AfterFunc(ctx, report)
		next(sess)
		stopWatch()
		report()
	}
}

// principalOf looks the session's authenticated key up (again: the
// handler may have seen other keys before the one that signed).
func (s *Server) principalOf(sess ssh.Session) (access.Principal, error) {
	key := sess.PublicKey()
	if key == nil {
		return access.Principal{}, errors.New("public key login only")
	}
	return s.cfg.Lookup(sess.Context(), sess.User(), gossh.FingerprintSHA256(key))
}

func (s *Server) get(sess ssh.Session) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[sess]
}

// program is the console for a session with a pty and no command; nil
// hands the session to the command handler.
func (s *Server) program(sess ssh.Session) *tea.Program {
	se := s.get(sess)
	if se == nil || !se.console {
		return nil
	}
	m, done, err := s.cfg.Console(se.ctx, se.p)
	if err != nil {
		s.cfg.Logf("ssh: %s: the console: %v", se.p, err)
		fmt.Fprintf(sess.Stderr(), "paydesk: the console: %v\r\n", err)
		se.end("the console could not start")
		return nil
	}
	context.AfterFunc(se.ctx, done)
	in := io.Reader(sess)
	if s.cfg.Idle > 0 {
		in = idleReader(in, s.cfg.Idle, se)
	}
	opts := append(bm.MakeOptions(sess), tea.WithInput(in), tea.WithFilter(keepWindow))
	if pty, _, _ := sess.Pty(); pty.Window.Width <= 0 || pty.Window.Height <= 0 {
		// A client whose own side is no terminal (ssh -tt from a script)
		// sends no size: the console would draw nothing.
		opts = append(opts, tea.WithWindowSize(80, 24))
	}
	p := tea.NewProgram(m, opts...)
	// Quit, not a cancelled context: the program ends as when the user
	// quits (a killed one is logged as an error by the middleware), and
	// a program stuck writing to a client ends as the channel closes.
	context.AfterFunc(se.ctx, p.Quit)
	return p
}

// keepWindow filters the console's messages. A window of no size (what
// ssh -tt from a script reports, in its pty request and as a window
// change) is dropped before the program sees it: the program would shrink
// its renderer to nothing and draw no more until a resize that never
// comes. A suspend (ctrl+z) resumes at once, as wish's own filter does:
// there is no shell to suspend to over SSH. The filter replaces wish's,
// since a program keeps only one.
func keepWindow(_ tea.Model, msg tea.Msg) tea.Msg {
	switch m := msg.(type) {
	case tea.WindowSizeMsg:
		if m.Width <= 0 || m.Height <= 0 {
			return nil
		}
	case tea.SuspendMsg:
		return tea.ResumeMsg{}
	}
	return msg
}

// command runs the session's command line (or says the console needs a
// terminal) and ends the session with its exit code.
func (s *Server) command(sess ssh.Session) {
	se := s.get(sess)
	if se == nil || se.console {
		return // the console ran, or the session was refused
	}
	args := sess.Command()
	if len(args) == 0 {
		fmt.Fprintln(sess.Stderr(), "paydesk: the console needs a terminal (ssh -t); or name a command: ssh … reservations --json")
		_ = sess.Exit(2)
		return
	}
	_, _, pty := sess.Pty()
	stderr := &argsNoticer{w: sess.Stderr()}
	code := s.cfg.Run(se.ctx, se.p, args, Streams{Stdin: sess, Stdout: sess, Stderr: stderr, Terminal: pty})
	if se.reason() != "" {
		return // track says why and exits
	}
	if stderr.seen {
		// ssh joins its arguments with spaces and the server splits them
		// again as a shell would: `ssh … deny 2 --reason "no label"` arrives
		// as five words. Say how to keep them one.
		fmt.Fprintln(sess.Stderr(), "paydesk: over SSH the command line is split at spaces as a shell splits it: quote a value of several words twice, e.g. ssh … 'deny 2 --reason \"no return label\"'")
	}
	_ = sess.Exit(code)
}

// idleReader ends se when nothing was read for d.
func idleReader(r io.Reader, d time.Duration, se *session) io.Reader {
	t := time.AfterFunc(d, func() { se.end(fmt.Sprintf("idle for %s", d)) })
	context.AfterFunc(se.ctx, func() { t.Stop() })
	return readFunc(func(b []byte) (int, error) {
		n, err := r.Read(b)
		if n > 0 {
			t.Reset(d)
		}
		return n, err
	})
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(b []byte) (int, error) { return f(b) }

// argsNoticer passes a command's stderr on and notes whether it refused
// the number of arguments (the command line's own words: cobra's "accepts
// 1 arg(s), received 3").
type argsNoticer struct {
	w    io.Writer
	seen bool
}

func (a *argsNoticer) Write(b []byte) (int, error) {
	if !a.seen && bytes.Contains(b, []byte(" arg(s), received ")) {
		a.seen = true
	}
	return a.w.Write(b)
}
