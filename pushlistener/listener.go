package pushlistener

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
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
}

// Server is the push listener: an http.Handler with its own server.
type Server struct {
	cfg Config

	mu  sync.Mutex
	srv *http.Server
	ln  net.Listener
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
	return &Server{cfg: cfg}, nil
}

// ServeHTTP handles one push: 200 only once it is on disk; 401 for a bad
// signature, 400 for a malformed body, 413 for a body over 1 MiB (all three
// logged as rejected with the reason, nothing applied); 500 when the cache
// could not store it (the gateway will retry).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "pushes are POSTed", http.StatusMethodNotAllowed)
		return
	}
	rec := store.PushRecord{ReceivedAt: s.cfg.Now(), RemoteAddr: r.RemoteAddr, Method: r.Method,
		URL: r.URL.RequestURI(), Header: r.Header.Clone()}
	body, err := readBody(r)
	rec.Body = body
	if err != nil {
		s.reject(w, r, rec, http.StatusBadRequest, store.SignatureUnchecked, "reading the body: "+err.Error())
		return
	}
	if len(body) > MaxBody {
		rec.Body = body[:MaxBody]
		s.reject(w, r, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "body larger than 1 MiB")
		return
	}

	hostPath := api.HostPath(s.cfg.PushURL)
	if s.cfg.PushURL == "" {
		hostPath = r.Host + r.URL.RequestURI()
	}
	auth, verr := s.cfg.Verifier.Verify(r.Header.Get("Authorization"), r.Method, hostPath, body)
	rec.WebsiteKey = auth.WebsiteKey
	p, derr := api.DecodePush(body)
	if p != nil && (verr != nil || derr != nil) {
		rec.Describe(p) // ApplyPush describes the pushes it stores
	}
	if verr != nil {
		s.reject(w, r, rec, http.StatusUnauthorized, store.SignatureVerdict(verr), "signature: "+verr.Error())
		return
	}
	if derr != nil {
		s.reject(w, r, rec, http.StatusBadRequest, store.SignatureValid, "malformed body: "+derr.Error())
		return
	}
	rec.Signature = store.SignatureValid
	res, err := s.cfg.DB.ApplyPush(r.Context(), rec, p)
	if err != nil {
		s.cfg.Logf("push %s: %v", p.Key(), err)
		http.Error(w, "push not stored, try again", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	if s.cfg.Observe != nil {
		rec.Describe(p)
		rec.ID, rec.Applied, rec.Ignored, rec.ReservationKey = res.ID, res.Applied, res.Ignored, res.ReservationKey
		s.cfg.Observe(Event{Record: rec, Result: res, HTTPStatus: http.StatusOK})
	}
}

func (s *Server) reject(w http.ResponseWriter, r *http.Request, rec store.PushRecord, status int, verdict, reason string) {
	rec.Signature, rec.Reason, rec.Rejected = verdict, reason, true
	id, err := s.cfg.DB.RecordRejectedPush(r.Context(), rec)
	if err != nil {
		s.cfg.Logf("rejected push from %s (%s): not logged: %v", r.RemoteAddr, reason, err)
	}
	rec.ID = id
	http.Error(w, reason, status)
	if s.cfg.Observe != nil {
		s.cfg.Observe(Event{Record: rec, HTTPStatus: status})
	}
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
	if ln == nil {
		s.mu.Unlock()
		return errors.New("push listener: Serve before Listen")
	}
	// A push (headers and its body of at most 1 MiB) must arrive within
	// 10 s; with both timeouts equal net/http sets one read deadline per
	// request instead of two. There is no write timeout: the answer is a
	// few bytes that the kernel takes at once.
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	srv := s.srv
	s.mu.Unlock()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("push listener: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.Shutdown(sctx)
	}
}

// ListenAndServe is Listen then Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if _, err := s.Listen(addr); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Shutdown stops accepting pushes and waits for the ones in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv, ln := s.srv, s.ln
	s.mu.Unlock()
	if srv == nil {
		if ln != nil {
			return ln.Close()
		}
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("push listener shutdown: %w", err)
	}
	return nil
}

// readBody reads up to MaxBody+1 bytes, sized by Content-Length when the
// client sent one (one allocation instead of a growing buffer).
func readBody(r *http.Request) ([]byte, error) {
	size := int64(512)
	if r.ContentLength > 0 {
		size = min(r.ContentLength+1, MaxBody+1)
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r.Body, MaxBody+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
