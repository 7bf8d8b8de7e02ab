package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"paydesk/store"
)

// buildPaydesk builds the paydesk binary once for the subprocess tests.
func buildPaydesk(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paydesk")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBatchKill9ThenResume: the real binary is killed with SIGKILL in the
// middle of a 150-reservation batch, with captures on their way (the
// gateway has processed them, the answer has not arrived); then --resume
// ends with every reservation captured exactly once at the gateway and the
// ones whose outcome the killed process never heard listed, not re-sent.
func TestBatchKill9ThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// What it proves is a resume across SIGKILL of a child the race
	// detector cannot see into; .ci/run runs it without the detector,
	// beside the race pass, with the listeners' kill tests.
	if raceEnabled {
		t.Skip("kills a child process: runs without -race (.ci/run does so beside the race pass)")
	}
	bin := buildPaydesk(t)
	ctx := context.Background()
	e := newEnv(t, envOpts{})
	const n = 150
	nums := e.reserveMany(ctx, n)
	// The binary owns the cache from here on.
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	e.db = nil
	e.live.Store(nil)
	dir := t.TempDir()
	manifestPath := filepath.Join(dir, "shipments.csv")
	if err := os.WriteFile(manifestPath, []byte(shipmentManifest(n)), 0o600); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.delay = 40 * time.Millisecond // answers take a while: a kill finds captures on their way
	e.mu.Unlock()
	common := []string{"--gateway", e.gateway.URL, "--db", e.dbPath, "--push-url", "http://127.0.0.1:9/push", "--yes", "--json"}
	environ := []string{"PAYDESK_WEBSITE_KEY=" + testCreds.WebsiteKey, "PAYDESK_SECRET_KEY=" + testCreds.SecretKey,
		"XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "HOME=" + dir, "USER=killtest", "PATH=" + os.Getenv("PATH")}

	first := exec.Command(bin, append([]string{"batch", "capture", manifestPath}, common...)...)
	first.Env = environ
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // only a stuck run
	for e.totalPays() < 40 {
		if time.Now().After(deadline) {
			_ = first.Process.Kill()
			t.Fatalf("the first run did not get going: %s", firstErr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.Process.Kill(); err != nil { // SIGKILL: no deferred cleanup runs
		t.Fatal(err)
	}
	_ = first.Wait()
	killedAt := e.totalPays()
	e.waitQuiet() // the handlers that were answering the killed run finish
	e.mu.Lock()
	e.delay = 0
	e.mu.Unlock()

	var out bytes.Buffer
	var errb bytes.Buffer
	resume := exec.Command(bin, append([]string{"batch", "capture", "--resume", "B1"}, common...)...)
	resume.Env = environ
	resume.Stdout, resume.Stderr = &out, &errb
	err := resume.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res OutcomeJSON
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("resume: exit %d, not JSON: %v\n%s\n%s", code, err, out.String(), errb.String())
	}
	t.Logf("killed after %d captures at the gateway; resume: exit %d, counts %v, sent %d, earlier %d",
		killedAt, code, res.Counts, res.Sent, res.Earlier)
	if res.Counts["settled"]+res.Counts["outcome_unknown"] != n {
		t.Fatalf("resume counts %v", res.Counts)
	}
	if res.Earlier == 0 || res.Sent == 0 {
		t.Fatalf("the kill did not land in the middle: sent %d earlier %d", res.Sent, res.Earlier)
	}
	if unk := res.Counts["outcome_unknown"]; unk > 0 && code != 3 {
		t.Fatalf("%d unknown but exit %d", unk, code)
	}
	unknown := map[string]bool{}
	for _, it := range res.Items {
		if it.State == "outcome_unknown" {
			unknown[it.Reservation] = true
			if it.OpID == 0 {
				t.Errorf("unknown item %s names no operation: %s", it.Reservation, it.Message)
			}
		}
	}
	db, err := store.Open(e.dbPath, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	captured := 0
	for _, num := range nums {
		p := e.paysOf(num)
		if p > 1 {
			t.Fatalf("%s captured %d times at the gateway", num, p)
		}
		captured += p
		if unknown[num] {
			continue // listed for the operator; the gateway has it at most once
		}
		if p != 1 {
			t.Fatalf("%s: settled in the batch, %d captures at the gateway", num, p)
		}
		r, err := db.Reservation(ctx, num)
		if err != nil {
			t.Fatal(err)
		}
		if got := ledger(r); got != wantShipped {
			t.Fatalf("%s: %s, want %s", num, got, wantShipped)
		}
	}
	t.Logf("%d of %d reservations captured once at the gateway, %d listed as outcome unknown, none twice", captured, n, len(unknown))
}

func (e *env) totalPays() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := 0
	for _, p := range e.pays {
		t += p
	}
	return t
}
