package pushlistener

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPOptions bound what a client can hold of the listener before it has
// proved anything. Zero fields take the defaults in brackets.
type HTTPOptions struct {
	// FirstByteTimeout closes a new connection that has sent nothing (3 s).
	FirstByteTimeout time.Duration
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
	// MaxConns caps the connections held at once (1024, and never more
	// than the process's descriptor limit leaves room for). At the cap a
	// new connection takes the place of the oldest one that has sent
	// nothing, else of the oldest idle one, else waits.
	MaxConns int
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
		o.MaxConns = 1024
	}
	// Leave descriptors for the cache file, the log and the connections
	// waiting to be accepted, or accept4 fails with EMFILE.
	if limit := openFileLimit(); limit > 0 {
		o.MaxConns = max(1, min(o.MaxConns, limit-64))
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
	lim := newLimitListener(ln, s.cfg.HTTP.MaxConns, s.cfg.HTTP.FirstByteTimeout)
	hs := s.NewHTTPServer()
	hs.ConnState = lim.connState
	s.ln, s.hs, s.serving = ln, hs, true
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

// limitListener caps the connections held at once. Unlike
// netutil.LimitListener, which stops accepting at the cap (so that idle
// connections of one client lock every other client out), it accepts and
// makes room: the oldest connection that has sent nothing goes first, then
// the oldest idle one between requests; only when every connection is busy
// with a request does it wait for one to end. A new connection that sends
// nothing for firstByte is closed.
type limitListener struct {
	net.Listener
	max       int
	firstByte time.Duration

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
	freed chan struct{} // a slot came free (buffered, 1)
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(ln net.Listener, max int, firstByte time.Duration) *limitListener {
	return &limitListener{Listener: ln, max: max, firstByte: firstByte, conns: make(map[*limitedConn]struct{}),
		freed: make(chan struct{}, 1), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &limitedConn{Conn: nc, l: l, accepted: time.Now()}
	c.firstByteBy = c.accepted.Add(l.firstByte)
	_ = nc.SetReadDeadline(c.firstByteBy)
	for {
		l.mu.Lock()
		if len(l.conns) < l.max {
			l.conns[c] = struct{}{}
			l.mu.Unlock()
			return c, nil
		}
		victim := l.victimLocked()
		l.mu.Unlock()
		if victim != nil {
			if !victim.spoke.Load() && hasPendingData(victim.Conn) {
				// Its request arrived and waits to be read: not silent.
				victim.spoke.Store(true)
				continue
			}
			victim.evict()
			continue
		}
		select {
		case <-l.freed:
		case <-l.done:
			_ = nc.Close()
			return nil, net.ErrClosed
		case <-time.After(100 * time.Millisecond):
			// A connection may have turned idle without freeing a slot.
		}
	}
}

// victimLocked picks the connection to close for a new one: the oldest
// that has sent nothing, else the oldest idle one.
func (l *limitListener) victimLocked() *limitedConn {
	var silent, idle *limitedConn
	for c := range l.conns {
		switch {
		case !c.spoke.Load():
			if silent == nil || c.accepted.Before(silent.accepted) {
				silent = c
			}
		case c.idle.Load():
			if idle == nil || c.idleSince.Load() < idle.idleSince.Load() {
				idle = c
			}
		}
	}
	if silent != nil {
		return silent
	}
	return idle
}

func (l *limitListener) release(c *limitedConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState follows net/http's view of each connection: only idle ones
// (between requests) may be closed for a newcomer once they have spoken.
func (l *limitListener) connState(nc net.Conn, st http.ConnState) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	c, ok := nc.(*limitedConn)
	if !ok {
		return
	}
	switch st {
	case http.StateIdle:
		c.idleSince.Store(time.Now().UnixNano())
		c.idle.Store(true)
	case http.StateActive:
		c.idle.Store(false)
	}
}

// limitedConn is a connection under the cap. Until it has sent a byte its
// read deadline is at most firstByteBy, whatever net/http asks for; the
// first byte brings back the deadline net/http asked for.
type limitedConn struct {
	net.Conn
	l           *limitListener
	accepted    time.Time
	firstByteBy time.Time
	spoke       atomic.Bool
	idle        atomic.Bool
	idleSince   atomic.Int64
	closeOnce   sync.Once

	mu     sync.Mutex
	wanted time.Time // the read deadline net/http asked for
}

func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.spoke.Load() {
		c.mu.Lock()
		c.spoke.Store(true)
		_ = c.Conn.SetReadDeadline(c.wanted)
		c.mu.Unlock()
	}
	return n, err
}

func (c *limitedConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wanted = t
	if !c.spoke.Load() && (t.IsZero() || t.After(c.firstByteBy)) {
		t = c.firstByteBy
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *limitedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { c.l.release(c) })
	return err
}

// evict closes the connection for a newcomer; net/http's goroutine for it
// sees the read fail and ends.
func (c *limitedConn) evict() { _ = c.Close() }
