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
	db, err := store.Open(dbPath, store.Options{})
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
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
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
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

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
						if acked[n] {
							resent++
						}
						acked[n] = true
						mu.Unlock()
					}
				}
			}(g)
		}
		time.Sleep(time.Duration(20+rng.Intn(250)) * time.Millisecond)
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
	pushes, err := db.Pushes(0, 0)
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
	if len(acked) < rounds {
		t.Fatalf("only %d pushes acknowledged: the test did not exercise the listener", len(acked))
	}
}

func waitForFile(t *testing.T, path string, cmd *exec.Cmd, childOut *bytes.Buffer) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
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
