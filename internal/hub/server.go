package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Info says who owns a cache.
type Info struct {
	// Owner names it as a person would: "the console", "paydesk serve".
	Owner string `json:"owner"`
	PID   int    `json:"pid"`
	Cache string `json:"cache"`
}

// Streams are a client's command's standard streams in the owner. Stdin is
// nil when the client has none; reading it asks the client for it.
type Streams struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Runner runs a client's command in the owner and returns its exit code.
// ctx ends when the client goes away or the server closes.
type Runner func(ctx context.Context, req Request, s Streams) int

// Server serves one cache's socket.
type Server struct {
	path string
	info Info
	run  Runner
	logf func(string, ...any)
	// uid is the only user that may connect.
	uid int

	srv    *http.Server
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc

	served chan struct{} // closed when Serve has returned

	mu   sync.Mutex
	runs map[string]*running
	wg   sync.WaitGroup // the runs
}

// running is a command running for a client, known by its token.
type running struct {
	cancel context.CancelFunc
	stdin  *stdinPipe // nil when the client has none
	fed    bool       // under Server.mu: its stdin is being sent
}

// errNotUnix: a connection that is not a unix socket's.
var errNotUnix = errors.New("not a unix socket connection")

// Listen serves info and run on the first of paths that can take the
// socket: its folder is made 0700 when missing (in $XDG_RUNTIME_DIR a
// folder others may enter is refused), a socket left there by an owner
// that died is replaced, and the socket is 0600. The caller owns the cache
// (its lock), so no live owner can be serving these paths.
func Listen(paths []string, info Info, run Runner, logf func(string, ...any)) (*Server, error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	var errs []error
	for i, p := range paths {
		ln, err := listenAt(p, i == len(paths)-1)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return serve(p, ln, info, run, logf), nil
	}
	if len(errs) == 0 {
		return nil, errors.New("hub: no path for the socket")
	}
	return nil, fmt.Errorf("hub: %w", errors.Join(errs...))
}

// listenAt binds the socket at path. The last choice (beside the cache)
// lives in the cache's folder whatever its mode: the socket's own mode and
// the peer check guard it there.
func listenAt(path string, beside bool) (net.Listener, error) {
	if !beside {
		if err := privateDir(filepath.Dir(path)); err != nil {
			return nil, err
		}
	}
	if err := removeSocket(path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// The mode is set before the first Accept; until then a connection
	// would wait in the backlog and still meet the peer check.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	return ln, nil
}

func serve(path string, ln net.Listener, info Info, run Runner, logf func(string, ...any)) *Server {
	s := &Server{path: path, info: info, run: run, logf: logf, uid: os.Getuid(), ln: ln, runs: map[string]*running{}, served: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /owner", s.handleOwner)
	mux.HandleFunc("POST /run", s.handleRun)
	mux.HandleFunc("POST /stdin/{token}", s.handleStdin)
	mux.HandleFunc("POST /cancel/{token}", s.handleCancel)
	s.srv = &http.Server{
		Handler: s.checkPeer(mux),
		// A command runs as long as it runs and a prompt waits for its
		// answer: no read or write timeouts, only for the headers.
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("socket %s: %v", path, err)
		}
	}()
	return s
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Running is how many commands run for clients now.
func (s *Server) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.runs)
}

// Close stops taking commands, ends the ones running (their context is
// cancelled, as Ctrl-C would), waits for them and removes the socket.
func (s *Server) Close() error {
	s.cancel()
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	err := s.srv.Shutdown(ctx)
	<-s.served // Serve closes the listener, which removes the socket
	s.wg.Wait()
	return err
}

type connKey struct{}

// checkPeer answers only the owner's own user (SO_PEERCRED on Linux).
func (s *Server) checkPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if peerChecked {
			c, _ := r.Context().Value(connKey{}).(net.Conn)
			uid, err := peerUID(c)
			if err != nil || uid != s.uid {
				http.Error(w, fmt.Sprintf("only user %d may use this paydesk (you are %d)", s.uid, uid), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleOwner(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.info)
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	req, err := decodeRequest(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	out := &frames{enc: json.NewEncoder(w), rc: http.NewResponseController(w), gone: cancel}
	streams := Streams{Stdout: stream{out, false}, Stderr: stream{out, true}}
	token := newToken()
	ru := &running{cancel: cancel}
	if req.Stdin {
		ru.stdin = newStdin(token, out)
		defer ru.stdin.end()
		// A command waiting for input ends with its context (the client
		// gone or interrupted, the owner closing), not when someone types.
		stop := context.AfterFunc(ctx, func() { _ = ru.stdin.r.CloseWithError(ctx.Err()) })
		defer stop()
		streams.Stdin = ru.stdin
	}
	s.mu.Lock()
	s.runs[token] = ru
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.runs, token)
		s.mu.Unlock()
	}()
	// The token first: with it the client can interrupt the command.
	if out.send(frame{Run: token}) != nil {
		return
	}
	code := s.run(ctx, req, streams)
	_ = out.send(frame{Exit: &code})
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// handleCancel interrupts the run of token as Ctrl-C interrupts a command
// that runs by itself: its context ends, and what it says then still goes
// to the client.
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ru := s.runs[r.PathValue("token")]
	s.mu.Unlock()
	if ru == nil {
		http.Error(w, "no such command running", http.StatusNotFound)
		return
	}
	ru.cancel()
	w.WriteHeader(http.StatusNoContent)
}

// handleStdin feeds the body to the run that asked for it under token.
func (s *Server) handleStdin(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	var p *stdinPipe
	if ru := s.runs[r.PathValue("token")]; ru != nil && ru.stdin != nil && !ru.fed {
		p, ru.fed = ru.stdin, true // one feed per run
	}
	s.mu.Unlock()
	if p == nil {
		http.Error(w, "no command is waiting for this stdin", http.StatusNotFound)
		return
	}
	// The client's stdin may be a terminal no one types into: when the
	// command ends, the read waiting for it is cut off.
	rc := http.NewResponseController(w)
	stop := context.AfterFunc(p.done, func() { _ = rc.SetReadDeadline(time.Now()) })
	defer stop()
	_, err := io.Copy(p.w, r.Body)
	_ = p.w.CloseWithError(err) // nil: the command reads to its end
	w.WriteHeader(http.StatusNoContent)
}

// stdinPipe is a command's stdin: the first read asks the client for it.
type stdinPipe struct {
	token string
	asked sync.Once
	out   *frames
	r     *io.PipeReader
	w     *io.PipeWriter
	// done ends when the command has returned.
	done   context.Context
	cancel context.CancelFunc
}

func newStdin(token string, out *frames) *stdinPipe {
	r, w := io.Pipe()
	p := &stdinPipe{token: token, out: out, r: r, w: w}
	p.done, p.cancel = context.WithCancel(context.Background())
	return p
}

// errRunEnded ends a stdin feed whose command has returned.
var errRunEnded = errors.New("the command has ended")

// end cuts the feed off once the command has returned.
func (p *stdinPipe) end() {
	_ = p.r.CloseWithError(errRunEnded)
	p.cancel()
}

func (p *stdinPipe) Read(b []byte) (int, error) {
	var err error
	p.asked.Do(func() { err = p.out.send(frame{Stdin: p.token}) })
	if err != nil {
		return 0, err
	}
	return p.r.Read(b)
}

// frames writes the answer's frames, one at a time, each flushed: the
// client sees output as the command writes it. The first failed write (the
// client went away) cancels the command.
type frames struct {
	mu     sync.Mutex
	enc    *json.Encoder
	rc     *http.ResponseController
	gone   context.CancelFunc
	failed error
}

func (f *frames) send(fr frame) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed != nil {
		return f.failed
	}
	if err := f.enc.Encode(fr); err != nil {
		f.fail(err)
		return err
	}
	return f.flushLocked()
}

func (f *frames) flushLocked() error {
	if err := f.rc.Flush(); err != nil {
		f.fail(err)
		return err
	}
	return nil
}

func (f *frames) fail(err error) {
	f.failed = fmt.Errorf("the client went away: %w", err)
	f.gone()
}

// stream is stdout or stderr of a run. A write is split so no frame is
// larger than the client takes.
type stream struct {
	f   *frames
	err bool
}

func (s stream) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), maxFrame/2)]
		fr := frame{O: chunk}
		if s.err {
			fr = frame{E: chunk}
		}
		if err := s.f.send(fr); err != nil {
			return n, err
		}
		n += len(chunk)
		p = p[len(chunk):]
	}
	return n, nil
}
