package pushlistener

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The listener answers on a connection loop of its own rather than on
// net/http's server. net/http starts a goroutine per request to watch the
// connection while the handler runs and juggles read deadlines around it;
// with a response writer per request that is about 20 µs of CPU per push,
// a fifth of what a durable push costs on a 2-core machine
// (docs/store.md). The loop is deliberately narrow: one request at a time
// per connection, HTTP/1.0 and 1.1, a body framed by Content-Length or
// chunked, Expect: 100-continue. It is held to net/http's parser by
// FuzzParseRequestMatchesNetHTTP: whatever it accepts, net/http reads the
// same way; what it refuses that net/http would take carries
// requestError.stricter. Server.ServeHTTP still serves the same pushes
// behind any net/http server.

const (
	// maxHeaderBytes bounds a request's line and headers (and a chunked
	// body's trailers), as http.Server.MaxHeaderBytes would.
	maxHeaderBytes = 64 << 10
	// readTimeout is how long a request, head and body, may take to arrive
	// once it has begun; idleTimeout how long a kept-alive connection may
	// wait for the next one.
	readTimeout = 10 * time.Second
	idleTimeout = 2 * time.Minute
	// writeTimeout bounds writing an answer, counted from when the request
	// began, so a client that stops reading cannot hold a goroutine.
	writeTimeout = 30 * time.Second
)

// requestError is a request the loop refuses before any push handling:
// the answer's status and a fixed text that never echoes the input.
type requestError struct {
	status int
	text   string
	// stricter marks a request net/http would have taken; the loop
	// refuses it because its framing is ambiguous (RFC 9112 lets a server
	// reject these).
	stricter bool
}

func (e *requestError) Error() string { return e.text }

var (
	errRequestLine      = &requestError{status: http.StatusBadRequest, text: "malformed request line"}
	errVersion          = &requestError{status: http.StatusHTTPVersionNotSupported, text: "unsupported HTTP version"}
	errHeaderLine       = &requestError{status: http.StatusBadRequest, text: "malformed header line"}
	errHeaderTooLarge   = &requestError{status: http.StatusRequestHeaderFieldsTooLarge, text: "request headers larger than 64 KiB"}
	errHost             = &requestError{status: http.StatusBadRequest, text: "missing, repeated or malformed Host header"}
	errContentLength    = &requestError{status: http.StatusBadRequest, text: "malformed or conflicting Content-Length"}
	errTransferEncoding = &requestError{status: http.StatusNotImplemented, text: "unsupported Transfer-Encoding (only chunked)"}
	errExpect           = &requestError{status: http.StatusExpectationFailed, text: "unsupported Expect (only 100-continue)"}
	errFolded           = &requestError{status: http.StatusBadRequest, text: "folded header line (obsolete line folding)", stricter: true}
	errHTTP2Preface     = &requestError{status: http.StatusHTTPVersionNotSupported, text: "unsupported HTTP version", stricter: true}
	errMethodConnect    = &requestError{status: http.StatusMethodNotAllowed, text: "pushes are POSTed", stricter: true}
	errBothFramings     = &requestError{status: http.StatusBadRequest, text: "both Transfer-Encoding and Content-Length", stricter: true}
	errTrailer          = &requestError{status: http.StatusBadRequest, text: "malformed trailer line", stricter: true}
	errChunkedHTTP10    = &requestError{status: http.StatusBadRequest, text: "Transfer-Encoding in an HTTP/1.0 request", stricter: true}
)

// httpRequest is one request as the loop read it: its head parsed,
// its body still on the connection.
type httpRequest struct {
	method     string
	requestURI string // as net/http's Request.URL.RequestURI() gives it
	host       string
	header     http.Header // without Host, as net/http keeps it
	http11     bool
	close      bool  // the connection ends after the answer
	length     int64 // Content-Length; -1 with chunked
	chunked    bool
	expect100  bool
}

// readRequestHead reads a request line and its headers from br. A nil
// request with a nil error is impossible; io.EOF means the client closed
// between requests.
func readRequestHead(br *bufio.Reader) (*httpRequest, error) {
	budget := maxHeaderBytes
	var scratch []byte
	line, err := readLine(br, &scratch, &budget)
	if err != nil {
		return nil, err
	}
	method, rest, ok1 := strings.Cut(string(line), " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isToken(method) {
		return nil, errRequestLine
	}
	req := &httpRequest{method: method, header: make(http.Header, 8)}
	switch {
	case proto == "HTTP/1.1":
		req.http11 = true
	case proto == "HTTP/1.0":
	case len(proto) == 8 && strings.HasPrefix(proto, "HTTP/") && isDigit(proto[5]) && proto[6] == '.' && isDigit(proto[7]):
		if proto[5] != '1' {
			if method == "PRI" && target == "*" && proto == "HTTP/2.0" {
				return nil, errHTTP2Preface
			}
			return nil, errVersion
		}
		req.http11 = true // 1.2 to 1.9 read as 1.1
	default:
		return nil, errRequestLine
	}
	if method == http.MethodConnect {
		return nil, errMethodConnect // its authority-form target is no URL
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, errRequestLine
	}
	req.requestURI = u.RequestURI()

	var hosts, lengths, encodings, connection, expect []string
	for {
		line, err := readLine(br, &scratch, &budget)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, errFolded
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || !isTokenBytes(name) || !validFieldValue(value) {
			return nil, errHeaderLine
		}
		key := canonicalKey(name)
		v := string(bytes.Trim(value, " \t"))
		switch key {
		case "Host":
			hosts = append(hosts, v)
			continue // net/http moves Host out of the header map
		case "Content-Length":
			lengths = append(lengths, v)
		case "Transfer-Encoding":
			encodings = append(encodings, v)
		case "Connection":
			connection = append(connection, v)
		case "Expect":
			expect = append(expect, v)
		}
		req.header[key] = append(req.header[key], v)
	}

	req.host = u.Host
	if req.http11 && len(hosts) == 0 || len(hosts) > 1 || len(hosts) == 1 && !validHost(hosts[0]) {
		return nil, errHost
	}
	if req.host == "" && len(hosts) == 1 {
		req.host = hosts[0]
	}
	if err := req.frame(lengths, encodings); err != nil {
		return nil, err
	}
	// The header map a handler sees is net/http's: framing settled, the
	// duplicates of an agreeing Content-Length gone, Pragma: no-cache
	// read as Cache-Control too.
	delete(req.header, "Transfer-Encoding")
	if len(lengths) > 1 {
		req.header["Content-Length"] = lengths[:1]
	}
	if p := req.header["Pragma"]; len(p) > 0 && p[0] == "no-cache" && req.header["Cache-Control"] == nil {
		req.header["Cache-Control"] = []string{"no-cache"}
	}
	if req.http11 {
		req.close = hasToken(connection, "close")
	} else {
		req.close = hasToken(connection, "close") || !hasToken(connection, "keep-alive")
	}
	// As net/http: the first Expect value counts; 100-continue is
	// honoured for an HTTP/1.1 request with a body and ignored otherwise;
	// any other expectation fails.
	if len(expect) > 0 && expect[0] != "" {
		if !containsToken(expect[0], "100-continue") {
			return nil, errExpect
		}
		req.expect100 = req.http11 && (req.chunked || req.length > 0)
	}
	return req, nil
}

// frame settles how the body is delimited (RFC 9112 section 6): chunked,
// a Content-Length, or no body at all; a request never reads to the end
// of the connection.
func (req *httpRequest) frame(lengths, encodings []string) error {
	if len(encodings) > 0 {
		if !req.http11 {
			return errChunkedHTTP10
		}
		if len(encodings) > 1 || !asciiEqualFold(encodings[0], "chunked") {
			return errTransferEncoding
		}
		if len(lengths) > 0 {
			return errBothFramings
		}
		req.chunked, req.length = true, -1
		return nil
	}
	if len(lengths) == 0 {
		return nil
	}
	for _, l := range lengths[1:] {
		if l != lengths[0] {
			return errContentLength
		}
	}
	n, err := parseContentLength(lengths[0])
	if err != nil {
		return err
	}
	req.length = n
	return nil
}

func parseContentLength(s string) (int64, error) {
	if s == "" {
		return 0, errContentLength
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, errContentLength
		}
	}
	n, err := strconv.ParseUint(s, 10, 63) // leading zeros count for nothing
	if err != nil {
		return 0, errContentLength
	}
	return int64(n), nil
}

// readBody reads the request's body if it is at most limit bytes. A
// larger one is reported too large: a declared length is refused before
// a byte is read (nothing is allocated on a client's say-so), a chunked
// body once limit+1 bytes have come, and the rest is left unread.
func (req *httpRequest) readBody(br *bufio.Reader, limit int64) (body []byte, tooLarge bool, err error) {
	if !req.chunked {
		if req.length > limit {
			return nil, true, nil
		}
		body, err := readUpTo(br, req.length)
		if err != nil {
			return body, false, noEOF(err)
		}
		return body, false, nil
	}
	body, err = readUpTo(httputil.NewChunkedReader(br), limit+1)
	if int64(len(body)) > limit {
		return body[:limit], true, nil
	}
	if !errors.Is(err, io.EOF) {
		return body, false, fmt.Errorf("chunked encoding: %w", noEOF(err))
	}
	return body, false, readTrailers(br)
}

// readUpTo reads n bytes from r (fewer if r ends first, with its error,
// io.EOF included). The buffer starts at 64 KiB at most and grows with
// what arrives, so a length a client merely claims costs no memory.
func readUpTo(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, 64<<10))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, int(min(n, 2*int64(cap(buf))))-len(buf))
		}
		m, err := r.Read(buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+m]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// readTrailers reads and drops the trailer section after a chunked body
// (a push carries nothing there), as net/http reads it: an empty section
// must be CRLF, and a longer one must end (CRLF CRLF) within the read
// buffer, or the body is refused.
func readTrailers(br *bufio.Reader) error {
	end, err := br.Peek(2)
	if string(end) == "\r\n" {
		_, _ = br.Discard(2)
		return nil
	}
	if len(end) < 2 {
		return fmt.Errorf("trailers: %w", noEOF(err))
	}
	if !doubleCRLFAhead(br) {
		return errors.New("trailers: longer than the read buffer or unterminated")
	}
	budget := maxHeaderBytes
	var scratch []byte
	for {
		line, err := readLine(br, &scratch, &budget)
		if err != nil {
			return fmt.Errorf("trailers: %w", err)
		}
		if len(line) == 0 {
			return nil
		}
		if name, value, ok := bytes.Cut(line, []byte(":")); !ok || !isTokenBytes(name) || !validFieldValue(value) {
			return errTrailer
		}
	}
}

// doubleCRLFAhead reports whether CRLF CRLF comes within the reader's
// buffer, peeking no further than it holds.
func doubleCRLFAhead(br *bufio.Reader) bool {
	for peekSize := 4; ; peekSize++ {
		buf, err := br.Peek(peekSize)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// readLine returns the next line without its CRLF (or bare LF, which
// net/http accepts too), charging its length to budget. The line is valid
// until the next read.
func readLine(br *bufio.Reader, scratch *[]byte, budget *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		*scratch = append((*scratch)[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(*scratch) <= *budget {
			line, err = br.ReadSlice('\n')
			*scratch = append(*scratch, line...)
		}
		line = *scratch
	}
	*budget -= len(line)
	if *budget < 0 {
		return nil, errHeaderTooLarge
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// noEOF turns the end of the input inside a request into the error it is.
func noEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isTokenByte reports whether c may appear in a method or a header name
// (RFC 9110 section 5.6.2).
func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c):
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenByte(s[i]) {
			return false
		}
	}
	return s != ""
}

func isTokenBytes(b []byte) bool {
	for _, c := range b {
		if !isTokenByte(c) {
			return false
		}
	}
	return len(b) > 0
}

// validFieldValue refuses control characters other than tab, as net/http
// does; bytes from 0x80 up (obs-text) pass.
func validFieldValue(v []byte) bool {
	for _, c := range v {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHost accepts what a Host header may hold: a registered name or IP
// literal and a port, with percent-encoding (the characters net/http
// allows there).
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c):
		case strings.IndexByte("!$%&'()*+,-.:;=[]_~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// hasToken reports whether a comma-separated header holds token, in any case.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			if asciiEqualFold(strings.Trim(part, " \t"), token) {
				return true
			}
		}
	}
	return false
}

// asciiEqualFold compares a with the ASCII token b in ASCII case only, as
// HTTP does: Unicode folding alone would read "chun\u212Aed" (a Kelvin
// sign) as chunked, which net/http does not, and a framing the two read
// apart is a smuggling hole. Any non-ASCII rune takes more than one byte,
// so equal lengths leave strings.EqualFold nothing but ASCII to fold.
func asciiEqualFold(a, b string) bool {
	return len(a) == len(b) && strings.EqualFold(a, b)
}

// containsToken reports whether token occurs in v between spaces, tabs,
// commas or the ends, in any case: net/http's test for Expect.
func containsToken(v, token string) bool {
	boundary := func(c byte) bool { return c == ' ' || c == ',' || c == '\t' }
	for i := 0; i+len(token) <= len(v); i++ {
		if (i == 0 || boundary(v[i-1])) && (i+len(token) == len(v) || boundary(v[i+len(token)])) &&
			asciiEqualFold(v[i:i+len(token)], token) {
			return true
		}
	}
	return false
}

// commonKeys interns the header names a push request carries, so reading
// them allocates nothing. It is only ever read.
var commonKeys = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{"Accept", "Accept-Encoding", "Authorization", "Connection", "Content-Length",
		"Content-Type", "Culture", "Expect", "Host", "Software", "Transfer-Encoding", "User-Agent", "X-Forwarded-For"} {
		m[k] = k
	}
	return m
}()

// canonicalKey is net/http's canonical form of a valid header name
// (Content-Type), without allocating for the common ones.
func canonicalKey(name []byte) string {
	var buf [64]byte
	if len(name) > len(buf) {
		return http.CanonicalHeaderKey(string(name))
	}
	upper := true
	for i, c := range name {
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[i] = c
		upper = c == '-'
	}
	key := buf[:len(name)]
	if k, ok := commonKeys[string(key)]; ok {
		return k
	}
	return string(key)
}

// conn is one client connection of the loop.
type conn struct {
	srv *Server
	nc  net.Conn
	br  *bufio.Reader
	bw  *bufio.Writer
	// state is connIdle between requests and connActive while one is
	// read or answered; Shutdown closes idle connections only.
	state atomicState
}

// serve answers requests on c until the client leaves, a request asks to
// close, an error ends the connection, or the server shuts down.
func (c *conn) serve(ctx context.Context) {
	defer c.srv.running.Done()
	defer func() {
		if v := recover(); v != nil {
			c.srv.cfg.Logf("connection from %s: internal error: %v", c.nc.RemoteAddr(), v)
		}
		c.srv.forget(c)
		_ = c.nc.Close()
	}()
	remote := c.nc.RemoteAddr().String()
	for {
		if c.br.Buffered() == 0 {
			if err := c.nc.SetReadDeadline(time.Now().Add(idleTimeout)); err != nil {
				return
			}
			if _, err := c.br.Peek(1); err != nil {
				return
			}
		}
		if !c.state.activate() {
			return // Shutdown closed the connection meanwhile
		}
		start := time.Now()
		if err := c.nc.SetReadDeadline(start.Add(readTimeout)); err != nil {
			return
		}
		if err := c.nc.SetWriteDeadline(start.Add(writeTimeout)); err != nil {
			return
		}
		req, err := readRequestHead(c.br)
		if err != nil {
			var re *requestError
			if errors.As(err, &re) {
				c.srv.cfg.Logf("refused a request from %s: %s", remote, re.text)
				if c.writeAnswer(nil, re.status, re.text, true) {
					c.lingeringClose()
				}
			}
			return
		}
		if !c.handle(ctx, req, remote) || c.srv.shuttingDown.Load() {
			return
		}
		if !c.state.idle() {
			return
		}
	}
}

// handle answers one request; false means the connection must end.
func (c *conn) handle(ctx context.Context, req *httpRequest, remote string) bool {
	hasBody := req.chunked || req.length > 0
	if req.method != http.MethodPost {
		// The body is left unread, so the connection cannot carry on
		// unless there was none.
		ok := c.writeAnswer(req, http.StatusMethodNotAllowed, "pushes are POSTed", req.close || hasBody)
		if ok && hasBody {
			c.lingeringClose()
		}
		return ok && !req.close && !hasBody
	}
	if req.expect100 && hasBody && req.length <= MaxBody {
		if _, err := c.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n"); err != nil {
			return false
		}
		if err := c.bw.Flush(); err != nil {
			return false
		}
	}
	body, tooLarge, bodyErr := req.readBody(c.br, MaxBody)
	pr := &pushRequest{method: req.method, requestURI: req.requestURI, host: req.host, remoteAddr: remote,
		header: req.header, body: body, tooLarge: tooLarge, bodyErr: bodyErr}
	status, text := c.srv.handle(ctx, pr)
	// After a body that could not be read whole, or one too large, the
	// connection is out of step with the client: answer and close.
	unread := bodyErr != nil || tooLarge
	closeAfter := req.close || unread || c.srv.shuttingDown.Load()
	ok := c.writeAnswer(req, status, text, closeAfter)
	if ok && unread {
		c.lingeringClose()
	}
	return ok && !closeAfter
}

// lingeringClose ends a connection whose client may still be sending (a
// refused head, a body left unread): closing at once would make the
// kernel answer that data with a reset, which can destroy the answer
// before the client reads it. So the sending side closes first and what
// still arrives is read and dropped for a moment, as net/http does.
func (c *conn) lingeringClose() {
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return
	}
	_ = tc.CloseWrite()
	_ = tc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, _ = io.CopyN(io.Discard, tc, 4<<20)
}

// writeAnswer writes one response: an empty 200 or a status with its text,
// as http.Error would. req is nil when the request could not be read.
func (c *conn) writeAnswer(req *httpRequest, status int, text string, closeAfter bool) bool {
	w := c.bw
	var buf [40]byte
	proto := "HTTP/1.1 "
	if req != nil && !req.http11 {
		proto = "HTTP/1.0 "
	}
	w.WriteString(proto)
	w.Write(strconv.AppendInt(buf[:0], int64(status), 10))
	w.WriteByte(' ')
	w.WriteString(http.StatusText(status))
	w.WriteString("\r\nDate: ")
	w.Write(time.Now().UTC().AppendFormat(buf[:0], http.TimeFormat))
	if status == http.StatusMethodNotAllowed {
		w.WriteString("\r\nAllow: POST")
	}
	switch {
	case closeAfter:
		w.WriteString("\r\nConnection: close")
	case req != nil && !req.http11:
		w.WriteString("\r\nConnection: keep-alive")
	}
	if status == http.StatusOK {
		w.WriteString("\r\nContent-Length: 0\r\n\r\n")
		return w.Flush() == nil
	}
	w.WriteString("\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ")
	w.Write(strconv.AppendInt(buf[:0], int64(len(text)+1), 10))
	w.WriteString("\r\n\r\n")
	// The answer to HEAD has no body, whatever its Content-Length says;
	// a body there would be read as the next answer.
	if req == nil || req.method != http.MethodHead {
		w.WriteString(text)
		w.WriteByte('\n')
	}
	return w.Flush() == nil
}
