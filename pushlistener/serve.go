package pushlistener

import (
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"paydesk/internal/private"
	"paydesk/store"
)

// HTTPOptions bound what a client can hold of the listener before it has
// proved anything. Zero fields take the defaults in brackets.
type HTTPOptions struct {
	// FirstByteTimeout is the time a connection gets from its accept
	// before it must prove itself (deliver a request with a valid
	// signature), plus a second for every MinDataRate bytes it sends: a
	// connection that sends nothing is closed after it, one that trickles
	// soon after (3 s).
	FirstByteTimeout time.Duration
	// MinDataRate is the rate, in bytes a second, that extends an
	// unproven connection's deadline: headers, body and a TLS handshake
	// alike (1 KiB/s: a push of 1 KB earns a second more).
	MinDataRate int
	// ReadHeaderTimeout bounds reading a request's headers (5 s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included (15 s).
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the headers to the end
	// of the answer, storing the push included (15 s).
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection between requests (60 s).
	IdleTimeout time.Duration
	// ShutdownTimeout is how long Serve lets requests in flight finish
	// once its context ends (3 s).
	ShutdownTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (16 KiB).
	MaxHeaderBytes int
	// MaxConns caps the connections held at once (8192, and never more
	// than the process's descriptor limit leaves room for). It is large on
	// purpose: an unproven connection costs about 20 KB while it is held,
	// and one that is closed early comes back at once, so replacing
	// connections costs more than holding them until their deadline. At the cap a
	// new connection takes the place of the oldest unproven one that is
	// waiting for its client, else of the oldest idle proven one, else
	// waits.
	MaxConns int
	// MaxConnsPerAddr caps the unproven connections from one address (an
	// IPv4 address, an IPv6 /64): past it a newcomer from there takes the
	// place of that address's oldest unproven connection (3/4 of
	// MaxConns).
	MaxConnsPerAddr int
	// BodyMemory bounds the bytes held for bodies not yet proven by their
	// signature, beyond the first BodyAllowance bytes of each (8 MiB; at
	// least MaxBody). It also bounds how many large bodies are hashed at
	// once: each forged megabyte costs a few milliseconds of CPU, and a
	// few dozen of them hashing side by side would leave a push's
	// goroutine waiting its turn behind them. A body that outgrows its allowance reserves a whole
	// MaxBody of it.
	// A request that finds no room waits for it within its deadline, then
	// is answered 503.
	BodyMemory int64
	// TLSCertFile and TLSKeyFile, both set, serve HTTPS with that
	// certificate chain and key (PEM files).
	TLSCertFile, TLSKeyFile string
}

func (o HTTPOptions) withDefaults() HTTPOptions {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.FirstByteTimeout, 3*time.Second)
	def(&o.ReadHeaderTimeout, 5*time.Second)
	def(&o.ReadTimeout, 15*time.Second)
	def(&o.WriteTimeout, 15*time.Second)
	def(&o.IdleTimeout, 60*time.Second)
	def(&o.ShutdownTimeout, 3*time.Second)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 16 << 10
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 8192
	}
	if o.MinDataRate <= 0 {
		o.MinDataRate = 1 << 10
	}
	if o.BodyMemory <= 0 {
		o.BodyMemory = 8 << 20
	}
	o.BodyMemory = max(o.BodyMemory, MaxBody+1) // room for one whole body

	// Leave descriptors for the cache file, the log and the connections
	// waiting to be accepted, or accept4 fails with EMFILE; ask for a
	// higher soft limit first when the hard one allows it.
	if limit := raiseOpenFileLimit(o.MaxConns + 64); limit > 0 {
		o.MaxConns = max(1, min(o.MaxConns, limit-64))
	}
	if o.MaxConnsPerAddr <= 0 {
		o.MaxConnsPerAddr = max(1, o.MaxConns*3/4)
	}
	return o
}

func (o HTTPOptions) tlsConfig() (*tls.Config, error) {
	if o.TLSCertFile == "" && o.TLSKeyFile == "" {
		return nil, nil
	}
	if o.TLSCertFile == "" || o.TLSKeyFile == "" {
		return nil, errors.New("push listener: TLS needs both a certificate and a key file")
	}
	// The key is a secret like the secret key: refused, as ssh refuses
	// a private key, when others may read it or it is someone else's.
	if err := private.CheckPath(o.TLSKeyFile); err != nil {
		return nil, fmt.Errorf("push listener: TLS key (--tls-key): %w", err)
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
	if err != nil {
		return nil, fmt.Errorf("push listener: TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// TLS reports whether the listener serves HTTPS.
func (s *Server) TLS() bool { return s.tls != nil }

// NewHTTPServer returns the net/http server that Serve runs s behind, with
// the timeouts and header limit of Config.HTTP. The connection cap and the
// first-byte deadline are the listener's (ServeListener); a caller that
// runs the server itself gets neither.
func (s *Server) NewHTTPServer() *http.Server {
	o := s.cfg.HTTP
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		TLSConfig:         s.tls,
		// Malformed requests and failed handshakes from the internet
		// would otherwise print a line each on stderr.
		ErrorLog: log.New(io.Discard, "", 0),
		// No HTTP/2: a gateway pushes over HTTP/1.1, and HTTP/2's
		// streams would be one more thing for a client to hold.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
}

// Serve answers pushes on the bound listener until ctx ends, then shuts
// down gracefully (requests in flight finish within
// HTTPOptions.ShutdownTimeout).
func (s *Server) Serve(ctx context.Context) error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return errors.New("push listener: Serve before Listen")
	}
	return s.ServeListener(ctx, ln)
}

// ServeListener is Serve on a listener the caller bound: net/http behind
// the connection cap and the first-byte deadline, with TLS when
// configured. Like net/http's Serve it returns at once when Shutdown is
// called directly; the caller then waits for Shutdown, which lets the
// requests in flight finish.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return errors.New("push listener: already serving")
	}
	if s.shuttingDown {
		s.mu.Unlock()
		_ = ln.Close()
		return nil
	}
	lim := newLimitListener(ln, s.cfg.HTTP)
	hs := s.NewHTTPServer()
	hs.ConnState = lim.connState
	hs.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		if c := asLimited(nc); c != nil {
			return context.WithValue(ctx, connKey{}, c)
		}
		return ctx
	}
	s.ln, s.hs, s.lim, s.serving = ln, hs, lim, true
	s.mu.Unlock()

	served := make(chan error, 1)
	go func() {
		var err error
		if s.tls != nil {
			err = hs.Serve(tls.NewListener(lim, s.tls))
		} else {
			err = hs.Serve(lim)
		}
		served <- err
	}()
	shutdown := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), s.cfg.HTTP.ShutdownTimeout)
		defer cancel()
		return s.Shutdown(sctx)
	}
	select {
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil // Shutdown was called; it sees the requests out
		}
		// The listener broke: let what is in flight finish, then say why.
		_ = shutdown()
		return fmt.Errorf("push listener: %w", err)
	case <-ctx.Done():
		err := shutdown()
		<-served
		return err
	}
}

// Shutdown stops accepting pushes, closes idle connections and waits for
// the requests in flight; when ctx ends first it closes them. Either way
// it then writes the rejections still held back.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shuttingDown = true
	hs, ln := s.hs, s.ln
	s.mu.Unlock()
	s.stop()
	var err error
	if hs != nil {
		if err = hs.Shutdown(ctx); err != nil {
			_ = hs.Close()
			err = fmt.Errorf("push listener shutdown: %w", err)
		}
	} else if ln != nil {
		_ = ln.Close()
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = s.Flush(fctx)
	return err
}

// limitListener caps the connections held at once and keeps the cost of
// a connection that has not proven itself (delivered a request with a
// valid signature, Server.Admit) small and short:
//
//   - an unproven connection reads under a deadline that only progress
//     extends: FirstByteTimeout from its accept, plus a second for every
//     MinDataRate bytes it has sent (a TLS handshake included, since the
//     deadline is on the socket under TLS), and never later than the one
//     net/http asked for;
//   - at MaxConns, or when its address holds MaxConnsPerAddr unproven
//     connections, a newcomer is accepted and takes the place of an
//     unproven connection (of its own address first) that is waiting for
//     its client: of the oldest ones, the one with the least earned time
//     (victimLocked), never one accepted less than newcomerGrace ago;
//     then of the oldest idle proven connection; only
//     when neither exists does it wait.
//
// Unlike netutil.LimitListener it never stops accepting while an unproven
// connection can be closed: a client that holds connections open, one
// byte at a time or not at all, delays the gateway's pushes by nothing
// but the accepts.
type limitListener struct {
	net.Listener
	max, perAddr int
	grace        time.Duration
	rate         int64 // bytes a second

	mu      sync.Mutex
	conns   int
	unseen  list.List // unproven connections, oldest first (*limitedConn)
	idle    list.List // proven connections between requests, longest idle first
	byAddr  map[string]*list.List
	evicted atomic.Int64
	peak    int
	freed   chan struct{} // a slot came free (buffered, 1)
	done    chan struct{}
	once    sync.Once
}

// evictScan bounds the unproven connections looked at for one newcomer:
// those busy on the listener's side (not waiting for their client) are
// passed over, and a newcomer must not cost a walk over thousands.
const evictScan = 64

func newLimitListener(ln net.Listener, o HTTPOptions) *limitListener {
	return &limitListener{Listener: ln, max: o.MaxConns, perAddr: o.MaxConnsPerAddr, grace: o.FirstByteTimeout,
		rate: int64(o.MinDataRate), byAddr: make(map[string]*list.List), freed: make(chan struct{}, 1), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &limitedConn{Conn: nc, l: l, accepted: time.Now(), addr: store.RejectedSource(nc.RemoteAddr().String())}
	c.mu.Lock()
	_ = c.applyLocked()
	c.mu.Unlock()
	var timer *time.Timer
	for {
		l.mu.Lock()
		var victim *limitedConn
		hold := false // a better victim is busy on our side for the moment
		if own := l.byAddr[c.addr]; own != nil && l.perAddr > 0 && own.Len() >= l.perAddr {
			victim, hold = l.victimLocked(own)
		}
		if victim == nil && !hold && l.conns < l.max {
			l.addLocked(c)
			l.mu.Unlock()
			return c, nil
		}
		if victim == nil && !hold {
			victim, hold = l.victimLocked(&l.unseen)
		}
		if victim == nil && !hold {
			victim = l.oldestIdleLocked()
		}
		if victim != nil {
			// Off the lists now, so the next newcomer picks another.
			l.unlistLocked(victim)
			l.mu.Unlock()
			l.evicted.Add(1)
			victim.evict()
			continue
		}
		l.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(0)
			<-timer.C
		}
		// A connection may start waiting for its client, or turn idle,
		// without freeing a slot: look again soon.
		timer.Reset(20 * time.Millisecond)
		select {
		case <-l.freed:
		case <-timer.C:
		case <-l.done:
			_ = nc.Close()
			return nil, net.ErrClosed
		}
	}
}

// victimLocked picks, among the oldest unproven connections of ls (at
// most evictScan), the one whose earned deadline comes first, of those
// waiting for their client: blocked in a read for its request's headers
// (or a TLS handshake), or its handler blocked reading the body, with
// nothing unread on the socket. One busy on the listener's side (a
// request that arrived and is being checked, while net/http reads ahead
// for the next one; a connection whose goroutine has not run yet) is
// passed over. Since a connection's deadline moves on with every byte it
// sends, a newcomer that sent its request (or its TLS ClientHello) at
// once outlasts the connections that sent a byte or three.
//
// hold is true when a connection passed over had a deadline well before
// the victim's: it is likely one of the cheap ones whose goroutine has
// not run yet, and closing the richer connection instead would punish a
// client for being quick; the newcomer waits a moment instead.
func (l *limitListener) victimLocked(ls *list.List) (victim *limitedConn, hold bool) {
	soonest, scanned := int64(math.MaxInt64), 0
	youngFrom := time.Now().Add(-newcomerGrace)
	young := false
	for e := ls.Front(); e != nil && scanned < evictScan; e, scanned = e.Next(), scanned+1 {
		c := e.Value.(*limitedConn)
		if c.accepted.After(youngFrom) {
			young = true
			continue
		}
		earned := c.earned.Load()
		soonest = min(soonest, earned)
		if !c.reading.Load() || (c.active.Load() && !c.bodyWait.Load()) {
			continue
		}
		if victim != nil && earned >= victim.earned.Load() {
			continue
		}
		if hasPendingData(c.Conn) {
			continue
		}
		victim = c
	}
	if victim != nil && victim.earned.Load()-soonest > int64(evictSlack) {
		return nil, true
	}
	if victim == nil && young {
		return nil, true // wait for one of the newcomers to come of age
	}
	return victim, false
}

// newcomerGrace is how long a connection is never the victim: the time to
// send its first bytes. Without it a client whose request is a moment late
// on a busy machine (its goroutine not run yet) has earned less than the
// attackers accepted just before it, who sent a few bytes at once, and is
// closed before it could speak; with it a flood of newcomers waits at the
// cap until they are old enough to be judged by what they sent.
const newcomerGrace = 250 * time.Millisecond

// evictSlack is how much more earned time than a connection passed over
// the victim may have.
const evictSlack = 250 * time.Millisecond

func (l *limitListener) oldestIdleLocked() *limitedConn {
	if e := l.idle.Front(); e != nil {
		return e.Value.(*limitedConn)
	}
	return nil
}

func (l *limitListener) addLocked(c *limitedConn) {
	l.conns++
	l.peak = max(l.peak, l.conns)
	c.held = true
	c.unseenEl = l.unseen.PushBack(c)
	own := l.byAddr[c.addr]
	if own == nil {
		own = list.New()
		l.byAddr[c.addr] = own
	}
	c.addrEl = own.PushBack(c)
}

// unlistLocked takes c off the lists a newcomer picks from.
func (l *limitListener) unlistLocked(c *limitedConn) {
	l.unlistUnprovenLocked(c)
	if c.idleEl != nil {
		l.idle.Remove(c.idleEl)
		c.idleEl = nil
	}
}

// unlistUnprovenLocked takes c off the unproven lists: the oldest-first
// list and its address's list.
func (l *limitListener) unlistUnprovenLocked(c *limitedConn) {
	if c.unseenEl != nil {
		l.unseen.Remove(c.unseenEl)
		c.unseenEl = nil
	}
	if c.addrEl != nil {
		if own := l.byAddr[c.addr]; own != nil {
			own.Remove(c.addrEl)
			if own.Len() == 0 {
				delete(l.byAddr, c.addr)
			}
		}
		c.addrEl = nil
	}
}

func (l *limitListener) release(c *limitedConn) {
	l.mu.Lock()
	if c.held {
		c.held = false
		l.conns--
		l.unlistLocked(c)
	}
	l.mu.Unlock()
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// prove marks c as having delivered a signed request: it leaves the
// unproven lists, and its reads go back to net/http's own deadlines.
func (l *limitListener) prove(c *limitedConn) {
	l.mu.Lock()
	l.unlistUnprovenLocked(c)
	l.mu.Unlock()
	c.mu.Lock()
	c.proven.Store(true)
	_ = c.applyLocked()
	c.mu.Unlock()
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState follows net/http's view of each connection: whether a
// handler runs for it, and for a proven one whether it is idle between
// requests (then a newcomer may replace it).
func (l *limitListener) connState(nc net.Conn, st http.ConnState) {
	c := asLimited(nc)
	if c == nil {
		return
	}
	c.active.Store(st == http.StateActive)
	if !c.proven.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		if c.held && c.idleEl == nil {
			c.idleEl = l.idle.PushBack(c)
		}
	case http.StateActive:
		if c.idleEl != nil {
			l.idle.Remove(c.idleEl)
			c.idleEl = nil
		}
	}
}

// ConnStats is what the connection cap has held and done.
type ConnStats struct {
	Held, Peak int   // connections held now, and at most
	Unproven   int   // of those held now, the ones without a signed request yet
	Evicted    int64 // unproven or idle connections closed for newcomers
}

func (l *limitListener) stats() ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ConnStats{Held: l.conns, Peak: l.peak, Unproven: l.unseen.Len(), Evicted: l.evicted.Load()}
}

func asLimited(nc net.Conn) *limitedConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, _ := nc.(*limitedConn)
	return c
}

// connKey carries a request's *limitedConn in its context
// (http.Server.ConnContext), so that Admit can mark it proven.
type connKey struct{}

// limitedConn is a connection under the cap.
type limitedConn struct {
	net.Conn
	l        *limitListener
	accepted time.Time
	addr     string // store.RejectedSource of the remote address
	reading  atomic.Bool
	active   atomic.Bool  // net/http runs a handler for it (StateActive)
	bodyWait atomic.Bool  // that handler is reading the body
	earned   atomic.Int64 // budgetLocked, in Unix nanoseconds
	proven   atomic.Bool
	closed   sync.Once

	// guarded by l.mu
	held                     bool
	unseenEl, addrEl, idleEl *list.Element

	mu       sync.Mutex
	wanted   time.Time // the read deadline net/http asked for
	received int64     // bytes read while unproven
}

// budgetLocked is the read deadline an unproven connection has earned:
// the grace from its accept plus a second for every rate bytes received.
func (c *limitedConn) budgetLocked() time.Time {
	d := c.l.grace
	if c.l.rate > 0 {
		d += time.Duration(c.received * int64(time.Second) / c.l.rate)
	}
	t := c.accepted.Add(d)
	c.earned.Store(t.UnixNano())
	return t
}

// applyLocked sets the socket's read deadline: net/http's, or for an
// unproven connection the earlier of it and the earned one.
func (c *limitedConn) applyLocked() error {
	t := c.wanted
	if !c.proven.Load() {
		if b := c.budgetLocked(); t.IsZero() || b.Before(t) {
			t = b
		}
	}
	return c.Conn.SetReadDeadline(t)
}

// deadline is when an unproven connection's reads run out (zero: none).
func (c *limitedConn) deadline() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proven.Load() {
		return c.wanted
	}
	b := c.budgetLocked()
	if !c.wanted.IsZero() && c.wanted.Before(b) {
		return c.wanted
	}
	return b
}

func (c *limitedConn) Read(p []byte) (int, error) {
	c.reading.Store(true)
	n, err := c.Conn.Read(p)
	c.reading.Store(false)
	if n > 0 && !c.proven.Load() {
		c.mu.Lock()
		c.received += int64(n)
		_ = c.applyLocked()
		c.mu.Unlock()
	}
	return n, err
}

func (c *limitedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wanted = t
	return c.applyLocked()
}

func (c *limitedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(func() { c.l.release(c) })
	return err
}

// evict closes the connection for a newcomer; net/http's goroutine for it
// sees its read fail and ends.
func (c *limitedConn) evict() { _ = c.Close() }
