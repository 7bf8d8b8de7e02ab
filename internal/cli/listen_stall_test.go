package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pushload"
)

// TestListenStalledStdout (F3): with stdout a pipe nobody reads, every
// signed push is still answered (the lines are dropped and counted, and
// stderr says so), and the command ends after its context ends (SIGTERM).
// It asserts progress, not a rate: the pushes go in batches and each batch
// must be answered before a deadline that only a stuck listener reaches
// (one held back by stdout never answers again), so a slow machine takes
// longer but does not fail.
func TestListenStalledStdout(t *testing.T) {
	// A line is about 200 bytes: 32 KiB hold some 160 of the 600, so
	// the later batches are answered only if dropping lines keeps the
	// handler going (the 1 MiB of a real listen is the same code, filled by
	// some 5,000 pushes).
	const n, outBytes = 600, 32 << 10
	pr, pw := io.Pipe()
	defer pr.Close()
	var stderr lockedBuffer
	env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
	args := []string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", filepath.Join(t.TempDir(), "listen.db")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, IO{Stdout: pw, Stderr: &stderr, Getenv: func(k string) string { return env[k] }, outBytes: outBytes}, args)
	}()
	addr := awaitListening(t, &stderr)
	reqs, err := pushload.Prepare(pushload.Plan{Addr: addr, Credentials: api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}, Pushes: n})
	if err != nil {
		t.Fatal(err)
	}
	const batch = 50
	for from := 0; from < n; from += batch {
		runCtx, stop := context.WithTimeout(ctx, stuckAfter)
		res, err := pushload.Run(runCtx, addr, reqs[from:from+batch], 16)
		stop()
		if err != nil || res.Statuses[200] != batch {
			t.Fatalf("with stdout stalled, pushes %d to %d: %v answers, %v; want %d × 200 (%d answered before)",
				from+1, from+batch, res.Statuses, err, batch, from)
		}
	}
	if !strings.Contains(stderr.String(), "lines dropped") {
		t.Errorf("stderr does not say lines were dropped: %s", stderr.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d", code)
		}
	case <-time.After(stuckAfter):
		t.Fatalf("paydesk listen did not end within %v of its context with stdout stalled", stuckAfter)
	}
}

// stuckAfter is how long a test waits for the listener to get on: long
// enough that only a stuck one, never a slow machine, reaches it.
const stuckAfter = 2 * time.Minute
