package pushlistener

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/testcert"
	"paydesk/store"
)

// patient are timeouts long enough that only the unproven connections'
// own rules (eviction, the earned deadline, the body account) can close a
// connection within a test.
func patient(o HTTPOptions) HTTPOptions {
	o.ReadHeaderTimeout, o.ReadTimeout, o.WriteTimeout, o.IdleTimeout = 10*time.Minute, 10*time.Minute, 10*time.Minute, 10*time.Minute
	if o.FirstByteTimeout == 0 {
		o.FirstByteTimeout = 10 * time.Minute
	}
	return o
}

// forgedHead is a push's headers with a well-formed, fresh Authorization
// for the right website key but a signature nobody made, claiming length
// bytes of body.
func forgedHead(addr string, length int) string {
	return fmt.Sprintf("POST /push HTTP/1.1\r\nHost: %s\r\nAuthorization: hmac %s:%s:nonce%d:%d\r\nContent-Length: %d\r\n\r\n",
		addr, creds.WebsiteKey, strings.Repeat("A", 44), time.Now().UnixNano(), time.Now().Unix(), length)
}

// waitFor polls cond until it holds; the deadline only fails a stuck test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after a minute", what)
		}
	}
}

// closedByServer reports whether the server ends c (a read fails or an
// answer arrives) before the test's generous deadline.
func closedByServer(c net.Conn) error {
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return fmt.Errorf("still open after a minute")
	}
	return nil
}

// TestUnprovenConnectionsMakeRoom: at the connection cap a newcomer takes
// the place of the oldest connection that has not delivered a signed
// request, whatever it has sent (one byte, headers and part of a body,
// three bytes of a TLS record): signed pushes on new connections are
// answered while four times the cap is held that way, with net/http's own
// timeouts far away. A connection that proved itself is not replaced. On
// the old listener a connection that had sent a byte counted as busy: the
// cap stopped accepting and the pushes waited for the header timeout.
func TestUnprovenConnectionsMakeRoom(t *testing.T) {
	const maxConns = 16
	tests := []struct {
		name  string
		sends func(addr string) string
	}{
		{"one byte", func(string) string { return "P" }},
		{"headers and a byte of a megabyte body", func(addr string) string { return forgedHead(addr, 1000000) + "x" }},
		{"three bytes of a TLS record", func(string) string { return "\x16\x03\x01" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: patient(HTTPOptions{MaxConns: maxConns})})
			addr := serve(t, srv)
			url := "http://" + addr + "/push"

			// A gateway's kept-alive connection proves itself first.
			gw := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			resp, err := gw.Do(signedPost(t, url, encode(t, giftCardPush(1, 100)), creds, time.Now().Unix()))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()

			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for range 4 * maxConns {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, c)
				if _, err := io.WriteString(c, tc.sends(addr)); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "the attack's connections to be accepted", func() bool { return srv.Stats().Evicted >= 3*maxConns-1 })
			client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for i := range 5 {
				resp, err := client.Do(signedPost(t, url, encode(t, giftCardPush(10+i, 100)), creds, time.Now().Unix()))
				if err != nil {
					t.Fatalf("push %d with %d unproven connections held against a cap of %d: %v", i, len(held), maxConns, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("push %d: HTTP %d", i, resp.StatusCode)
				}
			}
			// The gateway's connection was kept: its next push goes out on it.
			resp, err = gw.Do(signedPost(t, url, encode(t, giftCardPush(2, 100)), creds, time.Now().Unix()))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("the gateway's kept-alive connection: %v %v", resp, err)
			}
			resp.Body.Close()
			st := srv.Stats()
			if st.Peak > maxConns {
				t.Errorf("held %d connections at once, cap %d", st.Peak, maxConns)
			}
			// The oldest attack connections were the ones closed.
			if err := closedByServer(held[0]); err != nil {
				t.Errorf("the oldest unproven connection: %v", err)
			}
		})
	}
}

// TestPerAddressLimit: past MaxConnsPerAddr a newcomer from the same
// address replaces that address's oldest unproven connection even below
// the global cap.
func TestPerAddressLimit(t *testing.T) {
	_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: patient(HTTPOptions{MaxConns: 100, MaxConnsPerAddr: 5})})
	addr := serve(t, srv)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 12 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		_, _ = io.WriteString(c, "P")
	}
	waitFor(t, "7 evictions", func() bool { return srv.Stats().Evicted >= 7 })
	if st := srv.Stats(); st.Held > 5 || st.Unproven > 5 {
		t.Errorf("one address holds %d connections (%d unproven), limit 5", st.Held, st.Unproven)
	}
	if err := closedByServer(held[0]); err != nil {
		t.Errorf("the address's oldest connection: %v", err)
	}
}

// TestTricklingConnectionsTimeOut: a connection that has not proven
// itself must keep up MinDataRate after its grace, in headers, body and a
// TLS handshake alike; net/http's own timeouts (here ten minutes) do not
// stretch it. On the old listener only the first byte had a deadline.
func TestTricklingConnectionsTimeOut(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := testcert.Files(t, dir)
	tests := []struct {
		name  string
		tls   bool
		first string // sent at once
		drip  string // then one byte every 50 ms
	}{
		{"headers", false, "POST /push HTTP/1.1\r\n", strings.Repeat("X-Slow: 1\r\n", 1000)},
		{"body", false, "", "x"},
		{"TLS handshake", true, "\x16\x03\x01\x40\x00", "\x01"}, // a 16 KiB handshake record
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := HTTPOptions{FirstByteTimeout: 300 * time.Millisecond, MinDataRate: 100}
			if tc.tls {
				o.TLSCertFile, o.TLSKeyFile = certFile, keyFile
			}
			_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: patient(o)})
			addr := serve(t, srv)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			first := tc.first
			if first == "" {
				first = forgedHead(addr, 1000000)
			}
			if _, err := io.WriteString(c, first); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					if _, err := io.WriteString(c, tc.drip[i%len(tc.drip):i%len(tc.drip)+1]); err != nil {
						return
					}
				}
			}()
			err = closedByServer(c)
			close(stop)
			wg.Wait()
			if err != nil {
				t.Errorf("a connection trickling its %s at 20 bytes/s against a minimum of 100: %v", tc.name, err)
			}
		})
	}
}

// TestBodyMemoryBounded: a body's buffer grows with the bytes that
// arrive, never with the Content-Length claimed (the old listener
// allocated the claim as soon as the headers passed: a megabyte per
// connection that sent one byte), and bodies past BodyAllowance share
// BodyMemory, so forged megabyte bodies all at once hold at most that.
func TestBodyMemoryBounded(t *testing.T) {
	t.Run("claimed", func(t *testing.T) {
		_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: patient(HTTPOptions{MaxConns: 1000})})
		addr := serve(t, srv)
		const n = 200
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for range n {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			if _, err := io.WriteString(c, forgedHead(addr, 1000000)+"{"); err != nil {
				t.Fatal(err)
			}
		}
		waitFor(t, "every body to be read", func() bool { return srv.Stats().BodyBytes >= n*firstBodyBuffer })
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		// The old listener allocated the claimed million bytes for each.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > n*1000000/4 {
			t.Errorf("%d connections claiming 1,000,000 bytes and sending one: %.0f MB allocated", n, float64(grew)/1e6)
		}
		if st := srv.Stats(); st.PeakBodyBytes > n*firstBodyBuffer {
			t.Errorf("%d connections claiming 1,000,000 bytes and sending one: %d bytes held for bodies at most, want ≤ %d",
				n, st.PeakBodyBytes, n*firstBodyBuffer)
		}
	})
	t.Run("sent", func(t *testing.T) {
		const budget = 4 << 20
		_, srv := openServer(t, store.Options{NoSync: true}, Config{HTTP: patient(HTTPOptions{MaxConns: 1000, BodyMemory: budget})})
		addr := serve(t, srv)
		const n = 40
		body := strings.Repeat("x", MaxBody)
		var wg sync.WaitGroup
		statuses := make(chan int, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := net.Dial("tcp", addr)
				if err != nil {
					statuses <- 0
					return
				}
				defer c.Close()
				go func() { _, _ = io.WriteString(c, forgedHead(addr, len(body))+body) }()
				_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					statuses <- 0
					return
				}
				resp.Body.Close()
				statuses <- resp.StatusCode
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[http.StatusUnauthorized] == 0 || got[0] > 0 {
			t.Errorf("forged 1 MiB bodies answered %v, want 401s (and 503s when no room came free in time)", got)
		}
		st := srv.Stats()
		if limit := int64(budget + n*BodyAllowance); st.PeakBodyBytes > limit {
			t.Errorf("%d forged 1 MiB bodies at once held %d bytes, want ≤ %d", n, st.PeakBodyBytes, limit)
		}
		if st.BodyBytes != 0 {
			t.Errorf("%d bytes of bodies still held after every answer", st.BodyBytes)
		}
		t.Logf("answers %v, at most %.1f MB of bodies held", got, float64(st.PeakBodyBytes)/1e6)
	})
}

// TestSignatureCoversListenAddress: with no push URL configured the
// signature must cover the address the connection arrived on; a push
// signed over another host is refused even when its Host header names
// that host (the old listener took the Host header).
func TestSignatureCoversListenAddress(t *testing.T) {
	db, srv := openServer(t, store.Options{NoSync: true}, Config{})
	addr := serve(t, srv)
	tests := []struct {
		name     string
		signedAs string // the URL signed over
		host     string // the Host header sent
		want     int
	}{
		{"the listen address", "http://" + addr + "/push", "", http.StatusOK},
		{"another host, named in Host", "http://pay.example.com/push", "pay.example.com", http.StatusUnauthorized},
		{"another port, named in Host", "http://127.0.0.1:1/push", "127.0.0.1:1", http.StatusUnauthorized},
		{"the listen address, another Host", "http://" + addr + "/push", "pay.example.com", http.StatusOK},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := encode(t, giftCardPush(100+i, 100))
			req := signedPost(t, "http://"+addr+"/push", body, creds, time.Now().Unix())
			req.Header.Set("Authorization", api.Sign(creds, http.MethodPost, api.HostPath(tc.signedAs), body, api.NewNonce(), time.Now().Unix()).String())
			if tc.host != "" {
				req.Host = tc.host
			}
			post(t, req, tc.want)
		})
	}
	_ = db
}
