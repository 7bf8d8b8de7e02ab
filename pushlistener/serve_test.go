package pushlistener

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/internal/testcert"
	"paydesk/store"
)

// serve starts srv on a loopback port with Serve and returns its address;
// the test's end stops it.
func serve(t testing.TB, srv *Server) string {
	t.Helper()
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return addr.String()
}

// rawSigned is a signed push to addr as the bytes of an HTTP/1.1 request.
func rawSigned(t testing.TB, addr string, n int) (head, body []byte) {
	t.Helper()
	body = encode(t, giftCardPush(n, 100))
	req := signedPost(t, "http://"+addr+"/push", body, creds, time.Now().Unix())
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	return raw[:len(raw)-len(body)], body
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	// The listener tells when it has read what a connection sent, so that
	// the shutdown starts only once the push in flight is in its hands.
	seen := &readListener{Listener: ln, reads: make(chan connRead, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListener(ctx, seen) }()

	// An idle connection: one push answered, kept alive.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	head, body := rawSigned(t, addr, 8)
	if _, err := idle.Write(append(head, body...)); err != nil {
		t.Fatal(err)
	}
	idleR := bufio.NewReader(idle)
	if resp, err := http.ReadResponse(idleR, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first push: %v %v", resp, err)
	}
	busy, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	head, body = rawSigned(t, addr, 9)
	if _, err := busy.Write(append(head, body[:10]...)); err != nil {
		t.Fatal(err)
	}
	// The handler has the head and the first bytes of the body and waits
	// for the rest.
	for waiting := false; !waiting; {
		select {
		case r := <-seen.reads:
			waiting = r.from == busy.LocalAddr().String() && r.got >= len(head)+10
		case <-time.After(stuckAfter):
			t.Fatal("the listener never waited for the rest of the push in flight")
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
	if _, err := idleR.ReadByte(); err != io.EOF {
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
	if n, _ := db.Counts(t.Context()); n.Pushes != 2 {
		t.Errorf("stored %d pushes", n.Pushes)
	}
}

// readListener reports each read that a connection it accepted starts,
// with the bytes the connection delivered before it: a read that starts
// after the whole request head and some of the body is the handler
// waiting for the rest of the body.
type readListener struct {
	net.Listener
	reads chan connRead
}

type connRead struct {
	from string // the client's address
	got  int    // bytes read before this read
}

func (l *readListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &readConn{Conn: c, reads: l.reads}, nil
}

type readConn struct {
	net.Conn
	reads chan connRead
	got   int // only the connection's reading goroutine touches it
}

func (c *readConn) Read(p []byte) (int, error) {
	select {
	case c.reads <- connRead{from: c.RemoteAddr().String(), got: c.got}:
	default: // nobody waits for this one
	}
	n, err := c.Conn.Read(p)
	c.got += n
	return n, err
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

// TestSilentConnectionsCannotLockOut (F1): connections that send nothing
// are closed by the listener after the first-byte deadline, and at the
// connection cap a newcomer takes the place of a silent one, so signed
// pushes on new connections are answered while a client holds many more
// connections than the cap. The second half gives the silent connections
// first-byte and header deadlines longer than the test's: a push is answered only if
// it takes a silent connection's place, and the client's timeout is one
// that only a stuck listener reaches, so a slow machine cannot fail it.
func TestSilentConnectionsCannotLockOut(t *testing.T) {
	t.Run("first-byte deadline", func(t *testing.T) {
		_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: HTTPOptions{FirstByteTimeout: 500 * time.Millisecond}})
		addr := serve(t, srv)
		one, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer one.Close()
		// The listener closes it (EOF); our own deadline, a timeout error,
		// means it kept the connection.
		_ = one.SetReadDeadline(time.Now().Add(stuckAfter))
		if _, err := one.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("a silent connection: read %v, want EOF (closed by the listener after 0.5 s)", err)
		}
	})
	t.Run("newcomers take a silent one's place", func(t *testing.T) {
		// No deadline closes a silent connection within the test (net/http's
		// header and request deadlines bound the first-byte one too).
		never := 2 * stuckAfter
		_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: HTTPOptions{MaxConns: 20,
			FirstByteTimeout: never, ReadHeaderTimeout: never, ReadTimeout: never}})
		addr := serve(t, srv)
		var silent []net.Conn
		defer func() {
			for _, c := range silent {
				c.Close()
			}
		}()
		for range 200 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			silent = append(silent, c)
		}
		client := &http.Client{Timeout: stuckAfter, Transport: &http.Transport{DisableKeepAlives: true}}
		for i := range 10 {
			resp, err := client.Do(signedPost(t, "http://"+addr+"/push", encode(t, giftCardPush(100+i, 100)), creds, time.Now().Unix()))
			if err != nil {
				t.Fatalf("push %d with 200 silent connections open: %v", i, err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("push %d: HTTP %d", i, resp.StatusCode)
			}
		}
	})
}

// TestUnsignedRequestsCostNothing (F2): unsigned requests are refused
// before their body is read or decoded; what the cache keeps of them is
// bounded and aggregated, so a flood of small ones cannot erase the
// evidence of an earlier forgery, and Observe sees them at a bounded rate
// with the rest counted.
func TestUnsignedRequestsCostNothing(t *testing.T) {
	var mu sync.Mutex
	var shown, summarised int
	var events []Event
	db, srv := openServer(t, store.Options{}, Config{RejectLines: 5, Observe: func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		summarised += e.Suppressed
		if e.Record.Rejected {
			shown++
			events = append(events, e)
		}
	}})
	addr := serve(t, srv)
	size0 := fileSize(t, db.Path())
	start := time.Now()
	url := "http://" + addr + "/push"

	// A forgery: an =HYPERLINK invoice, signed with the wrong secret.
	forged := []byte(`{"Transaction":{"Key":"F0F0","Invoice":"=HYPERLINK(\"http://evil\")","Status":{"Code":{"Code":190}}}}`)
	req := signedPost(t, url, forged, creds, time.Now().Unix())
	req.Header.Set("Authorization", strings.Replace(req.Header.Get("Authorization"), ":", ":AAAA", 1))
	post(t, req, http.StatusUnauthorized)

	client := &http.Client{Timeout: 10 * time.Second}
	big := bytes.Repeat([]byte(`{"Transaction":{"Invoice":"x"}}`), (1<<20)/31)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 125 {
				body := []byte("{}")
				if i%5 == 0 {
					body = big
				}
				r, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				if g%2 == 0 {
					r.Header.Set("Authorization", "hmac "+creds.WebsiteKey+":AAAA:n:"+itoa(time.Now().Unix()))
				}
				resp, err := client.Do(r)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("unsigned request: HTTP %d", resp.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
	if err := srv.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rejected, err := db.RejectedPushes(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	// Two entries: missing signatures, and mismatched ones, whose evidence
	// is still the first of them, the forgery.
	if len(rejected) != 2 {
		t.Fatalf("rejected log: %d entries, want 2 (missing and mismatched signatures)", len(rejected))
	}
	var first *store.PushRecord
	for _, r := range rejected {
		if r.Signature == store.SignatureMismatch {
			first = r
		}
	}
	if first == nil || first.Count != 501 || !bytes.Equal(first.Body, forged) || first.Invoice != "" {
		t.Fatalf("the forgery's entry: %+v (its body first, nothing of an unsigned body decoded)", first)
	}
	var total uint64
	for _, r := range rejected {
		total += r.Count
	}
	if total != 1001 {
		t.Errorf("entries count %d requests, want 1001", total)
	}
	if grew := fileSize(t, db.Path()) - size0; grew > 1<<20 {
		t.Errorf("the cache grew %d bytes for 1,001 unsigned requests", grew)
	}
	mu.Lock()
	defer mu.Unlock()
	// A token bucket of 5 a second: the burst, then 5 a second.
	if limit := 5 + int(5*time.Since(start).Seconds()) + 1; shown > limit || shown+summarised != 1001 {
		t.Errorf("Observe saw %d rejections and %d in summaries, want at most %d and 1001 in all", shown, summarised, limit)
	}
	for _, e := range events {
		if len(e.Record.Body) > store.MaxRejectedExcerpt || e.Record.Invoice != "" {
			t.Errorf("a rejection event carries %d bytes of body, invoice %q", len(e.Record.Body), e.Record.Invoice)
		}
	}
}

func itoa(n int64) string { return big.NewInt(n).String() }

func post(t *testing.T, req *http.Request, want int) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("HTTP %d, want %d", resp.StatusCode, want)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestTLS: with a certificate and key the listener serves HTTPS.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := testcert.Files(t, dir)
	_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: HTTPOptions{TLSCertFile: certFile, TLSKeyFile: keyFile}})
	if !srv.TLS() {
		t.Fatal("TLS() = false")
	}
	addr := serve(t, srv)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Do(signedPost(t, "https://"+addr+"/push", encode(t, giftCardPush(1, 100)), creds, time.Now().Unix()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("HTTPS push: HTTP %d", resp.StatusCode)
	}
	if _, err := http.Get("http://" + addr + "/push"); err == nil {
		// net/http answers plain HTTP on a TLS port with a 400 of its own.
		t.Log("plain HTTP on the TLS port was answered (with an error page)")
	}
	if _, err := New(Config{DB: srv.cfg.DB, Verifier: srv.cfg.Verifier, HTTP: HTTPOptions{TLSCertFile: certFile}}); err == nil {
		t.Error("a certificate without a key was accepted")
	}
}
