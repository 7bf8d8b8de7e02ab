package pushlistener

import (
	"context"
	"crypto/tls"
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

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// Config configures a Server.
type Config struct {
	DB       *store.DB
	Verifier api.Verifier
	// PushURL is the URL the gateway signs over: the push URL as configured
	// at the gateway (e.g. http://127.0.0.1:8801/push). Empty means the
	// address the request arrived on (Host header + path).
	PushURL string
	// Logf, if set, receives one line per failure to store. It must not
	// block: it runs on the request's goroutine.
	Logf func(format string, args ...any)
	// Observe, if set, sees every push after it was answered: stored,
	// duplicate or rejected. It runs on the request's goroutine and must
	// not block (a printer hands the event to a bounded buffer).
	// Rejections reach it at most RejectLines a second; the rest are
	// counted in Event.Suppressed.
	Observe func(Event)
	// RejectLines bounds the rejections a second passed to Observe; zero
	// means 10.
	RejectLines int
	// HTTP sets the net/http server's timeouts, limits and TLS.
	HTTP HTTPOptions
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Event is one push as the listener handled it, or (Record zero,
// Suppressed > 0) a summary of rejections not shown one by one.
type Event struct {
	Record     store.PushRecord // for a stored push, as stored (ID set)
	Result     store.ApplyResult
	HTTPStatus int
	// Suppressed counts the rejections that were not passed to Observe
	// (over Config.RejectLines a second) since the previous event.
	Suppressed int
	// Order is set for a request to the order intake (Record then holds
	// only its time, invoice and amount).
	Order *OrderEvent
}

// Server is the push listener: an http.Handler (ServeHTTP) and, with
// Listen and Serve, the net/http server it runs behind.
type Server struct {
	cfg     Config
	tls     *tls.Config // nil: plain HTTP
	rejects rejectLog
	lines   lineLimit

	mu           sync.Mutex
	ln           net.Listener
	hs           *http.Server
	serving      bool
	shuttingDown bool
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
	if cfg.RejectLines <= 0 {
		cfg.RejectLines = 10
	}
	cfg.HTTP = cfg.HTTP.withDefaults()
	s := &Server{cfg: cfg}
	// On a team's database pushes go to the inbox; every listener runs an
	// applier, one of which at a time applies the inbox (store.StartApplier).
	cfg.DB.StartApplier(cfg.Logf)
	s.rejects = rejectLog{db: cfg.DB, logf: cfg.Logf, pending: make(map[string]*store.PushRecord)}
	s.lines = lineLimit{perSecond: cfg.RejectLines, tokens: float64(cfg.RejectLines), now: cfg.Now}
	var err error
	if s.tls, err = cfg.HTTP.tlsConfig(); err != nil {
		return nil, err
	}
	return s, nil
}

// ServeHTTP routes a request; it is the one place routes are chosen, so
// every request passes the same server limits, and a route that takes
// signed bodies from outside starts with Admit. Pushes are accepted on any
// path: the signature covers the path the gateway was configured with, so
// the path is taken as it came (no cleaning, no redirects, as a ServeMux
// would do).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case isOrdersPath(r.URL.Path):
		s.serveOrder(w, r)
	default:
		s.servePush(w, r)
	}
}

// posted answers 405 to anything but a POST; what names the things that
// are POSTed here.
func posted(w http.ResponseWriter, r *http.Request, what string) bool {
	if r.Method == http.MethodPost {
		return true
	}
	w.Header().Set("Allow", http.MethodPost)
	http.Error(w, what+" are POSTed", http.StatusMethodNotAllowed)
	return false
}

// pushHostPath is what a push's signature covers: the configured push URL,
// else the address the request arrived on.
func (s *Server) pushHostPath(r *http.Request) string {
	if s.cfg.PushURL != "" {
		return api.HostPath(s.cfg.PushURL)
	}
	return r.Host + r.URL.RequestURI()
}

// servePush handles one push: 200 only once it is on disk; 401 for a bad
// signature, 413 for a body over 1 MiB (both decided before anything is
// stored or decoded), 400 for a signed but malformed body; 500 when the
// cache could not store it (the gateway will retry).
func (s *Server) servePush(w http.ResponseWriter, r *http.Request) {
	if !posted(w, r, "pushes") {
		return
	}
	in, ok := s.Admit(w, r, s.pushHostPath(r))
	if !ok {
		return
	}
	rec := in.Record
	p, err := api.DecodePush(rec.Body)
	if err != nil {
		s.Reject(w, rec, http.StatusBadRequest, store.SignatureValid, "malformed body: "+err.Error())
		return
	}
	// Once the push is signed it is stored even if the gateway hangs up
	// meanwhile: the answer is lost, the push is not.
	if s.cfg.DB.Shared() {
		s.ingestPush(w, r, rec, p)
		return
	}
	res, err := s.cfg.DB.ApplyPush(context.WithoutCancel(r.Context()), rec, p)
	if err != nil {
		s.cfg.Logf("push %s: %v", p.Key(), err)
		http.Error(w, notStored("push", err), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	if s.cfg.Observe != nil {
		rec.Describe(p)
		rec.ID, rec.Applied, rec.Ignored, rec.ReservationKey = res.ID, res.Applied, res.Ignored, res.ReservationKey
		s.observe(Event{Record: rec, Result: res, HTTPStatus: http.StatusOK})
	}
}

// notStored is the answer's text for a push or an order the store could
// not take. A damaged cache takes nothing until it is recovered: the
// sender is told to send again later, the operator (in the log, with the
// path and the steps) how to recover; the path stays off the network.
func notStored(what string, err error) string {
	if errors.Is(err, store.ErrDamaged) {
		return what + " not stored: paydesk's cache is damaged and takes nothing until the operator recovers it (paydesk db check); send it again later"
	}
	return what + " not stored, try again"
}

// ingestPush is servePush on a team's database (PostgreSQL): 200 once the
// push is committed to the push inbox, where it is stored once however many
// listeners get it; the store's applier applies it afterwards
// (store.IngestPush), and Observe sees the push when it was applied.
func (s *Server) ingestPush(w http.ResponseWriter, r *http.Request, rec store.PushRecord, p *api.Push) {
	var onApplied func(store.ApplyResult)
	if s.cfg.Observe != nil {
		onApplied = func(res store.ApplyResult) {
			rec := rec
			rec.Describe(p)
			rec.ID, rec.Applied, rec.Ignored, rec.ReservationKey = res.ID, res.Applied, res.Ignored, res.ReservationKey
			s.observe(Event{Record: rec, Result: res, HTTPStatus: http.StatusOK})
		}
	}
	if _, err := s.cfg.DB.IngestPush(context.WithoutCancel(r.Context()), rec, p, onApplied); err != nil {
		s.cfg.Logf("push %s: %v", p.Key(), err)
		http.Error(w, "push not stored, try again", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Admitted is a request that passed Admit: its body and the record to
// store it under (received time, source, method, URL, headers, body,
// website key, verdict valid).
type Admitted struct {
	Record store.PushRecord
	Auth   api.Authorization
}

// Admit is the step every route that takes a signed body from outside runs
// first, before it decodes or stores anything. It checks the Authorization
// header's form, website key and timestamp before it reads a byte of the
// body, refuses a body over MaxBody unread (or as soon as it passes
// MaxBody), and checks the signature over hostPath (api.HostPath of the URL
// the sender signed). When it returns false it has answered the request
// (401, 413 or 400) and noted the rejection in the bounded, aggregated
// rejected log (Reject): an unsigned request costs one header check, at
// most MaxBody bytes of reading and a share of one commit.
func (s *Server) Admit(w http.ResponseWriter, r *http.Request, hostPath string) (*Admitted, bool) {
	rec := store.PushRecord{ReceivedAt: s.cfg.Now(), RemoteAddr: r.RemoteAddr, Method: r.Method,
		URL: r.URL.RequestURI(), Header: r.Header}
	if _, err := s.cfg.Verifier.Precheck(r.Header.Get("Authorization")); err != nil {
		rec.BodySize = int(max(r.ContentLength, 0))
		s.Reject(w, rec, http.StatusUnauthorized, store.SignatureVerdict(err), "signature: "+err.Error())
		return nil, false
	}
	if r.ContentLength > MaxBody {
		rec.BodySize = int(r.ContentLength)
		s.Reject(w, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "body larger than 1 MiB")
		return nil, false
	}
	body, err := readBody(w, r)
	rec.Body = body
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.Reject(w, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "body larger than 1 MiB")
		return nil, false
	case err != nil:
		s.Reject(w, rec, http.StatusBadRequest, store.SignatureUnchecked, "reading the body: "+err.Error())
		return nil, false
	}
	auth, err := s.cfg.Verifier.Verify(r.Header.Get("Authorization"), r.Method, hostPath, body)
	rec.WebsiteKey = auth.WebsiteKey
	if err != nil {
		s.Reject(w, rec, http.StatusUnauthorized, store.SignatureVerdict(err), "signature: "+err.Error())
		return nil, false
	}
	// rec.Header is r.Header itself: net/http makes a new map for every
	// request and never touches it after the handler returns.
	rec.Signature = store.SignatureValid
	return &Admitted{Record: rec, Auth: auth}, true
}

// readBody reads at most MaxBody bytes; past that it fails with
// *http.MaxBytesError (and net/http closes the connection after the
// answer).
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, MaxBody)
	size := int64(512)
	if r.ContentLength > 0 {
		size = r.ContentLength + 1 // +1: ReadAll's last read sees EOF without growing
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// Reject answers a refused request with status and notes it in the
// rejected log under verdict and reason, keeping only bounded evidence
// (store.RejectedEvidence: an excerpt of the body, its size and hash) and
// counting repeats per source and kind; Observe sees it within its rate.
func (s *Server) Reject(w http.ResponseWriter, rec store.PushRecord, status int, verdict, reason string) {
	rec.Signature, rec.Reason, rec.Rejected = verdict, reason, true
	rec = store.RejectedEvidence(rec)
	w.Header().Set("Connection", "close") // the next request would be no better
	http.Error(w, http.StatusText(status)+": "+rec.Reason, status)
	s.rejects.add(rec)
	if s.cfg.Observe != nil {
		if show, suppressed := s.lines.allow(); show {
			s.cfg.Observe(Event{Record: rec, HTTPStatus: status, Suppressed: suppressed})
		} else if suppressed > 0 {
			s.cfg.Observe(Event{Suppressed: suppressed})
		}
	}
}

// observe passes a stored push to Observe with the rejections held back
// since the previous event.
func (s *Server) observe(e Event) {
	e.Suppressed = s.lines.take()
	s.cfg.Observe(e)
}

// Flush writes the rejections still held back to the rejected log and
// passes a summary of the rejections not shown to Observe. Shutdown calls
// it; tests call it before they read the log.
func (s *Server) Flush(ctx context.Context) error {
	err := s.rejects.flush(ctx)
	if s.cfg.Observe != nil {
		if n := s.lines.take(); n > 0 {
			s.cfg.Observe(Event{Suppressed: n})
		}
	}
	return err
}

// rejectLog coalesces rejections before they are written: the first
// rejection writes itself and whatever arrives while it is being written
// (one entry per source and kind, counted), and the requests that find a
// write under way return at once. A flood of unsigned requests costs one
// commit at a time, however many requests it sends.
type rejectLog struct {
	db   *store.DB
	logf func(format string, args ...any)

	mu       sync.Mutex
	pending  map[string]*store.PushRecord
	writing  bool
	flushing sync.Mutex // Flush waits for the writer
}

// maxPendingGroups bounds the rejections held while a write is under way;
// beyond it new sources are counted under store.OtherSources.
const maxPendingGroups = 1024

func (l *rejectLog) add(rec store.PushRecord) {
	l.mu.Lock()
	l.mergeLocked(rec)
	if l.writing {
		l.mu.Unlock()
		return
	}
	l.writing = true
	l.mu.Unlock()
	l.flushing.Lock()
	defer l.flushing.Unlock()
	l.writeAll(context.Background())
}

func (l *rejectLog) mergeLocked(rec store.PushRecord) {
	key := store.RejectedGroup(&rec)
	p := l.pending[key]
	if p == nil && len(l.pending) >= maxPendingGroups {
		rec.RemoteAddr = store.OtherSources
		key = store.RejectedGroup(&rec)
		p = l.pending[key]
	}
	if p == nil {
		rec.Count, rec.LastSeen = 1, rec.ReceivedAt
		l.pending[key] = &rec
		return
	}
	p.Count++
	p.LastSeen, p.Reason = rec.ReceivedAt, rec.Reason
}

// writeAll writes what is pending until nothing is; the caller set writing.
func (l *rejectLog) writeAll(ctx context.Context) {
	for {
		l.mu.Lock()
		if len(l.pending) == 0 {
			l.writing = false
			l.mu.Unlock()
			return
		}
		batch := make([]store.PushRecord, 0, len(l.pending))
		for _, p := range l.pending {
			batch = append(batch, *p)
		}
		clear(l.pending)
		l.mu.Unlock()
		if _, err := l.db.RecordRejectedPushes(ctx, batch); err != nil {
			l.logf("%d rejected requests not logged: %v", len(batch), err)
		}
	}
}

func (l *rejectLog) flush(ctx context.Context) error {
	l.flushing.Lock()
	defer l.flushing.Unlock()
	l.mu.Lock()
	if l.writing || len(l.pending) == 0 {
		l.mu.Unlock()
		return nil
	}
	l.writing = true
	l.mu.Unlock()
	l.writeAll(ctx)
	return nil
}

// lineLimit passes at most perSecond rejections a second to Observe (a
// token bucket) and counts the rest; at least once a second while it holds
// lines back it lets a summary through.
type lineLimit struct {
	perSecond int
	now       func() time.Time

	mu          sync.Mutex
	tokens      float64
	last        time.Time
	suppressed  int
	lastSummary time.Time
}

// allow says whether a rejection is shown; suppressed is the count of
// rejections held back to report now (with it, or alone as a summary).
func (l *lineLimit) allow() (show bool, suppressed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(float64(l.perSecond), l.tokens+now.Sub(l.last).Seconds()*float64(l.perSecond))
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		n := l.suppressed
		l.suppressed = 0
		return true, n
	}
	l.suppressed++
	if now.Sub(l.lastSummary) >= time.Second {
		l.lastSummary = now
		n := l.suppressed
		l.suppressed = 0
		return false, n
	}
	return false, 0
}

// take returns and resets the count held back.
func (l *lineLimit) take() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.suppressed
	l.suppressed = 0
	return n
}

// ListenAndServe is Listen then Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	if _, err := s.Listen(addr); err != nil {
		return err
	}
	return s.Serve(ctx)
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
