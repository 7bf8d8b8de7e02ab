package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrNoOwner: no process answers on the cache's socket (there is none, or
// one left behind by an owner that was killed).
var ErrNoOwner = errors.New("no paydesk process serves this cache")

// ErrBroken: the connection to the owner broke after the command was sent,
// so what it did is not known.
var ErrBroken = errors.New("the connection to the paydesk that owns the cache broke while the command ran")

// Client talks to the owner of a cache over its socket.
type Client struct {
	path string
	http *http.Client
}

// ownerTimeout bounds the question who owns the cache: an owner that does
// not answer it (stopped, hung) is not one to send a command to.
const ownerTimeout = 5 * time.Second

// Dial finds the owner serving the first of paths that answers.
// ErrNoOwner when none does.
func Dial(ctx context.Context, paths []string) (*Client, Info, error) {
	for _, p := range paths {
		c := newClient(p)
		info, err := c.owner(ctx)
		if errors.Is(err, ErrNoOwner) {
			continue
		}
		if err != nil {
			return nil, Info{}, err
		}
		return c, info, nil
	}
	return nil, Info{}, ErrNoOwner
}

func newClient(path string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		DisableCompression: true,
	}
	return &Client{path: path, http: &http.Client{Transport: tr}}
}

// Path is the socket the client talks to.
func (c *Client) Path() string { return c.path }

// Close lets go of the client's idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// noOwner says whether a dial error means nobody serves the socket.
func noOwner(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

func (c *Client) owner(ctx context.Context) (Info, error) {
	ctx, cancel := context.WithTimeout(ctx, ownerTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://paydesk/owner", nil)
	if err != nil {
		return Info{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if noOwner(err) {
			return Info{}, ErrNoOwner
		}
		return Info{}, fmt.Errorf("the paydesk serving %s: %w", c.path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Info{}, answerError(c.path, resp)
	}
	var info Info
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&info); err != nil {
		return Info{}, fmt.Errorf("the paydesk serving %s: %w", c.path, err)
	}
	return info, nil
}

func answerError(path string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	return fmt.Errorf("the paydesk serving %s refused: %s %s", path, resp.Status, strings.TrimSpace(string(b)))
}

// interruptGrace is how long an interrupted command has to end in the
// owner and say so before the client stops listening.
const interruptGrace = 15 * time.Second

// Run has the owner run req and copies the command's output to stdout and
// stderr as it comes; when the command reads its stdin, stdin is sent.
// It returns the command's exit code. When ctx ends (Ctrl-C) the owner
// interrupts the command as Ctrl-C would interrupt it here, and its last
// words and exit code still come back. After the request went out, a
// broken connection is ErrBroken: the command may have run, in part or
// whole.
func (c *Client) Run(ctx context.Context, req Request, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	req.Stdin = stdin != nil
	body, err := json.Marshal(req)
	if err != nil {
		return 0, err
	}
	// The request is not cut off with ctx: the command ends in the owner,
	// which then answers.
	hreq, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, "http://paydesk/run", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		if noOwner(err) {
			return 0, ErrNoOwner
		}
		return 0, fmt.Errorf("%w: %w", ErrBroken, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, answerError(c.path, resp)
	}
	dec := json.NewDecoder(resp.Body)
	first, err := decodeFrame(dec)
	if err != nil || first.Run == "" {
		return 0, fmt.Errorf("%w: the first frame is not the run's token (%v)", ErrBroken, err)
	}
	ended := make(chan struct{})
	defer close(ended)
	go c.interrupt(ctx, first.Run, ended, resp.Body)
	feeding := false
	for {
		f, err := decodeFrame(dec)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrBroken, err)
		}
		switch {
		case f.Exit != nil:
			return *f.Exit, nil
		case f.Stdin != "":
			if !feeding && stdin != nil {
				feeding = true
				go c.feed(ctx, f.Stdin, stdin)
			}
		case f.O != nil:
			_, _ = stdout.Write(f.O)
		case f.E != nil:
			_, _ = stderr.Write(f.E)
		}
	}
}

// decodeFrame reads one frame of an owner's answer.
func decodeFrame(dec *json.Decoder) (frame, error) {
	var f frame
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return f, io.ErrUnexpectedEOF
		}
		return f, err
	}
	if len(f.O) > maxFrame || len(f.E) > maxFrame {
		return frame{}, errors.New("a frame larger than the owner writes")
	}
	return f, nil
}

// interrupt asks the owner to interrupt the run of token once ctx ends,
// and stops listening to it (body) when it has not ended after
// interruptGrace.
func (c *Client) interrupt(ctx context.Context, token string, ended <-chan struct{}, body io.Closer) {
	select {
	case <-ended:
		return
	case <-ctx.Done():
	}
	cctx, cancel := context.WithTimeout(context.Background(), ownerTimeout)
	defer cancel()
	if req, err := http.NewRequestWithContext(cctx, http.MethodPost, "http://paydesk/cancel/"+token, nil); err == nil {
		if resp, err := c.http.Do(req); err == nil {
			_ = resp.Body.Close()
		}
	}
	t := time.NewTimer(interruptGrace)
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
		_ = body.Close()
	}
}

// feed posts stdin for the command that asked under token; it ends with
// stdin, or when the command ends (the owner then stops reading).
func (c *Client) feed(ctx context.Context, token string, stdin io.Reader) {
	// Not cut off with ctx either: an interrupt ends the command in the
	// owner (interrupt), which then ends this feed. Cut off here, the
	// owner's command would read the end of its input before the
	// interrupt and end as if all was read.
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, "http://paydesk/stdin/"+token, io.NopCloser(stdin))
	if err != nil {
		return
	}
	req.ContentLength = -1
	resp, err := c.http.Do(req)
	if err != nil {
		return
	}
	_ = resp.Body.Close()
}

// Owner asks who owns the cache behind this client.
func (c *Client) Owner(ctx context.Context) (Info, error) { return c.owner(ctx) }

// RemoveStale removes the sockets among paths that nobody serves any more
// (an owner that was killed leaves its socket behind). Only a process that
// holds the cache's lock calls it: then no owner can be starting to serve
// them. It returns the paths it removed.
func RemoveStale(paths []string) []string {
	var removed []string
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode().Type() != os.ModeSocket {
			continue
		}
		conn, err := net.DialTimeout("unix", p, ownerTimeout)
		if err == nil {
			conn.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) && removeSocket(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
