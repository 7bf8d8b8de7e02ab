package pushload

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"paydesk/api"
)

// Shape is a kind of client that holds a listener's connections without
// ever delivering a signed request.
type Shape string

const (
	// OneByte sends "P" and nothing more.
	OneByte Shape = "one-byte"
	// TLSPrefix sends the first three bytes of a TLS record (a handshake
	// record's type and version) and nothing more.
	TLSPrefix Shape = "tls-prefix"
	// SlowBody sends a push's headers with a forged but well-formed
	// Authorization (the website key is not secret), Content-Length:
	// 1000000, then one body byte a second.
	SlowBody Shape = "slow-body"
	// BigBody posts forged 1 MiB bodies whole, one after the other on each
	// connection.
	BigBody Shape = "big-body"
)

// Shapes lists the attack shapes.
var Shapes = []Shape{OneByte, TLSPrefix, SlowBody, BigBody}

// Attack holds Conns connections of Shape to Addr, dialling each again
// as soon as the listener closes it, until its context ends.
type Attack struct {
	Addr  string
	Shape Shape
	Conns int
	// WebsiteKey goes into SlowBody's and BigBody's forged Authorization
	// (so that it passes the header check and the body is read); URL is
	// their request target (default /push).
	WebsiteKey string
	URL        string
	// Ramp spreads the first dials over this time (default 1 s).
	Ramp time.Duration

	held, dials, failed, answered atomic.Int64
}

// AttackStats counts what an attack did.
type AttackStats struct {
	Held     int64 // connections open now
	Dials    int64 // connections opened
	Failed   int64 // dials that failed
	Answered int64 // requests the listener answered (BigBody, SlowBody)
}

// Stats reports the attack's counters.
func (a *Attack) Stats() AttackStats {
	return AttackStats{Held: a.held.Load(), Dials: a.dials.Load(), Failed: a.failed.Load(), Answered: a.answered.Load()}
}

// Run holds the connections until ctx ends and returns when every one is
// closed.
func (a *Attack) Run(ctx context.Context) {
	ramp := a.Ramp
	if ramp <= 0 {
		ramp = time.Second
	}
	var wg sync.WaitGroup
	for i := range a.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			delay := time.NewTimer(ramp * time.Duration(i) / time.Duration(max(a.Conns, 1)))
			select {
			case <-ctx.Done():
				delay.Stop()
				return
			case <-delay.C:
			}
			for ctx.Err() == nil {
				a.once(ctx)
			}
		}()
	}
	wg.Wait()
}

// once dials one connection, plays the shape on it until the listener
// closes it (or ctx ends).
func (a *Attack) once(ctx context.Context) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", a.Addr)
	if err != nil {
		a.failed.Add(1)
		// Out of ports or descriptors: let some close first.
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		return
	}
	a.dials.Add(1)
	a.held.Add(1)
	defer a.held.Add(-1)
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	defer c.Close()
	switch a.Shape {
	case OneByte:
		_, _ = c.Write([]byte("P"))
		drain(c)
	case TLSPrefix:
		_, _ = c.Write([]byte{0x16, 0x03, 0x01})
		drain(c)
	case SlowBody:
		if _, err := io.WriteString(c, a.head(1000000)); err != nil {
			return
		}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			if n, _ := c.Read(make([]byte, 512)); n > 0 {
				a.answered.Add(1)
			}
			drain(c)
		}()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-closed:
				return
			case <-tick.C:
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	case BigBody:
		body := forgedBody()
		buf := make([]byte, 4<<10)
		for ctx.Err() == nil {
			if _, err := io.WriteString(c, a.head(len(body))); err != nil {
				return
			}
			if _, err := c.Write(body); err != nil {
				return
			}
			n, err := c.Read(buf)
			if n > 0 {
				a.answered.Add(1)
			}
			if err != nil || bytes.Contains(buf[:n], []byte("Connection: close")) {
				return
			}
		}
	}
}

// head is a push request's headers with a well-formed, fresh, forged
// Authorization.
func (a *Attack) head(length int) string {
	target := a.URL
	if target == "" {
		target = "/push"
	}
	auth := fmt.Sprintf("hmac %s:%s:%s:%d", a.WebsiteKey, strings.Repeat("A", 44), api.NewNonce(), time.Now().Unix())
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n",
		target, a.Addr, auth, length)
}

var forged = sync.OnceValue(func() []byte {
	unit := []byte(`{"Transaction":{"Invoice":"=HYPERLINK(1)"}}`)
	return bytes.Repeat(unit, (1<<20)/len(unit)+1)[:1<<20]
})

func forgedBody() []byte { return forged() }

// drain reads until the connection ends.
func drain(c net.Conn) {
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// Probe posts one signed push every Every on a new connection, as a
// gateway that does not keep connections alive would, and records how
// long each took to be answered 200.
type Probe struct {
	Addr        string
	PushURL     string // default http(s)://Addr/push
	TLS         bool   // HTTPS, certificate not checked (a test certificate)
	Credentials api.Credentials
	Every       time.Duration // default 200 ms
	Timeout     time.Duration // the client's timeout (default 10 s, the gateway's)
	// First numbers the first push (0 counts as 1).
	First int

	mu      sync.Mutex
	results []ProbeResult
}

// ProbeResult is one probe: how long it took, and its status (0 when it
// got no answer; Err says why).
type ProbeResult struct {
	Start  time.Time
	Took   time.Duration
	Status int
	Err    error
}

// Run probes until ctx ends and returns when every probe has its result.
func (p *Probe) Run(ctx context.Context) {
	every, timeout := p.Every, p.Timeout
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	scheme := "http"
	if p.TLS {
		scheme = "https"
	}
	url := p.PushURL
	if url == "" {
		url = scheme + "://" + p.Addr + "/push"
	}
	tr := &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // a test certificate
	defer tr.CloseIdleConnections()
	client := &http.Client{Timeout: timeout, Transport: tr}
	var wg sync.WaitGroup
	tick := time.NewTicker(every)
	defer tick.Stop()
	n := max(p.First, 1)
	for {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			body, _ := GiftCardPush(n, int64(100+n%5000)).Encode()
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Authorization", api.Sign(p.Credentials, http.MethodPost, api.HostPath(url), body, api.NewNonce(), time.Now().Unix()).String())
			start := time.Now()
			resp, err := client.Do(req)
			r := ProbeResult{Start: start, Err: err}
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				r.Status = resp.StatusCode
			}
			r.Took = time.Since(start)
			p.mu.Lock()
			p.results = append(p.results, r)
			p.mu.Unlock()
		}(n)
		n++
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
	}
}

// Results are the probes so far, in the order they were answered.
func (p *Probe) Results() []ProbeResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.results)
}

// Within counts the probes answered 200 within d, of all probes.
func Within(rs []ProbeResult, d time.Duration) (ok, all int) {
	for _, r := range rs {
		if r.Status == http.StatusOK && r.Took <= d {
			ok++
		}
	}
	return ok, len(rs)
}
