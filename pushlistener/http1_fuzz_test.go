package pushlistener

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// seenRequest is what a handler learns of one request: the parts a push
// is stored with and how it was framed.
type seenRequest struct {
	Method, RequestURI, Host string
	Header                   http.Header
	Body                     string
	BodyErr                  bool
	Close, Expect100         bool
}

func (r seenRequest) String() string {
	return fmt.Sprintf("%s %q host %q close=%v expect100=%v header=%v body(%d)=%q err=%v",
		r.Method, r.RequestURI, r.Host, r.Close, r.Expect100, r.Header, len(r.Body), r.Body, r.BodyErr)
}

var errClosedAsAsked = errors.New("the request asked to close the connection")

// readByOwnLoop reads raw as the loop does, request after request, until
// the loop would end the connection; stop is the error that ended it
// (io.EOF when the input simply ran out).
func readByOwnLoop(raw []byte) (seen []seenRequest, stop error) {
	br := bufio.NewReaderSize(bytes.NewReader(raw), 4<<10)
	for {
		if _, err := br.Peek(1); err != nil {
			return seen, io.EOF
		}
		req, err := readRequestHead(br)
		if err != nil {
			return seen, err
		}
		r := seenRequest{Method: req.method, RequestURI: req.requestURI, Host: req.host, Header: req.header,
			Close: req.close, Expect100: req.expect100}
		if req.method != http.MethodPost {
			seen = append(seen, r)
			if req.chunked || req.length > 0 {
				return seen, errors.New("body left unread")
			}
		} else {
			body, tooLarge, err := req.readBody(br, MaxBody)
			var re *requestError
			if tooLarge || errors.As(err, &re) && re.stricter {
				// The loop refuses what net/http may still take.
				return seen, errors.Join(errors.New("body not read whole"), err)
			}
			r.Body, r.BodyErr = string(body), err != nil
			seen = append(seen, r)
			if err != nil {
				return seen, errors.New("body not read whole")
			}
		}
		if req.close {
			return seen, errClosedAsAsked
		}
	}
}

// readByNetHTTP serves raw with net/http's own server over an in-memory
// connection, with a handler that reads a POST's body as the listener does
// and notes every request it is handed.
func readByNetHTTP(t *testing.T, raw []byte) []seenRequest {
	var seen []seenRequest
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seenRequest{Method: r.Method, RequestURI: r.URL.RequestURI(), Host: r.Host, Header: r.Header.Clone(), Close: r.Close,
			Expect100: containsToken(r.Header.Get("Expect"), "100-continue") && r.ProtoAtLeast(1, 1) && r.ContentLength != 0}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
			s.Body, s.BodyErr = string(body), err != nil
		}
		seen = append(seen, s)
	})
	c := &memConn{r: bytes.NewReader(raw), closed: make(chan struct{})}
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	served := make(chan struct{})
	go func() { _ = srv.Serve(newOneConnListener(c)); close(served) }()
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("net/http never closed the connection for %q", raw)
	}
	_ = srv.Close()
	<-served
	return seen
}

// FuzzParseRequestMatchesNetHTTP holds the listener's HTTP loop to
// net/http's server: for any bytes a client sends, every request the loop
// hands on is one net/http would hand a handler too, read the same way
// (method, target, Host, headers, body, framing, keep-alive). The loop may
// stop earlier than net/http only for a reason it marks stricter, or where
// it closes a connection after a body it leaves unread.
func FuzzParseRequestMatchesNetHTTP(f *testing.F) {
	for _, s := range []string{
		"POST /push HTTP/1.1\r\nHost: a:1\r\nContent-Length: 2\r\nAuthorization: hmac k:s:n:1\r\n\r\n{}",
		"POST /push HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}POST /p?x=1 HTTP/1.1\r\nHost: b\r\nContent-Length: 0\r\n\r\n",
		"POST /push HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\nT: 1\r\n\r\n",
		"POST /push HTTP/1.0\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\nxPOST / HTTP/1.0\r\n\r\n",
		"POST http://h:8/push?q HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx",
		"GET / HTTP/1.1\nHost: a\nPragma: no-cache\nContent-Length: 1\nContent-Length: 1\n\nx",
		"POST / HTTP/1.1\r\nHost: a\r\nX: 1\r\n 2\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: [::1]:80\r\nExpect: x, 100-continue\r\nConnection: x, close\r\nContent-Length: 0\r\n\r\n",
		// Found in review: Unicode case folding, bare-LF trailers, 19-digit lengths, 1.0 keep-alive with close.
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chun\u212Aed\r\n\r\n1\r\nx\r\n0\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: 1\n\nPOST / HTTP/1.1\nHost: b\n\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0000000000000000001\r\n\r\nx",
		"POST / HTTP/1.0\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\nPOST / HTTP/1.0\r\n\r\n",
		"POST / HTTP/1.0\r\nConnection: \u212Aeep-alive\r\nContent-Length: 0\r\n\r\nPOST / HTTP/1.0\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ours, stop := readByOwnLoop(raw)
		theirs := readByNetHTTP(t, raw)
		for i, r := range ours {
			if i >= len(theirs) {
				t.Fatalf("request %d: the loop read %v; net/http handed on only %d requests", i+1, r, len(theirs))
			}
			if !reflect.DeepEqual(r, theirs[i]) {
				t.Fatalf("request %d:\n loop:     %v\n net/http: %v", i+1, r, theirs[i])
			}
		}
		if len(theirs) > len(ours) {
			var re *requestError
			switch {
			case errors.As(stop, &re) && (re.stricter || re == errHeaderTooLarge):
			case stop != nil && strings.HasPrefix(stop.Error(), "body"):
			case stop == errClosedAsAsked:
				// Both read the request as asking to close; net/http still
				// keeps an HTTP/1.0 connection whose first Connection value
				// holds keep-alive, even beside close (RFC 9112 section 9.6
				// says close).
			default:
				t.Fatalf("the loop stopped after %d requests (%v); net/http went on to %v", len(ours), stop, theirs[len(ours)])
			}
		}
	})
}

// memConn is a connection whose client sent raw and then closed its side.
type memConn struct {
	r      *bytes.Reader
	out    bytes.Buffer
	closed chan struct{}
	once   sync.Once
}

func (c *memConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error)      { return c.out.Write(p) }
func (c *memConn) Close() error                     { c.once.Do(func() { close(c.closed) }); return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// oneConnListener hands out one connection, then waits to be closed.
type oneConnListener struct {
	c     chan net.Conn
	done  chan struct{}
	close sync.Once
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{c: make(chan net.Conn, 1), done: make(chan struct{})}
	l.c <- c
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *oneConnListener) Close() error   { l.close.Do(func() { close(l.done) }); return nil }
func (l *oneConnListener) Addr() net.Addr { return &net.TCPAddr{} }
