package pushlistener

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

const crashChildEnv = "PAYDESK_CRASH_CHILD" // "dbpath|addrfile"

// TestCrashChild is the listener process of TestCrashDurability and of
// TestPGCrashTwoListeners (the spec's store is a file or a postgres:// URL);
// it does nothing unless started by one of them.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("runs only as a child of TestCrashDurability or TestPGCrashTwoListeners")
	}
	// A URL holds no "|", the file names may not either.
	dbPath, addrFile, _ := strings.Cut(spec, "|")
	// As paydesk listen opens it: on a file the pushes go to its push
	// inbox, answered once appended (a team's database has its own).
	db, err := store.Open(dbPath, store.Options{PushInbox: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{DB: db, Verifier: api.VerifierFor(creds),
		Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "listener: "+format+"\n", args...) }})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tmp := addrFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(addr.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, addrFile); err != nil {
		t.Fatal(err)
	}
	_ = srv.Serve(context.Background()) // until SIGKILL
}

// TestCrashDurability runs the listener in a child process, sends it
// signed pushes from many goroutines, SIGKILLs it at random moments and
// restarts it, again and again. At the end every push that was answered 200
// must be in the cache exactly once (re-sent acknowledged pushes included).
// A round's kill comes after a random number of new pushes were
// acknowledged in it, not after a fixed time: on a slow machine the rounds
// take longer but each exercises the listener as much as on a fast one.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	skipKillsUnderRace(t)
	const rounds = 24
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "listen.db")
	rng := rand.New(rand.NewSource(20260302))

	var (
		next     atomic.Int64 // push numbers handed out
		mu       sync.Mutex
		acked    = map[int]bool{} // push number → answered 200
		resent   int
		failures int
		sent     atomic.Int64
	)
	// The client's timeout only ends a request that hangs; a kill ends the
	// ones in flight at once.
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

	for round := 0; round < rounds; round++ {
		addrFile := filepath.Join(dir, "addr")
		_ = os.Remove(addrFile)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dbPath+"|"+addrFile)
		var childOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &childOut, &childOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addr := waitForFile(t, addrFile, cmd, &childOut)
		url := "http://" + addr + "/push"

		// Pick some acknowledged pushes to send again this round.
		mu.Lock()
		var again []int
		for n := range acked {
			if len(again) >= 5 {
				break
			}
			again = append(again, n)
		}
		mu.Unlock()

		// Kill once this round has acknowledged target pushes it had not
		// acknowledged before.
		target := int64(1 + rng.Intn(40))
		var fresh atomic.Int64
		reached := make(chan struct{})
		var once sync.Once
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := 0; g < 12; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					n := 0
					if g == 0 && i < len(again) {
						n = again[i]
					} else {
						n = int(next.Add(1))
					}
					body := encode(t, giftCardPush(n, int64(n%9000+100)))
					req := signedPost(t, url, body, creds, time.Now().Unix())
					sent.Add(1)
					resp, err := client.Do(req)
					if err != nil {
						mu.Lock()
						failures++
						mu.Unlock()
						continue // killed mid-flight: outcome unknown, not acknowledged
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						mu.Lock()
						first := !acked[n]
						if !first {
							resent++
						}
						acked[n] = true
						mu.Unlock()
						if first && fresh.Add(1) >= target {
							once.Do(func() { close(reached) })
						}
					}
				}
			}(g)
		}
		select {
		case <-reached:
		case <-time.After(stuckAfter):
			_ = cmd.Process.Kill()
			stop.Store(true)
			wg.Wait()
			_ = cmd.Wait() // the output is complete only after Wait
			t.Fatalf("round %d: %d of %d pushes acknowledged after %v: the listener is stuck: %s",
				round, fresh.Load(), target, stuckAfter, childOut.String())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		stop.Store(true)
		wg.Wait()
		client.CloseIdleConnections()
	}

	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pushes, err := db.Pushes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, p := range pushes {
		stored[p.Key]++
	}
	missing, twice := 0, 0
	for n := range acked {
		switch stored[giftCardPush(n, 0).Key()] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	for k, c := range stored {
		if c > 1 {
			t.Errorf("push %s stored %d times", k, c)
		}
	}
	t.Logf("crash test: %d SIGKILLs, %d pushes sent, %d acknowledged (%d of them re-sends of acknowledged pushes), %d failed in flight, %d stored, %d acknowledged but missing, %d stored twice",
		rounds, sent.Load(), len(acked)+resent, resent, failures, len(pushes), missing, twice)
	if missing > 0 || twice > 0 {
		t.Fatalf("%d acknowledged pushes lost, %d stored twice", missing, twice)
	}
}

// stuckAfter is how long a crash test waits for a listener to get on: long
// enough that only a stuck listener, never a slow machine, reaches it.
const stuckAfter = 2 * time.Minute

func waitForFile(t *testing.T, path string, cmd *exec.Cmd, childOut *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(stuckAfter)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && len(b) > 0 {
			return string(b)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait() // the output is complete only after Wait
	t.Fatalf("listener child did not start: %s", childOut.String())
	return ""
}

// skipKillsUnderRace skips a test whose listeners are child processes it
// kills: what it proves is durability across SIGKILL, which the race
// detector cannot see into (each child is a process of its own, and a
// killed one reports nothing), while instrumenting the children made them
// the race pass's most expensive minutes. .ci/run runs these tests without
// the race detector, beside the race pass.
func skipKillsUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("kills child processes: runs without -race (.ci/run does so beside the race pass)")
	}
}
