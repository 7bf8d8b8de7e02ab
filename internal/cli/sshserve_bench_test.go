package cli

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	gossh "golang.org/x/crypto/ssh"

	"paydesk/internal/pushload"
	"paydesk/store"
	"paydesk/ui"
)

// sshBench is a serve runtime with its SSH server and a user alice whose
// key the benchmark holds.
type sshBench struct {
	h      *host
	addr   string
	signer gossh.Signer
}

func startSSHBench(b *testing.B) *sshBench {
	b.Helper()
	dir, err := filepathTemp(b)
	if err != nil {
		b.Fatal(err)
	}
	env := cliEnv(dir)
	getenv := func(k string) string { return env[k] }
	set, err := resolveSettings(nil, getenv)
	if err != nil {
		b.Fatal(err)
	}
	set.console = true
	rt, err := start(context.Background(), set, getenv)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	h := &host{what: "paydesk serve", rt: rt, db: rt.db, set: rt.set, getenv: getenv}
	srv, err := h.startSSH(context.Background(), sshOptions{Addr: "127.0.0.1:0", HostKey: filepath.Join(dir, "host_key")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, _ := gossh.NewSignerFromKey(priv)
	pub := signer.PublicKey()
	if err := rt.db.AddUser(b.Context(), store.User{Name: "alice", Role: "agent", Key: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(pub))),
		Fingerprint: gossh.FingerprintSHA256(pub)}); err != nil {
		b.Fatal(err)
	}
	return &sshBench{h: h, addr: srv.Addr().String(), signer: signer}
}

func filepathTemp(b *testing.B) (string, error) { return b.TempDir(), nil }

// frames signals each write of a screen, and ready once the first screen
// of the reservations is drawn.
type frames struct {
	c     chan struct{}
	ready chan struct{}
	once  sync.Once
}

func newFrames() *frames { return &frames{c: make(chan struct{}, 1), ready: make(chan struct{})} }

func (f *frames) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "reservations") {
		f.once.Do(func() { close(f.ready) })
	}
	select {
	case f.c <- struct{}{}:
	default:
	}
	return len(p), nil
}

// drain forgets frames already drawn.
func (f *frames) drain() {
	for {
		select {
		case <-f.c:
		default:
			return
		}
	}
}

// keyToScreen presses 2 and 1 (one tab, then the other) n times and returns the
// times from each key sent to the next frame drawn.
func keyToScreen(b *testing.B, in io.Writer, f *frames, n int) []time.Duration {
	b.Helper()
	select {
	case <-f.ready:
	case <-time.After(stuckAfter):
		b.Fatal("no first screen")
	}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		f.drain()
		t0 := time.Now()
		if _, err := io.WriteString(in, []string{"2", "1"}[i%2]); err != nil {
			b.Fatal(err)
		}
		select {
		case <-f.c:
		case <-time.After(stuckAfter):
			b.Fatal("no frame after a key")
		}
		out = append(out, time.Since(t0))
	}
	return out
}

func reportPercentiles(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}

// BenchmarkKeyToScreen: a key pressed to the frame it draws, in the local
// console (a program on pipes) and in a console over SSH on loopback, on
// one runtime in the same run.
func BenchmarkKeyToScreen(b *testing.B) {
	sb := startSSHBench(b)
	b.Run("local", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		app := ui.New(consoleConfig(ctx, sb.h.rt, sb.h.rt.set))
		defer app.Close()
		pr, pw := io.Pipe()
		f := newFrames()
		p := tea.NewProgram(app, tea.WithContext(ctx), tea.WithInput(pr), tea.WithOutput(f), tea.WithWindowSize(100, 30))
		go func() { _, _ = p.Run() }()
		b.ResetTimer()
		reportPercentiles(b, keyToScreen(b, pw, f, b.N))
	})
	b.Run("ssh", func(b *testing.B) {
		sess, in, f := sshConsole(b, sb)
		defer sess.Close()
		b.ResetTimer()
		reportPercentiles(b, keyToScreen(b, in, f, b.N))
	})
}

// sshConsole opens a console over SSH as alice, its frames signalled.
func sshConsole(b *testing.B, sb *sshBench) (*gossh.Client, io.Writer, *frames) {
	b.Helper()
	c, err := gossh.Dial("tcp", sb.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(sb.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := c.NewSession()
	if err != nil {
		b.Fatal(err)
	}
	f := newFrames()
	sess.Stdout = f
	in, err := sess.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := sess.RequestPty("xterm", 30, 100, gossh.TerminalModes{}); err != nil {
		b.Fatal(err)
	}
	if err := sess.Shell(); err != nil {
		b.Fatal(err)
	}
	return c, in, f
}

// BenchmarkPushesBesideSSHConsoles: the push listener's pushes/s with no
// console open and with 50 consoles over SSH, each redrawing as the
// pushes land. Its clients run in the test's process, so their work is
// charged to the server, on an empty cache: a quick check in one command.
// The figure to quote comes from internal/sshload (the real binary on a
// cache with data, the clients in a process of their own).
func BenchmarkPushesBesideSSHConsoles(b *testing.B) {
	for _, consoles := range []int{0, 50} {
		b.Run(fmt.Sprintf("consoles=%d", consoles), func(b *testing.B) {
			sb := startSSHBench(b)
			var open []*gossh.Client
			for i := 0; i < consoles; i++ {
				c, _, f := sshConsole(b, sb)
				open = append(open, c)
				select {
				case <-f.ready:
				case <-time.After(stuckAfter):
					b.Fatal("a console over ssh drew nothing")
				}
			}
			defer func() {
				var wg sync.WaitGroup
				for _, c := range open {
					wg.Add(1)
					go func() { defer wg.Done(); c.Close() }()
				}
				wg.Wait()
			}()
			const pushes = 500
			var total pushload.Result
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				reqs, err := pushload.Prepare(pushload.Plan{Addr: sb.h.rt.listenAddr, Credentials: sb.h.rt.creds, Pushes: pushes, First: 1 + i*pushes})
				if err != nil {
					b.Fatal(err)
				}
				res, err := pushload.Run(context.Background(), sb.h.rt.listenAddr, reqs, 8)
				if err != nil {
					b.Fatal(err)
				}
				if res.Statuses[200] != pushes {
					b.Fatalf("answers %v; want %d × 200", res.Statuses, pushes)
				}
				total.Latencies = append(total.Latencies, res.Latencies...)
				total.Elapsed += res.Elapsed
			}
			b.ReportMetric(total.PerSecond(), "pushes/s")
		})
	}
}
