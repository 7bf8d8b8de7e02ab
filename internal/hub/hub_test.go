package hub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stuck bounds a wait that only a stuck test reaches.
const stuck = 2 * time.Minute

// shortDir is a temporary folder with a path short enough for a socket.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "hub")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

func listen(t *testing.T, paths []string, run Runner) *Server {
	t.Helper()
	s, err := Listen(paths, Info{Owner: "the test", PID: os.Getpid(), Cache: "test.db"}, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func dial(t *testing.T, paths []string) *Client {
	t.Helper()
	c, info, err := Dial(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	if info.Owner != "the test" || info.PID != os.Getpid() {
		t.Fatalf("owner %+v", info)
	}
	t.Cleanup(c.Close)
	return c
}

func TestSocketIsPrivate(t *testing.T) {
	rt := shortDir(t)
	cache := filepath.Join(shortDir(t), "paydesk.db")
	paths := Paths(cache, rt)
	if len(paths) != 2 || filepath.Dir(paths[0]) != filepath.Join(rt, "paydesk") || paths[1] != Canonical(cache)+".sock" {
		t.Fatalf("paths %q", paths)
	}
	s := listen(t, paths, func(context.Context, Request, Streams) int { return 0 })
	if s.Path() != paths[0] {
		t.Fatalf("served at %s, want the runtime folder's %s", s.Path(), paths[0])
	}
	fi, err := os.Lstat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a socket 0600", fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(s.Path()))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("socket folder %v %v, want 0700", di.Mode(), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket outlived its server: %v", err)
	}
}

// TestOpenRuntimeFolderRefused: a runtime folder others may enter is not
// used; the socket goes beside the cache.
func TestOpenRuntimeFolderRefused(t *testing.T) {
	rt := shortDir(t)
	if err := os.Mkdir(filepath.Join(rt, "paydesk"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(rt, "paydesk"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(shortDir(t), "c.db")
	s := listen(t, Paths(cache, rt), func(context.Context, Request, Streams) int { return 0 })
	if s.Path() != Canonical(cache)+".sock" {
		t.Fatalf("served at %s, want beside the cache", s.Path())
	}
}

func TestPathsNameTheCache(t *testing.T) {
	rt := shortDir(t)
	dir := shortDir(t)
	link := filepath.Join(shortDir(t), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	a, b := Paths(filepath.Join(dir, "a.db"), rt), Paths(filepath.Join(dir, "b.db"), rt)
	if a[0] == b[0] || a[1] == b[1] {
		t.Fatalf("two caches, one socket: %q %q", a, b)
	}
	if via := Paths(filepath.Join(link, "a.db"), rt); via[0] != a[0] || via[1] != a[1] {
		t.Fatalf("one cache through a link, another socket: %q %q", via, a)
	}
	long := "/" + strings.Repeat("x", 120) + "/c.db"
	if p := Paths(long, rt); len(p) != 1 || !strings.HasPrefix(p[0], rt) {
		t.Fatalf("a socket path too long was kept: %q", p)
	}
}

// recordingReader notes whether it was read.
type recordingReader struct {
	r    io.Reader
	read atomic.Bool
}

func (r *recordingReader) Read(p []byte) (int, error) {
	r.read.Store(true)
	return r.r.Read(p)
}

func TestRun(t *testing.T) {
	paths := Paths(filepath.Join(shortDir(t), "c.db"), "")
	listen(t, paths, func(_ context.Context, req Request, s Streams) int {
		switch req.Args[0] {
		case "echo":
			fmt.Fprintf(s.Stdout, "args %q dir %s env %s interactive %v\n", req.Args[1:], req.Dir, req.Env["USER"], req.Interactive)
			fmt.Fprint(s.Stderr, "to stderr\n")
			_, _ = s.Stdout.Write(bytes.Repeat([]byte("x"), maxFrame)) // more than one frame
			return 7
		case "cat":
			if s.Stdin == nil {
				fmt.Fprint(s.Stderr, "no stdin")
				return 1
			}
			b, err := io.ReadAll(s.Stdin)
			fmt.Fprintf(s.Stdout, "%s|%v", b, err)
			return 0
		}
		return 2
	})
	c := dial(t, paths)
	tests := []struct {
		name           string
		args           []string
		stdin          *recordingReader
		code           int
		out, errs      string
		stdinRead      bool
		outPrefixOnly  bool
		wantOutTailLen int
	}{
		{name: "output, exit code", args: []string{"echo", "a b", "ü"}, stdin: &recordingReader{r: strings.NewReader("never read")}, code: 7,
			out: `args ["a b" "ü"] dir /work env alice interactive true` + "\n", errs: "to stderr\n", outPrefixOnly: true, wantOutTailLen: maxFrame},
		{name: "stdin when read", args: []string{"cat"}, stdin: &recordingReader{r: strings.NewReader("line 1\nline 2\n")},
			out: "line 1\nline 2\n|<nil>", stdinRead: true},
		{name: "no stdin", args: []string{"cat"}, code: 1, errs: "no stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			var in io.Reader
			if tt.stdin != nil {
				in = tt.stdin
			}
			code, err := c.Run(context.Background(), Request{Args: tt.args, Dir: "/work", Env: map[string]string{"USER": "alice"}, Interactive: true}, in, &out, &errs)
			if err != nil || code != tt.code {
				t.Fatalf("exit %d, %v; want %d", code, err, tt.code)
			}
			got := out.String()
			if tt.outPrefixOnly {
				if len(got) != len(tt.out)+tt.wantOutTailLen || !strings.HasPrefix(got, tt.out) {
					t.Fatalf("stdout %d bytes %.80q", len(got), got)
				}
			} else if got != tt.out {
				t.Fatalf("stdout %q, want %q", got, tt.out)
			}
			if errs.String() != tt.errs {
				t.Fatalf("stderr %q, want %q", errs.String(), tt.errs)
			}
			if tt.stdin != nil && tt.stdin.read.Load() != tt.stdinRead {
				t.Fatalf("stdin read %v, want %v", tt.stdin.read.Load(), tt.stdinRead)
			}
		})
	}
}

// TestStaleSocket: an owner killed without its cleanup leaves its socket;
// nobody answers there, and RemoveStale takes it away (and nothing else).
func TestStaleSocket(t *testing.T) {
	paths := Paths(filepath.Join(shortDir(t), "c.db"), "")
	ln, err := net.Listen("unix", paths[0])
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, _, err := Dial(context.Background(), paths); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("dial a stale socket: %v, want ErrNoOwner", err)
	}
	if got := RemoveStale(paths); len(got) != 1 || got[0] != paths[0] {
		t.Fatalf("removed %q", got)
	}
	if _, err := os.Lstat(paths[0]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale socket still there: %v", err)
	}
	// A file that is not a socket is left alone.
	if err := os.WriteFile(paths[0], nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := RemoveStale(paths); len(got) != 0 {
		t.Fatalf("removed %q", got)
	}
	// And a live owner's socket is not stale.
	_ = os.Remove(paths[0])
	listen(t, paths, func(context.Context, Request, Streams) int { return 0 })
	if got := RemoveStale(paths); len(got) != 0 {
		t.Fatalf("removed a live socket: %q", got)
	}
	dial(t, paths)
}

// TestClientGoesAway: a client that disconnects mid-command ends its
// command (its context, its writes) and the owner goes on serving others;
// a client interrupted (Ctrl-C) has the command interrupted and still hears
// how it ended.
func TestClientGoesAway(t *testing.T) {
	paths := Paths(filepath.Join(shortDir(t), "c.db"), "")
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	listen(t, paths, func(ctx context.Context, req Request, s Streams) int {
		if req.Args[0] == "block" {
			fmt.Fprintln(s.Stdout, "started")
			started <- struct{}{}
			<-ctx.Done()
			_, err := fmt.Fprintln(s.Stdout, "interrupted")
			ended <- err
			return 3
		}
		fmt.Fprintln(s.Stdout, "ok")
		return 0
	})
	wait := func(what string, c <-chan struct{}) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(stuck):
			t.Fatalf("%s: stuck", what)
		}
	}

	t.Run("disconnected", func(t *testing.T) {
		c := dial(t, paths)
		req, _ := http.NewRequest(http.MethodPost, "http://paydesk/run", strings.NewReader(`{"args":["block"],"dir":"/"}`))
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		wait("start", started)
		resp.Body.Close() // the connection goes with it
		c.Close()
		select {
		case err := <-ended:
			if err == nil {
				t.Fatal("a write to a client that went away succeeded")
			}
		case <-time.After(stuck):
			t.Fatal("the command outlived its client")
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		c := dial(t, paths)
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			code int
			err  error
		}
		done := make(chan result, 1)
		var out bytes.Buffer
		go func() {
			code, err := c.Run(ctx, Request{Args: []string{"block"}, Dir: "/"}, nil, &out, io.Discard)
			done <- result{code, err}
		}()
		wait("start", started)
		cancel()
		if err := <-ended; err != nil {
			t.Fatalf("the interrupted command could not say so: %v", err)
		}
		r := <-done
		if r.err != nil || r.code != 3 || out.String() != "started\ninterrupted\n" {
			t.Fatalf("interrupted run: exit %d %v %q", r.code, r.err, out.String())
		}
	})

	var out bytes.Buffer
	if code, err := dial(t, paths).Run(context.Background(), Request{Args: []string{"next"}, Dir: "/"}, nil, &out, io.Discard); err != nil || code != 0 || out.String() != "ok\n" {
		t.Fatalf("next command: %d %v %q", code, err, out.String())
	}
}

// TestCloseEndsWaitingCommand: a command waiting for input from a client
// who never types ends when the owner closes.
func TestCloseEndsWaitingCommand(t *testing.T) {
	paths := Paths(filepath.Join(shortDir(t), "c.db"), "")
	reading := make(chan struct{})
	s, err := Listen(paths, Info{Owner: "the test", PID: os.Getpid()}, func(_ context.Context, _ Request, st Streams) int {
		close(reading)
		_, err := io.ReadAll(st.Stdin)
		if err == nil {
			return 0
		}
		return 9
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, paths)
	pr, pw := io.Pipe() // a terminal no one types into
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(context.Background(), Request{Args: []string{"read"}, Dir: "/"}, pr, io.Discard, io.Discard)
		done <- err
	}()
	select {
	case <-reading:
	case <-time.After(stuck):
		t.Fatal("the command did not start")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
	case <-time.After(stuck):
		t.Fatal("Close waits for a command that waits for input")
	}
	<-done
}

// TestOtherUserRefused: a peer of another uid gets 403 and runs nothing.
func TestOtherUserRefused(t *testing.T) {
	if !peerChecked {
		t.Skip("no peer credentials on this system: the socket's mode is the guard")
	}
	paths := Paths(filepath.Join(shortDir(t), "c.db"), "")
	var ran atomic.Bool
	s := listen(t, paths, func(context.Context, Request, Streams) int { ran.Store(true); return 0 })
	s.uid = os.Getuid() + 1
	_, _, err := Dial(context.Background(), paths)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("dial as another user: %v", err)
	}
	c := newClient(paths[0])
	defer c.Close()
	if _, err := c.Run(context.Background(), Request{Args: []string{"x"}, Dir: "/"}, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "only user") {
		t.Fatalf("run as another user: %v", err)
	}
	if ran.Load() {
		t.Fatal("a command of another user ran")
	}
}

func TestBadRequestRefused(t *testing.T) {
	paths := Paths(filepath.Join(shortDir(t), "c.db"), "")
	listen(t, paths, func(context.Context, Request, Streams) int { return 0 })
	c := dial(t, paths)
	for _, body := range []string{`{}`, `{"args":["x"],"dir":"relative"}`, `{"args":["x"],"dir":"/","bogus":1}`, `not json`} {
		req, _ := http.NewRequest(http.MethodPost, "http://paydesk/run", strings.NewReader(body))
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", body, resp.Status)
		}
	}
}
