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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// signedHead is the head of a signed push request for body to addr; extra
// headers (full lines with CRLF) go before the blank line, and framing
// ("" for Content-Length) replaces the Content-Length line.
func signedHead(addr string, body []byte, proto, framing, extra string) string {
	auth := api.Sign(creds, http.MethodPost, addr+"/push", body, api.NewNonce(), time.Now().Unix()).String()
	if framing == "" {
		framing = fmt.Sprintf("Content-Length: %d\r\n", len(body))
	}
	return fmt.Sprintf("POST /push %s\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: %s\r\n%s%s\r\n",
		proto, addr, auth, framing, extra)
}

func chunked(body []byte, size int) string {
	var b strings.Builder
	for len(body) > 0 {
		n := min(size, len(body))
		fmt.Fprintf(&b, "%x;ext=1\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\nX-Trailer: t\r\n\r\n")
	return b.String()
}

// TestOwnLoopRequests sends raw requests to the listener's HTTP loop and
// checks each answer, whether the connection stays open, and what was
// stored or logged as rejected.
func TestOwnLoopRequests(t *testing.T) {
	var mu sync.Mutex
	var events []Event
	db, url := newListener(t, store.Options{NoSync: true}, func(e Event) { mu.Lock(); events = append(events, e); mu.Unlock() })
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/push")
	n := 100
	push := func() []byte { n++; return encode(t, giftCardPush(n, 100)) }

	type answer struct {
		status int
		header string // "Name: value" the answer must carry, if set
	}
	tests := []struct {
		name    string
		send    func() string
		answers []answer
		open    bool   // the connection stays open afterwards
		stored  int    // pushes stored by the request
		reason  string // part of a rejected push's logged reason
	}{
		{"push", func() string { b := push(); return signedHead(addr, b, "HTTP/1.1", "", "") + string(b) },
			[]answer{{200, "Content-Length: 0"}}, true, 1, ""},
		{"two pipelined pushes", func() string {
			a, b := push(), push()
			return signedHead(addr, a, "HTTP/1.1", "", "") + string(a) + signedHead(addr, b, "HTTP/1.1", "", "") + string(b)
		}, []answer{{200, ""}, {200, ""}}, true, 2, ""},
		{"chunked push with extensions and a trailer", func() string {
			b := push()
			return signedHead(addr, b, "HTTP/1.1", "Transfer-Encoding: chunked\r\n", "") + chunked(b, 37)
		}, []answer{{200, ""}}, true, 1, ""},
		{"bare LF line endings", func() string {
			b := push()
			return strings.ReplaceAll(signedHead(addr, b, "HTTP/1.1", "", ""), "\r\n", "\n") + string(b)
		}, []answer{{200, ""}}, true, 1, ""},
		{"HTTP/1.0 closes", func() string { b := push(); return signedHead(addr, b, "HTTP/1.0", "", "") + string(b) },
			[]answer{{200, "Connection: close"}}, false, 1, ""},
		{"HTTP/1.0 keep-alive", func() string {
			b := push()
			return signedHead(addr, b, "HTTP/1.0", "", "Connection: keep-alive\r\n") + string(b)
		}, []answer{{200, "Connection: keep-alive"}}, true, 1, ""},
		{"Connection: close", func() string {
			b := push()
			return signedHead(addr, b, "HTTP/1.1", "", "Connection: Close\r\n") + string(b)
		},
			[]answer{{200, "Connection: close"}}, false, 1, ""},
		{"GET", func() string { return "GET /push HTTP/1.1\r\nHost: " + addr + "\r\n\r\n" },
			[]answer{{405, "Allow: POST"}}, true, 0, ""},
		{"HEAD gets no body", func() string { return "HEAD /push HTTP/1.1\r\nHost: " + addr + "\r\n\r\n" },
			[]answer{{405, "Method: HEAD"}}, true, 0, ""},
		{"a claimed length over 1 MiB is refused unread", func() string {
			return signedHead(addr, nil, "HTTP/1.1", "Content-Length: 999999999999\r\n", "Expect: 100-continue\r\n")
		}, []answer{{413, "Connection: close"}}, false, 0, "larger than 1 MiB"},
		{"Transfer-Encoding with a Kelvin sign", func() string {
			return "POST /push HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chun\u212Aed\r\n\r\n1\r\nx\r\n0\r\n\r\n"
		}, []answer{{501, ""}}, false, 0, ""},
		{"PUT with a body", func() string { return "PUT /push HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 3\r\n\r\nabc" },
			[]answer{{405, "Connection: close"}}, false, 0, ""},
		{"malformed request line", func() string { return "POST /push\r\nHost: x\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"HTTP/2.0", func() string { return "POST /push HTTP/2.0\r\nHost: x\r\n\r\n" }, []answer{{505, ""}}, false, 0, ""},
		{"no Host", func() string { return "POST /push HTTP/1.1\r\nContent-Length: 0\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"two Hosts", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"header without a colon", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nBroken\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"space before the colon", func() string { return "POST /push HTTP/1.1\r\nHost : a\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"folded header", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"chunked and Content-Length", func() string {
			return "POST /push HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
		}, []answer{{400, ""}}, false, 0, ""},
		{"gzip transfer coding", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n" }, []answer{{501, ""}}, false, 0, ""},
		{"conflicting Content-Lengths", func() string {
			return "POST /push HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"
		}, []answer{{400, ""}}, false, 0, ""},
		{"signed Content-Length", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc" }, []answer{{400, ""}}, false, 0, ""},
		{"unknown expectation", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nExpect: magic\r\nContent-Length: 0\r\n\r\n" }, []answer{{417, ""}}, false, 0, ""},
		{"headers over 64 KiB", func() string {
			return "POST /push HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("b", maxHeaderBytes) + "\r\n\r\n"
		}, []answer{{431, ""}}, false, 0, ""},
		{"control character in a header", func() string { return "POST /push HTTP/1.1\r\nHost: a\r\nX-A: \x1b[31m\r\n\r\n" }, []answer{{400, ""}}, false, 0, ""},
		{"body over 1 MiB", func() string {
			big := bytes.Repeat([]byte("x"), MaxBody+10)
			return signedHead(addr, big, "HTTP/1.1", "", "") + string(big)
		}, []answer{{413, "Connection: close"}}, false, 0, "larger than 1 MiB"},
		{"chunked body over 1 MiB", func() string {
			big := bytes.Repeat([]byte("x"), MaxBody+10)
			return signedHead(addr, big, "HTTP/1.1", "Transfer-Encoding: chunked\r\n", "") + chunked(big, 64<<10)
		}, []answer{{413, "Connection: close"}}, false, 0, "larger than 1 MiB"},
		{"bad chunk size", func() string {
			return signedHead(addr, nil, "HTTP/1.1", "Transfer-Encoding: chunked\r\n", "") + "zz\r\nabc\r\n0\r\n\r\n"
		}, []answer{{400, "Connection: close"}}, false, 0, "reading the body: chunked encoding"},
		{"bad signature", func() string {
			b := push()
			h := strings.Replace(signedHead(addr, b, "HTTP/1.1", "", ""), "Authorization: hmac ", "Authorization: hmac x", 1)
			return h + string(b)
		}, []answer{{401, "Content-Type: text/plain; charset=utf-8"}}, true, 0, "signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := db.Counts()
			rejectedBefore, _ := db.RejectedPushes(0)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			go func() { _, _ = io.WriteString(c, tc.send()) }()
			br := bufio.NewReader(c)
			for i, want := range tc.answers {
				var req *http.Request
				if want.header == "Method: HEAD" {
					req = &http.Request{Method: http.MethodHead}
				}
				resp, err := http.ReadResponse(br, req)
				if err != nil {
					t.Fatalf("answer %d: %v", i+1, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want.status {
					t.Fatalf("answer %d: HTTP %d %q, want %d", i+1, resp.StatusCode, body, want.status)
				}
				if resp.Header.Get("Date") == "" {
					t.Errorf("answer %d has no Date", i+1)
				}
				switch {
				case want.header == "Method: HEAD":
					if resp.ContentLength <= 0 {
						t.Errorf("answer %d to HEAD: Content-Length %d", i+1, resp.ContentLength)
					}
				case want.header == "Connection: close":
					if !resp.Close {
						t.Errorf("answer %d does not say Connection: close", i+1)
					}
				default:
					if k, v, ok := strings.Cut(want.header, ": "); ok && resp.Header.Get(k) != v {
						t.Errorf("answer %d: %s = %q, want %q", i+1, k, resp.Header.Get(k), v)
					}
				}
			}
			// An open connection takes another request; a closed one ends.
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if tc.open {
				b := push()
				tc.stored++
				if _, err := io.WriteString(c, signedHead(addr, b, "HTTP/1.1", "", "")+string(b)); err != nil {
					t.Fatal(err)
				}
				if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
					t.Fatalf("next request on the same connection: %v %v", resp, err)
				}
			} else if _, err := br.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("connection still open after the answer (read: %v)", err)
			}
			after, _ := db.Counts()
			if got := int(after.Pushes - before.Pushes); got != tc.stored {
				t.Errorf("stored %d pushes, want %d", got, tc.stored)
			}
			rejected, _ := db.RejectedPushes(0)
			if tc.reason != "" {
				if len(rejected) != len(rejectedBefore)+1 || !strings.Contains(rejected[0].Reason, tc.reason) {
					t.Errorf("rejected log: %d entries (was %d), newest %+v; want one more with %q", len(rejected), len(rejectedBefore), rejected[0].Reason, tc.reason)
				}
			} else if len(rejected) != len(rejectedBefore) {
				t.Errorf("rejected log grew from %d to %d", len(rejectedBefore), len(rejected))
			}
		})
	}
}

// TestOwnLoopExpectContinue: a client that waits for 100 Continue before it
// sends the body gets it, then the answer.
func TestOwnLoopExpectContinue(t *testing.T) {
	db, url := newListener(t, store.Options{NoSync: true}, nil)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/push")
	body := encode(t, giftCardPush(7, 100))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, signedHead(addr, body, "HTTP/1.1", "", "Expect: 100-continue\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("before the body: %v %v, want 100 Continue", resp, err)
	}
	if _, err := c.Write(body); err != nil {
		t.Fatal(err)
	}
	if resp, err = http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the body: %v %v", resp, err)
	}
	if n, _ := db.Counts(); n.Pushes != 1 {
		t.Errorf("stored %d pushes", n.Pushes)
	}
}

// TestOwnLoopTruncatedBody: a client that stops half-way through a body
// gets its push logged as rejected, and nothing is applied.
func TestOwnLoopTruncatedBody(t *testing.T) {
	db, url := newListener(t, store.Options{NoSync: true}, nil)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/push")
	body := encode(t, giftCardPush(8, 100))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, signedHead(addr, body, "HTTP/1.1", "", "")+string(body[:20])); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("answer: %v %v, want 400", resp, err)
	}
	rejected, err := db.RejectedPushes(0)
	if err != nil || len(rejected) != 1 || !strings.Contains(rejected[0].Reason, "reading the body") {
		t.Fatalf("rejected = %+v, %v", rejected, err)
	}
	if n, _ := db.Counts(); n.Pushes != 0 {
		t.Errorf("stored %d pushes", n.Pushes)
	}
}

// TestShutdownWaitsForPushInFlight: Shutdown closes idle connections at
// once but lets a push that is being read finish and be answered, whether
// Serve's context ended or Shutdown was called directly.
func TestShutdownWaitsForPushInFlight(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "context ends", true: "Shutdown called"}[direct], func(t *testing.T) {
			testShutdownWaits(t, direct)
		})
	}
}

func testShutdownWaits(t *testing.T, direct bool) {
	db, srv := openServer(t, store.Options{NoSync: true}, Config{})
	bound, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := bound.String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	body := encode(t, giftCardPush(9, 100))
	head := signedHead(addr, body, "HTTP/1.1", "", "")
	if _, err := io.WriteString(busy, head+string(body[:10])); err != nil {
		t.Fatal(err)
	}
	// Wait until the listener is reading that request before shutting down.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if activeConns(srv) == 1 || time.Now().After(deadline) {
			break
		}
	}
	shutdown := make(chan error, 1)
	if direct {
		go func() { shutdown <- srv.Shutdown(context.Background()) }()
	} else {
		cancel()
		shutdown <- nil
	}
	_ = idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idle.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("idle connection: read %v, want EOF (closed by Shutdown)", err)
	}
	if _, err := busy.Write(body[10:]); err != nil {
		t.Fatal(err)
	}
	_ = busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || resp.StatusCode != 200 || !resp.Close {
		t.Fatalf("push in flight: %v %v, want 200 with Connection: close", resp, err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if n, _ := db.Counts(); n.Pushes != 1 {
		t.Errorf("stored %d pushes", n.Pushes)
	}
}

// failingListener accepts one connection, then fails for good.
type failingListener struct {
	net.Listener
	accepted bool
}

func (l *failingListener) Accept() (net.Conn, error) {
	if !l.accepted {
		l.accepted = true
		return l.Listener.Accept()
	}
	return nil, errors.New("listener broke")
}

// TestServeListenerFails: when the listener breaks, Serve says why and
// leaves nothing behind: the port is closed and so are the connections.
func TestServeListenerFails(t *testing.T) {
	_, srv := openServer(t, store.Options{NoSync: true}, Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := srv.ServeListener(context.Background(), &failingListener{Listener: ln}); err == nil || !strings.Contains(err.Error(), "listener broke") {
		t.Fatalf("ServeListener = %v, want the listener's error", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection after Serve returned: read %v, want EOF", err)
	}
	if c2, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c2.Close()
		t.Error("the port still accepts connections")
	}
}

func activeConns(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.state.v.Load() == connActive {
			n++
		}
	}
	return n
}
