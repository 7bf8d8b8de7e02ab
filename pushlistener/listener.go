package pushlistener

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

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
	// address the request arrived on: the connection's local host:port
	// (as bound, e.g. 127.0.0.1:8801) and the request's path. The Host
	// header is not trusted for it.
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

	bodies *semaphore.Weighted // BodyMemory: bodies beyond BodyAllowance, until proven
	quit   context.Context     // ends when Shutdown starts: no more waiting for body memory
	stop   context.CancelFunc
	held   atomic.Int64 // bytes of unproven bodies held now
	peak   atomic.Int64 // and at most

	mu           sync.Mutex
	ln           net.Listener
	hs           *http.Server
	lim          *limitListener
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
	s := &Server{cfg: cfg, bodies: semaphore.NewWeighted(cfg.HTTP.BodyMemory)}
	s.quit, s.stop = context.WithCancel(context.Background())
	// On a team's database pushes go to the inbox; every listener runs an
	// applier, one of which at a time applies the inbox (store.StartApplier).
	cfg.DB.StartApplier(cfg.Logf)
	s.rejects = rejectLog{db: cfg.DB, logf: cfg.Logf, pending: make(map[string]*store.PushRecord), logged: make(map[string]bool)}
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
// else the address the request arrived on (the connection's local
// address, host:port, and the request's path). The Host header is never
// used: it is the sender's to choose, so a push signed over another
// host could otherwise pass.
func (s *Server) pushHostPath(r *http.Request) string {
	if s.cfg.PushURL != "" {
		return api.HostPath(s.cfg.PushURL)
	}
	return localHost(r) + r.URL.RequestURI()
}

// localHost is the host:port the request's connection arrived on; empty
// when the server did not say (a request built by hand), so that nothing
// signed matches it.
func localHost(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return a.String()
	}
	return ""
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
	if err == nil {
		err = checkPushFields(p)
	}
	if err != nil {
		s.Reject(w, rec, http.StatusBadRequest, store.SignatureValid, "malformed body: "+err.Error())
		return
	}
	// Once the push is signed it is stored even if the gateway hangs up
	// meanwhile: the answer is lost, the push is not.
	if s.cfg.DB.IngestsPushes() {
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

// MaxPushKey bounds a push's transaction key and invoice, which the cache
// keeps as keys of its own (bbolt refuses keys over 32 KiB, and a push it
// cannot store would be answered 500, so the gateway would send it again
// for ever). Real keys are 32 characters, invoices a few dozen; the bound
// is far above both so that no genuine push is refused by it.
const MaxPushKey = 1024

// checkPushFields refuses a signed push whose key or invoice no cache can
// hold: a 400, which the gateway does not retry, instead of a 500 it would.
func checkPushFields(p *api.Push) error {
	for _, f := range []struct{ name, v string }{{"Key", p.Key()}, {"Invoice", p.Invoice()}} {
		if len(f.v) > MaxPushKey {
			return fmt.Errorf("%s.%s of %d bytes, at most %d", p.Envelope(), f.name, len(f.v), MaxPushKey)
		}
	}
	return nil
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

// ingestPush is servePush on a store with a push inbox (a team's database;
// a file opened for a listener): 200 once the push is durable in the
// inbox — on PostgreSQL stored once however many listeners get it; the
// store's applier applies it afterwards (store.IngestPush), and Observe
// sees the push when it was applied.
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
	authz := r.Header.Get("Authorization")
	if len(authz) > MaxAuthorization {
		rec.BodySize = int(max(r.ContentLength, 0))
		s.Reject(w, rec, http.StatusUnauthorized, store.SignatureMalformed,
			fmt.Sprintf("signature: Authorization header of %d bytes, at most %d", len(authz), MaxAuthorization))
		return nil, false
	}
	if _, err := s.cfg.Verifier.Precheck(authz); err != nil {
		rec.BodySize = int(max(r.ContentLength, 0))
		s.Reject(w, rec, http.StatusUnauthorized, store.SignatureVerdict(err), "signature: "+err.Error())
		return nil, false
	}
	if r.ContentLength > MaxBody {
		rec.BodySize = int(r.ContentLength)
		s.Reject(w, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "body larger than 1 MiB")
		return nil, false
	}
	body, pooled, release, err := s.readBody(w, r)
	defer release()
	rec.Body = body
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.Reject(w, rec, http.StatusRequestEntityTooLarge, store.SignatureUnchecked, "body larger than 1 MiB")
		return nil, false
	case errors.Is(err, errNoRoom):
		s.Reject(w, rec, http.StatusServiceUnavailable, store.SignatureUnchecked, err.Error())
		return nil, false
	case err != nil:
		s.Reject(w, rec, http.StatusBadRequest, store.SignatureUnchecked, "reading the body: "+err.Error())
		return nil, false
	}
	auth, err := s.cfg.Verifier.Verify(authz, r.Method, hostPath, body)
	rec.WebsiteKey = auth.WebsiteKey
	if err != nil {
		s.Reject(w, rec, http.StatusUnauthorized, store.SignatureVerdict(err), "signature: "+err.Error())
		return nil, false
	}
	if pooled {
		body = bytes.Clone(body) // the pooled buffer goes back on return
	}
	rec.Body = body
	// The connection has proven itself: it leaves the unproven ones a
	// newcomer may replace, and its reads get net/http's deadlines back.
	if c, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
		c.l.prove(c)
	}
	// rec.Header is r.Header itself: net/http makes a new map for every
	// request and never touches it after the handler returns.
	rec.Signature = store.SignatureValid
	return &Admitted{Record: rec, Auth: auth}, true
}

// MaxAuthorization bounds the Authorization header (a website key, a
// signature, a nonce and a timestamp take about 150 bytes).
const MaxAuthorization = 1024

// BodyAllowance is the part of every body read without drawing on
// HTTPOptions.BodyMemory: a push or an order fits in it, and the
// connection cap bounds what all of them hold together.
const BodyAllowance = 16 << 10

// firstBodyBuffer is the buffer a body is first read into (a gift card
// push is about 700 bytes).
const firstBodyBuffer = 1 << 10

// errNoRoom: the bodies being read before their signature is checked
// hold all of HTTPOptions.BodyMemory, and none came free in time.
var errNoRoom = errors.New("no room to read the body now, try again")

// readBody reads at most MaxBody bytes into a buffer that grows with what
// arrives, never with what Content-Length claims: a client that claims a
// megabyte and sends a byte costs a small buffer. Past BodyAllowance the
// body moves into pooled buffers (64 KiB, 256 KiB, 1 MiB), drawing on the
// shared BodyMemory (a whole MaxBody is reserved at once) and waiting for
// room until the connection's deadline; pooling keeps a flood of large forged bodies from turning into
// garbage for the collector. Past MaxBody it fails with
// *http.MaxBytesError (and net/http closes the connection after the
// answer). release gives the memory back; the body must not be used
// after it (Admit copies a pooled body that proved valid).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, pooled bool, release func(), err error) {
	rd := http.MaxBytesReader(w, r.Body, MaxBody)
	// A claimed Content-Length only ever makes the first buffer smaller:
	// the buffer grows as bytes arrive.
	size := firstBodyBuffer
	if r.ContentLength >= 0 {
		size = int(min(r.ContentLength+1, firstBodyBuffer)) // +1: the last read sees EOF without growing
	}
	buf := make([]byte, 0, size)
	// While the handler waits for body bytes the connection is waiting
	// for its client (one a newcomer may replace); otherwise it is busy
	// on our side, even when net/http reads ahead for the next request.
	c, _ := r.Context().Value(connKey{}).(*limitedConn)
	class := -1 // index in bodyClasses of buf's pool, -1: not pooled
	var reserved int64
	s.hold(int64(size))
	release = func() {
		s.hold(-int64(cap(buf)))
		if class >= 0 {
			b := buf[:0]
			bodyPools[class].Put(&b)
		}
		if reserved > 0 {
			s.bodies.Release(reserved)
		}
	}
	for {
		if len(buf) == cap(buf) {
			if class == len(bodyClasses)-1 {
				return buf, true, release, &http.MaxBytesError{Limit: MaxBody}
			}
			var next []byte
			nextClass := -1
			if n := 4 * cap(buf); n <= BodyAllowance {
				next = make([]byte, 0, n)
			} else {
				nextClass = class + 1
				size := bodyClasses[nextClass]
				if reserved == 0 {
					// The whole of MaxBody at once: a body that held part
					// of the account while it waited for more could, with
					// others doing the same, hold all of it and wait for
					// ever.
					ctx, cancel := context.WithDeadline(r.Context(), s.readDeadline(r))
					stop := context.AfterFunc(s.quit, cancel)
					err := s.bodies.Acquire(ctx, MaxBody+1)
					stop()
					cancel()
					if err != nil {
						return buf, class >= 0, release, errNoRoom
					}
					reserved = MaxBody + 1
				}
				if p, ok := bodyPools[nextClass].Get().(*[]byte); ok {
					next = (*p)[:0]
				} else {
					next = make([]byte, 0, size)
				}
			}
			next = append(next, buf...)
			s.hold(int64(cap(next) - cap(buf)))
			if class >= 0 {
				b := buf[:0]
				bodyPools[class].Put(&b)
			}
			buf, class = next, nextClass
		}
		if c != nil {
			c.bodyWait.Store(true)
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		if c != nil {
			c.bodyWait.Store(false)
		}
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, class >= 0, release, nil
		}
		if err != nil {
			return buf, class >= 0, release, err
		}
	}
}

// bodyClasses are the pooled buffers a body past BodyAllowance grows
// through; the last holds MaxBody and the byte that shows it is exceeded.
var bodyClasses = [...]int{64 << 10, 256 << 10, MaxBody + 1}

var bodyPools [len(bodyClasses)]sync.Pool

// hold counts n more (or, negative, fewer) bytes of unproven bodies.
func (s *Server) hold(n int64) {
	if v := s.held.Add(n); v > s.peak.Load() {
		for p := s.peak.Load(); v > p && !s.peak.CompareAndSwap(p, v); p = s.peak.Load() {
		}
	}
}

// readDeadline is when the request's connection runs out of time to send
// its body: its unproven deadline under ServeListener, else ReadTimeout.
func (s *Server) readDeadline(r *http.Request) time.Time {
	if c, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
		if t := c.deadline(); !t.IsZero() {
			return t
		}
	}
	return time.Now().Add(s.cfg.HTTP.ReadTimeout)
}

// Stats is what a client has been able to make the listener hold.
type Stats struct {
	ConnStats
	// BodyBytes are the bytes held now for bodies whose signature is not
	// checked yet, PeakBodyBytes the most held at once.
	BodyBytes, PeakBodyBytes int64
}

// Stats reports the connections and body memory held; the connection
// figures are zero when the server is not running under ServeListener.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	lim := s.lim
	s.mu.Unlock()
	st := Stats{BodyBytes: s.held.Load(), PeakBodyBytes: s.peak.Load()}
	if lim != nil {
		st.ConnStats = lim.stats()
	}
	return st
}

// Reject answers a refused request with status and notes it in the
// rejected log under verdict and reason, keeping only bounded evidence
// (store.RejectedEvidence: an excerpt of the body, its size and hash) and
// counting repeats per source and kind; Observe sees it within its rate.
func (s *Server) Reject(w http.ResponseWriter, rec store.PushRecord, status int, verdict, reason string) {
	rec.Signature, rec.Reason, rec.Rejected = verdict, reason, true
	if s.rejects.seen(store.RejectedGroup(&rec)) {
		// The log keeps the first request's evidence of a source and
		// kind and counts the rest: hashing a repeat's body (a forged
		// megabyte costs a millisecond) would be thrown away.
		rec.BodySize = max(rec.BodySize, len(rec.Body))
	}
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
	logged   map[string]bool // groups written since the process started (bounded)
	writing  bool
	flushing sync.Mutex // Flush waits for the writer
}

// maxPendingGroups bounds the rejections held while a write is under way;
// beyond it new sources are counted under store.OtherSources.
const maxPendingGroups = 1024

// seen reports whether a rejection of group was logged or is pending.
func (l *rejectLog) seen(group string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.logged[group] || l.pending[group] != nil
}

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
		if len(l.logged)+len(l.pending) > maxPendingGroups {
			clear(l.logged)
		}
		for g, p := range l.pending {
			batch = append(batch, *p)
			l.logged[g] = true
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
