package pushrelay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"paydesk/api"
	"paydesk/internal/private"
	"paydesk/pushlistener"
	"paydesk/store"
)

// maxExcerpt bounds the part of the shop's answer that is shown.
const maxExcerpt = 120

// Answer is what the target said to one push.
type Answer struct {
	Key      string // the push's transaction key
	Kind     string // ActionCode or TransactionType
	Status   int    // HTTP status, 0 when none came
	Duration time.Duration
	Excerpt  string // the start of the answer's body, one line of printable text
	Err      error  // no answer: the connection failed
}

// OK reports a 200, the only answer the gateway family takes as delivered.
func (a Answer) OK() bool { return a.Err == nil && a.Status == http.StatusOK }

// String is the one line printed per push.
func (a Answer) String() string {
	what := a.Key
	if a.Kind != "" {
		what += " " + a.Kind
	}
	if a.Err != nil {
		return fmt.Sprintf("%s -> no answer after %s: %v", what, a.Duration.Round(time.Millisecond), a.Err)
	}
	s := fmt.Sprintf("%s -> %d %s in %s", what, a.Status, http.StatusText(a.Status), a.Duration.Round(time.Millisecond))
	if a.Excerpt != "" {
		s += ": " + a.Excerpt
	}
	return s
}

// Sender posts push bodies to a URL, signed as the gateway signs them.
type Sender struct {
	Credentials api.Credentials
	// HTTP sends; nil means a client with a 10 s timeout.
	HTTP api.Doer
	// Now and Nonce are seams for tests; nil means the clock and a random
	// nonce.
	Now   func() time.Time
	Nonce func() string
}

// Send signs body for target with a fresh timestamp and posts it; the
// answer names the push's key and kind.
func (s Sender) Send(ctx context.Context, target string, body []byte) Answer {
	a := s.Deliver(ctx, target, body)
	if p, err := api.DecodePush(body); err == nil {
		a.Key, a.Kind = p.Key(), p.Kind()
	}
	return a
}

// Deliver is Send without naming the push in the answer (Key and Kind
// empty): the outbox knows them already, and decoding every body again
// cost it a tenth of its CPU.
func (s Sender) Deliver(ctx context.Context, target string, body []byte) Answer {
	a := Answer{}
	now, nonce := time.Now, api.NewNonce
	if s.Now != nil {
		now = s.Now
	}
	if s.Nonce != nil {
		nonce = s.Nonce
	}
	client := s.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		a.Err = fmt.Errorf("target URL: %w", err)
		return a
	}
	auth := api.Sign(s.Credentials, http.MethodPost, api.HostPath(target), body, nonce(), now().Unix())
	req.Header.Set("Authorization", auth.String())
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		a.Duration, a.Err = time.Since(start), err
		return a
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	a.Duration, a.Status, a.Excerpt = time.Since(start), resp.StatusCode, excerpt(b)
	// Read to the end (up to a bound) so the connection goes back to the
	// pool: a shop page of a few KiB would otherwise cost a new connection
	// per push.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	return a
}

// maxDrain bounds what is read of an answer beyond the excerpt's part to
// keep its connection: past it the connection is closed instead.
const maxDrain = 256 << 10

// NewHTTPClient is a client for sending to a shop from conns goroutines
// at once: keep-alive connections, as many kept idle per host as there are
// senders (net/http's default keeps two, and every other push would open
// a new connection), and the 10 s timeout of a Sender without a client.
func NewHTTPClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(conns, 2)
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}

// excerpt is the start of a body as one line of printable text: what a
// terminal may show of an answer from someone else's server.
func excerpt(b []byte) string {
	var sb strings.Builder
	space := false
	for len(b) > 0 && sb.Len() < maxExcerpt {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		switch {
		case r == utf8.RuneError && n <= 1, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029:
			r = ' '
		}
		if r == ' ' {
			if space || sb.Len() == 0 {
				continue
			}
			space = true
		} else {
			space = false
		}
		sb.WriteRune(r)
	}
	out := strings.TrimSpace(sb.String())
	if len(b) > 0 {
		out += "…"
	}
	return out
}

// maxPushFile bounds a saved push: a push body is a few KiB, the
// listener takes at most 1 MiB.
const maxPushFile = 8 << 20

// LoadFile reads a saved push: the raw body as the console's "save as
// fixture" writes it (push-N-KIND.json).
func LoadFile(path string) ([]byte, error) {
	// A regular file only, and no larger than a push may be: a FIFO would
	// hang the command, /dev/zero would fill the memory.
	b, err := private.ReadRegular(path, maxPushFile)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("read push: %w", err)
		}
		return nil, fmt.Errorf("read push %s: %w", path, err)
	}
	if _, err := api.DecodePush(b); err != nil {
		return nil, fmt.Errorf("push %s: %w", path, err)
	}
	return b, nil
}

// FetchFromSandbox asks a standalone sandbox for the pushes it made for
// key (its signed admin endpoint) and checks the answer's signature.
func FetchFromSandbox(ctx context.Context, base string, creds api.Credentials, key string, client api.Doer) ([][]byte, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/") + "/sandbox/admin/pushes/" + url.PathEscape(key))
	if err != nil {
		return nil, fmt.Errorf("sandbox URL: %w", err)
	}
	hostPath := u.Host + u.EscapedPath()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", api.Sign(creds, http.MethodGet, hostPath, nil, api.NewNonce(), time.Now().Unix()).String())
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("pushes of %s: %w", key, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("pushes of %s: %w", key, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, fmt.Errorf("pushes of %s: %w", key, api.ErrUnknownTransaction)
	case http.StatusBadRequest:
		return nil, fmt.Errorf("pushes of %s: %w", key, api.ErrAccessDenied)
	default:
		return nil, fmt.Errorf("pushes of %s: HTTP %d: %s", key, resp.StatusCode, excerpt(b))
	}
	if _, err := api.VerifierFor(creds).Verify(resp.Header.Get("Authorization"), http.MethodGet, hostPath, b); err != nil {
		return nil, fmt.Errorf("pushes of %s: answer signature: %w", key, err)
	}
	var out struct{ Pushes []json.RawMessage }
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("pushes of %s: %w", key, err)
	}
	bodies := make([][]byte, 0, len(out.Pushes))
	for _, p := range out.Pushes {
		bodies = append(bodies, []byte(p))
	}
	if len(bodies) == 0 {
		return nil, fmt.Errorf("pushes of %s: none made yet", key)
	}
	return bodies, nil
}

// Replay sends each body to target, re-signed with a fresh timestamp, and
// writes one line per push to w. It returns the exit code: 0 when every
// push was answered 200, 1 otherwise.
func Replay(ctx context.Context, w io.Writer, s Sender, target string, bodies [][]byte) int {
	code := 0
	for _, b := range bodies {
		a := s.Send(ctx, target, b)
		fmt.Fprintln(w, a.String())
		if !a.OK() {
			code = 1
		}
	}
	return code
}

// Forwarder relays the pushes the listener verified and stored to the
// shop's URL, one at a time in the order they came, and reports each
// answer. It never holds back the listener's own answer to the gateway,
// nor the listener's stop: Close gives what is queued a bounded time.
type Forwarder struct {
	sender Sender
	target string
	report func(Answer)
	queue  chan []byte
	ctx    context.Context // ends when Close's grace runs out
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	closed bool
	// CloseGrace is how long Close lets the push in flight and the queue
	// go on before it gives up on them (2 s). Set it before the first
	// Forward.
	CloseGrace time.Duration
}

// forwardQueue bounds the pushes waiting to be forwarded.
const forwardQueue = 1024

// NewForwarder starts a forwarder; report gets every answer (from the
// forwarder's goroutine). Close stops it.
func NewForwarder(s Sender, target string, report func(Answer)) (*Forwarder, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("forward-to %q: must be an absolute http(s) URL", target)
	}
	f := &Forwarder{sender: s, target: target, report: report, queue: make(chan []byte, forwardQueue), done: make(chan struct{}),
		CloseGrace: 2 * time.Second}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	go f.run()
	return f, nil
}

func (f *Forwarder) run() {
	defer close(f.done)
	dropped := 0
	for b := range f.queue {
		if f.ctx.Err() != nil {
			dropped++ // stopping: the push is stored; the shop does not get it from here
			continue
		}
		a := f.sender.Send(f.ctx, f.target, b)
		if f.ctx.Err() != nil && a.Err != nil {
			a.Err = fmt.Errorf("%w (stopping; the push is stored)", ErrStopped)
		}
		f.report(a)
	}
	if dropped > 0 {
		f.report(Answer{Key: fmt.Sprintf("%d more pushes", dropped), Err: fmt.Errorf("%w: not forwarded (they are stored; paydesk replay sends them)", ErrStopped)})
	}
}

// ErrStopped is reported for the pushes the forwarder gave up on when it
// was closed.
var ErrStopped = errors.New("listener stopping")

// ErrQueueFull is reported when the shop is slower than the pushes.
var ErrQueueFull = errors.New("forward queue full: push not forwarded")

// Forward queues a push body for the shop; after Close it does nothing.
// An empty body is not a push and is never sent.
func (f *Forwarder) Forward(body []byte) {
	if len(body) == 0 {
		return
	}
	f.mu.Lock()
	queued := false
	if !f.closed {
		select {
		case f.queue <- append([]byte(nil), body...):
			queued = true
		default:
		}
	}
	closed := f.closed
	f.mu.Unlock()
	if !queued && !closed {
		a := Answer{Err: ErrQueueFull}
		if p, err := api.DecodePush(body); err == nil {
			a.Key, a.Kind = p.Key(), p.Kind()
		}
		f.report(a)
	}
}

// Observe is a pushlistener.Config.Observe hook: every push the listener
// verified and stored (duplicates too: the gateway sent them) goes on to
// the shop. An order posted to the listener's intake is not a push: the
// shop made it and gets nothing back for it.
func (f *Forwarder) Observe(ev pushlistener.Event) {
	if ev.Order != nil || ev.HTTPStatus != http.StatusOK || ev.Record.Rejected || ev.Record.Signature != store.SignatureValid {
		return
	}
	f.Forward(ev.Record.Body)
}

// Close forwards what is queued for at most CloseGrace, then abandons
// the push in flight and reports the rest as not forwarded, and stops. A
// shop that never answers cannot hold the listener's stop: the pushes are
// stored already, and the gateway's own retries (or paydesk replay) reach
// the shop later.
func (f *Forwarder) Close() {
	f.once.Do(func() {
		f.mu.Lock()
		f.closed = true
		close(f.queue)
		f.mu.Unlock()
	})
	grace := time.NewTimer(f.CloseGrace)
	defer grace.Stop()
	select {
	case <-f.done:
	case <-grace.C:
		f.cancel()
		<-f.done
	}
	f.cancel()
}

// ReplayArg is `paydesk replay FILE|KEY --to URL`: arg is a saved push file
// or, when no such file exists, a transaction key whose pushes are fetched
// from the sandbox at gatewayBase. Lines go to stdout, problems to stderr;
// the exit code is 0 when the target answered every push 200, 1 when it did
// not, 2 for bad input.
func ReplayArg(ctx context.Context, stdout, stderr io.Writer, s Sender, target, arg, gatewayBase string) int {
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "paydesk replay: --to %q: must be an absolute http(s) URL\n", target)
		return 2
	}
	var bodies [][]byte
	if _, err := os.Stat(arg); err == nil {
		b, err := LoadFile(arg)
		if err != nil {
			fmt.Fprintf(stderr, "paydesk replay: %v\n", err)
			return 2
		}
		bodies = [][]byte{b}
	} else {
		if gatewayBase == "" {
			fmt.Fprintf(stderr, "paydesk replay: %s is no file; to fetch a key's pushes a sandbox URL (--from) is needed\n", arg)
			return 2
		}
		b, err := FetchFromSandbox(ctx, gatewayBase, s.Credentials, arg, s.HTTP)
		if err != nil {
			fmt.Fprintf(stderr, "paydesk replay: %v\n", err)
			return 2
		}
		bodies = b
	}
	return Replay(ctx, stdout, s, target, bodies)
}

// PrintTo returns a report function for NewForwarder that writes one line
// per answer to w, prefixed "forward", safe for concurrent use.
func PrintTo(w io.Writer) func(Answer) {
	var mu sync.Mutex
	return func(a Answer) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(w, "forward "+a.String())
	}
}
