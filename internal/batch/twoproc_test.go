package batch

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"paydesk/internal/pgtest"
)

// TestTwoProcessesCaptureTheSameLines: two agents on two machines — two
// paydesk processes on one team database — capture the same two shoes of
// a reservation at the same moment. Exactly one capture reaches the
// gateway; the other process is refused, naming the operation that holds
// the reservation (or, when the first had already settled, the ledger that
// has no two shoes left), and sends nothing.
func TestTwoProcessesCaptureTheSameLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	url := pgtest.Fresh(t)
	bin := buildPaydesk(t)
	ctx := context.Background()
	e := newEnv(t, envOpts{path: url})
	const rounds = 4
	nums := e.reserveMany(ctx, rounds)
	e.mu.Lock()
	e.delay = 300 * time.Millisecond // the first capture is still on its way when the second starts
	e.mu.Unlock()
	dir := t.TempDir()
	environ := []string{"PAYDESK_WEBSITE_KEY=" + testCreds.WebsiteKey, "PAYDESK_SECRET_KEY=" + testCreds.SecretKey,
		"XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	for _, num := range nums {
		var wg sync.WaitGroup
		codes := make([]int, 2)
		errs := make([]string, 2)
		for i, who := range []string{"alice", "bob"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(bin, "capture", num, "SHOE-42=2", "--gateway", e.gateway.URL, "--db", url,
					"--push-url", "http://127.0.0.1:9/push", "--yes")
				cmd.Env = append(environ, "USER="+who)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				if x, ok := err.(*exec.ExitError); ok {
					codes[i] = x.ExitCode()
				} else if err != nil {
					codes[i] = -1
				}
				errs[i] = stderr.String()
			}()
		}
		wg.Wait()
		if got := e.paysOf(num); got != 1 {
			t.Fatalf("reservation %s: %d captures reached the gateway, want exactly 1 (exit codes %v; %q)", num, got, codes, errs)
		}
		ok, refused := 0, ""
		for i, c := range codes {
			if c == 0 {
				ok++
			} else {
				refused = errs[i]
			}
		}
		if ok != 1 {
			t.Fatalf("reservation %s: %d processes succeeded, want 1 (exit codes %v; %q)", num, ok, codes, errs)
		}
		named := strings.Contains(refused, "still open for this target (operation") && strings.Contains(refused, " by ") &&
			strings.Contains(refused, " since ")
		// Three ways to lose, each saying why: the other's operation is
		// still open, the ledger changed under the plan, or (on a busy
		// machine, the other was done before this one planned) nothing
		// of it is left to capture.
		if !named && !strings.Contains(refused, "changed since it was planned") && !strings.Contains(refused, "left to capture (reserved") {
			t.Errorf("reservation %s: the refusal does not say who holds it (or what changed): %q", num, refused)
		}
		if strings.HasPrefix(strings.TrimSpace(refused), "FAILED: Pay ") {
			t.Errorf("reservation %s: a refused capture is named by the gateway's action: %q", num, refused)
		}
		t.Logf("reservation %s: one capture sent; the other process said: %s", num, strings.TrimSpace(refused))
	}
}
