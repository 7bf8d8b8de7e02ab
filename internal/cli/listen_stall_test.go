package cli

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pushload"
)

// TestListenStalledStdout (F3): with stdout a pipe nobody reads, every
// signed push is still answered (the lines are dropped and counted, and
// stderr says so), and the command ends within a few seconds of its
// context ending (SIGTERM).
func TestListenStalledStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 6,000 pushes")
	}
	pr, pw := io.Pipe()
	defer pr.Close()
	var stderr lockedBuffer
	env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
	args := []string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", filepath.Join(t.TempDir(), "listen.db")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: pw, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}, args)
	}()
	re := regexp.MustCompile(`listening on http://(\S+)`)
	var addr string
	for deadline := time.Now().Add(5 * time.Second); addr == ""; time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no address printed: %s", stderr.String())
		}
	}
	const n = 6000
	reqs, err := pushload.Prepare(pushload.Plan{Addr: addr, Credentials: api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}, Pushes: n})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	res, err := pushload.Run(runCtx, addr, reqs, 16)
	if err != nil || res.Statuses[200] != n {
		t.Fatalf("with stdout stalled: %v answers, %v; want %d × 200", res.Statuses, err, n)
	}
	if !strings.Contains(stderr.String(), "lines dropped") {
		t.Errorf("stderr does not say lines were dropped: %s", stderr.String())
	}
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
		t.Logf("ended %v after its context, stdout still stalled", time.Since(start).Round(time.Millisecond))
	case <-time.After(8 * time.Second):
		t.Fatal("paydesk listen did not end within 8 s of its context with stdout stalled")
	}
}
