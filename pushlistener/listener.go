package pushlistener

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// MaxBody is the largest push body accepted.
const MaxBody = 1 << 20

// Config configures a Server.
type Config struct {
	DB       *store.DB
	Verifier api.Verifier
	// PushURL is the URL the gateway signs over: the push URL as configured
	// at the gateway (e.g. http://127.0.0.1:8801/push). Empty means the
	// address the request arrived on (Host header + path).
	PushURL string
	// Logf, if set, receives one line per failure to store.
	Logf func(format string, args ...any)
	// Observe, if set, sees every push after it was answered: stored,
	// duplicate or rejected. It runs on the request's goroutine.
	Observe func(Event)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Event is one push as the listener handled it.
type Event struct {
	Record     store.PushRecord // for a stored push, as stored (ID set)
	Result     store.ApplyResult
	HTTPStatus int
	// Order is set for a request to the order intake (Record then holds
	// only its time, invoice and amount).
	Order *OrderEvent
}

// Server is the push listener. Serve answers on its own HTTP/1.1 loop
// (http1.go); ServeHTTP serves the same pushes behind any net/http server.
type Server struct {
	cfg Config

	mu           sync.Mutex
	ln           net.Listener
	conns        map[*conn]struct{}
	running      sync.WaitGroup // one per connection goroutine
	shuttingDown atomic.Bool
	// stop ends the context of requests still running when Shutdown gives
	// up waiting for them.
	stop context.CancelFunc
}

// New checks cfg and returns the listener.
func New(cfg Config) (*Server, error) {
	if cfg.DB == nil {
		return nil, errors.New("push listener: no cache")
	}
	if cfg.Verifier.Secret == nil {
		return nil, errors.New("push listener: no credentials to verify pushes with")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Server{cfg: cfg, conns: make(map[*conn]struct{})}, nil
}

// pushRequest is one push as either HTTP server hands it over.
type pushRequest struct {
	method     string
	requestURI string
	host       string
	remoteAddr string
	header     http.Header
	body       []byte // at most MaxBody bytes
	tooLarge   bool   // the body is over MaxBody; body holds what was read of it
	bodyErr    error
}

// ServeHTTP handles one push behind a net/http server.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pr := &pushRequest{method: r.Method, requestURI: r.URL.RequestURI(), host: r.Host, remoteAddr: r.RemoteAddr, header: r.Header.Clone()}
	if r.Method == http.MethodPost {
		pr.body, pr.tooLarge, pr.bodyErr = readBody(r)
	}
	status, text := s.handle(r.Context(), pr)
	if isOrdersPath(pr.requestURI) && strings.HasPrefix(text, "{") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text+"\n")
		return
	}
	if status == http.StatusOK {
		w.WriteHeader(status)
		return
	}
	if status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", http.MethodPost)
	}
	http.Error(w, text, status)
}

// handle handles one push and returns the answer: 200 only once it is on
// disk; 401 for a bad signature, 400 for a malformed body, 413 for a body
// over 1 MiB (all three logged as rejected with the reason, nothing
// applied); 500 when the cache could not store it (the gateway will retry).
func (s *Server) handle(ctx context.Context, r *pushRequest) (status int, text string) {
	if r.method != http.MethodPost {
		return http.StatusMethodNotAllowed, "pushes are POSTed"
	}
	if isOrdersPath(r.requestURI) {
		return s.handleOrder(ctx, r)
	}
	rec := store.PushRecord{ReceivedAt: s.cfg.Now(), RemoteAddr: r.remoteAddr, Method: r.method,
		URL: r.requestURI, Header: r.header, Body: r.body}
	if r.bodyErr != nil {
		return s.reject(ctx, rec, http.StatusBadRequest, store.SignatureUnchecked, "reading the body: "+r.bodyErr.Error())
	}
	if r.tooLarge {
		return s.reject(ctx, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "body larger than 1 MiB")
	}

	hostPath := api.HostPath(s.cfg.PushURL)
	if s.cfg.PushURL == "" {
		hostPath = r.host + r.requestURI
	}
	auth, verr := s.cfg.Verifier.Verify(r.header.Get("Authorization"), r.method, hostPath, r.body)
	rec.WebsiteKey = auth.WebsiteKey
	p, derr := api.DecodePush(r.body)
	if p != nil && (verr != nil || derr != nil) {
		rec.Describe(p) // ApplyPush describes the pushes it stores
	}
	if verr != nil {
		return s.reject(ctx, rec, http.StatusUnauthorized, store.SignatureVerdict(verr), "signature: "+verr.Error())
	}
	if derr != nil {
		return s.reject(ctx, rec, http.StatusBadRequest, store.SignatureValid, "malformed body: "+derr.Error())
	}
	rec.Signature = store.SignatureValid
	res, err := s.cfg.DB.ApplyPush(ctx, rec, p)
	if err != nil {
		s.cfg.Logf("push %s: %v", p.Key(), err)
		return http.StatusInternalServerError, "push not stored, try again"
	}
	if s.cfg.Observe != nil {
		rec.Describe(p)
		rec.ID, rec.Applied, rec.Ignored, rec.ReservationKey = res.ID, res.Applied, res.Ignored, res.ReservationKey
		s.cfg.Observe(Event{Record: rec, Result: res, HTTPStatus: http.StatusOK})
	}
	return http.StatusOK, ""
}

func (s *Server) reject(ctx context.Context, rec store.PushRecord, status int, verdict, reason string) (int, string) {
	rec.Signature, rec.Reason, rec.Rejected = verdict, reason, true
	id, err := s.cfg.DB.RecordRejectedPush(ctx, rec)
	if err != nil {
		s.cfg.Logf("rejected push from %s (%s): not logged: %v", rec.RemoteAddr, reason, err)
	}
	rec.ID = id
	if s.cfg.Observe != nil {
		s.cfg.Observe(Event{Record: rec, HTTPStatus: status})
	}
	return status, reason
}

// Listen binds addr (e.g. 127.0.0.1:8801; port 0 picks one) and returns
// the bound address; Serve then answers on it.
func (s *Server) Listen(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("push listener: %w", err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	return ln.Addr(), nil
}

// Serve answers pushes on the bound listener until ctx ends, then shuts
// down gracefully (requests in flight finish, within 5 s).
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return errors.New("push listener: Serve before Listen")
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on a listener the caller bound. Like net/http's
// Serve it returns at once when Shutdown is called directly; the caller
// then waits for Shutdown, which lets the requests in flight finish.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.stop != nil {
		s.mu.Unlock()
		return errors.New("push listener: already serving")
	}
	if s.shuttingDown.Load() {
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	s.ln = ln
	reqCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.mu.Unlock()

	accepted := make(chan error, 1)
	go func() { accepted <- s.accept(reqCtx, ln) }()
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		defer stop()
		return s.Shutdown(sctx)
	}
	select {
	case err := <-accepted:
		if err == nil {
			return nil // Shutdown was called; it sees the requests out
		}
		// The listener broke: let what is in flight finish, then say why.
		_ = shutdown()
		return err
	case <-ctx.Done():
		err := shutdown()
		<-accepted
		return err
	}
}

// accept runs a goroutine per connection until the listener closes.
func (s *Server) accept(ctx context.Context, ln net.Listener) error {
	defer ln.Close()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shuttingDown.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of descriptors or a transient failure: wait and
				// try again rather than give up the listener.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.cfg.Logf("accept: %v; retrying in %v", err, backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("push listener: %w", err)
		}
		backoff = 0
		c := &conn{srv: s, nc: nc, br: bufio.NewReaderSize(nc, 4<<10), bw: bufio.NewWriterSize(nc, 512)}
		if !s.track(c) {
			_ = nc.Close()
			return nil
		}
		go c.serve(ctx)
	}
}

// track registers a connection about to be served; false once Shutdown
// has begun.
func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shuttingDown.Load() {
		return false
	}
	s.conns[c] = struct{}{}
	s.running.Add(1)
	return true
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// ListenAndServe is Listen then Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if _, err := s.Listen(addr); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Shutdown stops accepting pushes, closes idle connections and waits for
// the requests in flight; when ctx ends first it cancels and closes them,
// and returns once their goroutines are gone (nothing is observed after).
func (s *Server) Shutdown(ctx context.Context) error {
	s.shuttingDown.Store(true)
	s.mu.Lock()
	ln, stop := s.ln, s.stop
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		for c := range s.conns {
			if c.state.close() {
				_ = c.nc.Close()
			}
		}
		left := len(s.conns)
		s.mu.Unlock()
		if left == 0 {
			s.running.Wait()
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if stop != nil {
				stop()
			}
			s.mu.Lock()
			for c := range s.conns {
				_ = c.nc.Close()
			}
			s.mu.Unlock()
			s.running.Wait()
			return fmt.Errorf("push listener shutdown: %w", ctx.Err())
		}
	}
}

// atomicState is a connection's place between requests: idle (Shutdown
// may close it), active (a request is being read or answered) or closed.
type atomicState struct{ v atomic.Int32 }

const (
	connIdle int32 = iota
	connActive
	connClosed
)

func (a *atomicState) activate() bool { return a.v.CompareAndSwap(connIdle, connActive) }
func (a *atomicState) idle() bool     { return a.v.CompareAndSwap(connActive, connIdle) }
func (a *atomicState) close() bool    { return a.v.CompareAndSwap(connIdle, connClosed) }

// readBody reads a push's body behind net/http as the loop does: a body
// declared larger than MaxBody is refused unread, and a chunked one once
// it passes MaxBody.
func readBody(r *http.Request) (body []byte, tooLarge bool, err error) {
	if r.ContentLength > MaxBody {
		return nil, true, nil
	}
	body, err = readUpTo(r.Body, MaxBody+1)
	if len(body) > MaxBody {
		return body[:MaxBody], true, nil
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return body, false, err
}
