package pushlistener

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"paydesk/internal/pgtest"
	"paydesk/store"
)

// The PostgreSQL crash tests (issue 17): kill -9 of one of two listener
// processes that share a database, and the database stopped hard
// (pg_ctl stop -m immediate) under load. Both skip without PAYDESK_TEST_PG
// (run them with `. .ci/pg; go test ./pushlistener/ -run 'TestPG' -v`) and
// with -short.

// pgAckBook is what a sender knows: which pushes were answered 200.
type pgAckBook struct {
	mu        sync.Mutex
	acked     map[int]bool
	resent    int // acknowledged again after an earlier acknowledgement
	failures  int // no answer (connection refused or cut): outcome unknown
	statuses  map[int]int
	sent      atomic.Int64
	bothSent  atomic.Int64  // pushes posted to both listeners
	bothAcked atomic.Int64  // of those, answered 200 by both
	grew      chan struct{} // a push was acknowledged for the first time (buffered, 1)
}

func newPGAckBook() *pgAckBook {
	return &pgAckBook{acked: map[int]bool{}, statuses: map[int]int{}, grew: make(chan struct{}, 1)}
}

// waitAcked waits until at least want distinct pushes were acknowledged
// (and, with both, one of them by both listeners); only a stuck test waits
// stuckAfter.
func (b *pgAckBook) waitAcked(t testing.TB, want int, both bool) {
	t.Helper()
	timeout := time.After(stuckAfter)
	for {
		b.mu.Lock()
		got := len(b.acked)
		b.mu.Unlock()
		if got >= want && (!both || b.bothAcked.Load() > 0) {
			return
		}
		select {
		case <-b.grew:
		case <-timeout:
			t.Fatalf("%d of %d pushes acknowledged (%d by both listeners) after %v: the listeners are stuck", got, want, b.bothAcked.Load(), stuckAfter)
		}
	}
}

// pgPushCents is the amount of push n, so the content of each stored push
// can be checked against what was sent.
func pgPushCents(n int) int64 { return int64(n%9000 + 100) }

// post sends push n to url once; it returns whether it was answered 200.
func (b *pgAckBook) post(t testing.TB, client *http.Client, url string, n int) bool {
	body := encode(t, giftCardPush(n, pgPushCents(n)))
	req := signedPost(t, url, body, creds, time.Now().Unix())
	b.sent.Add(1)
	resp, err := client.Do(req)
	if err != nil {
		b.mu.Lock()
		b.failures++
		b.mu.Unlock()
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.statuses[resp.StatusCode]++
	if resp.StatusCode != http.StatusOK {
		return false
	}
	if b.acked[n] {
		b.resent++
	}
	b.acked[n] = true
	select {
	case b.grew <- struct{}{}:
	default:
	}
	return true
}

// someAcked returns up to k acknowledged push numbers.
func (b *pgAckBook) someAcked(k int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int
	for n := range b.acked {
		if len(out) >= k {
			break
		}
		out = append(out, n)
	}
	return out
}

// pgVerdict is the check of the store against the acknowledgements.
type pgVerdict struct {
	stored, distinct          int // push records; distinct (key, content) pairs
	missing, twice, wrong     int // acknowledged but absent; stored more than once; content not what was sent
	notInInbox                int // acknowledged but not in the push inbox (what an acknowledgement promises)
	waiting                   int // in the inbox, not applied, when the listeners were gone
	drain                     time.Duration
	storedUnacked             int // stored but never acknowledged (outcome-unknown pushes that made it)
	ackedTotal, ackedDistinct int
}

func (v pgVerdict) String() string {
	return fmt.Sprintf("%d acknowledged (%d distinct pushes), %d acknowledged but not in the inbox; %d waiting in the inbox at the end, applied in %v; %d push records stored (%d distinct key+content, %d of them never acknowledged), %d acknowledged but missing, %d stored twice, %d with content not as sent",
		v.ackedTotal, v.ackedDistinct, v.notInInbox, v.waiting, v.drain.Round(time.Millisecond), v.stored, v.distinct, v.storedUnacked, v.missing, v.twice, v.wrong)
}

// checkPGStore opens the database and checks it against the book: every
// acknowledged push is in the push inbox (what a listener's 200 promises);
// then, the inbox drained (the listeners are gone: what their appliers had
// not applied yet is applied here), it counts every push record by key and
// content (the key and a hash of the body as stored).
func checkPGStore(t *testing.T, pgURL string, b *pgAckBook) pgVerdict {
	t.Helper()
	db, err := store.Open(pgURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v pgVerdict
	inInbox := map[string]bool{}
	{
		conn, err := pgx.Connect(context.Background(), pgURL)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(context.Background(), `SELECT key FROM paydesk_push_inbox`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var k []byte
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			inInbox[string(k)] = true
		}
		rows.Close()
		conn.Close(context.Background())
	}
	b.mu.Lock()
	for n := range b.acked {
		if key := giftCardPush(n, 0).Key(); !inInbox[key] {
			v.notInInbox++
			t.Errorf("acknowledged push %s is not in the inbox", key)
		}
	}
	b.mu.Unlock()
	if v.waiting, err = db.InboxWaiting(context.Background()); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if _, err := db.DrainInbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.drain = time.Since(started)
	pushes, err := db.Pushes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	type keyContent struct {
		key  string
		body [32]byte
	}
	byKC := map[keyContent]int{}
	byKey := map[string]int{}
	v.stored = len(pushes)
	for _, p := range pushes {
		byKC[keyContent{p.Key, sha256.Sum256(p.Body)}]++
		byKey[p.Key]++
	}
	v.distinct = len(byKC)
	for kc, c := range byKC {
		if c > 1 {
			v.twice++
			t.Errorf("push %s (body %x…) stored %d times", kc.key, kc.body[:4], c)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v.ackedDistinct, v.ackedTotal = len(b.acked), len(b.acked)+b.resent
	ackedKeys := map[string]bool{}
	for n := range b.acked {
		key := giftCardPush(n, 0).Key()
		ackedKeys[key] = true
		want := sha256.Sum256(encode(t, giftCardPush(n, pgPushCents(n))))
		switch c := byKC[keyContent{key, want}]; {
		case c == 0 && byKey[key] > 0:
			v.wrong++
			t.Errorf("acknowledged push %s stored with other content", key)
		case c == 0:
			v.missing++
			t.Errorf("acknowledged push %s missing", key)
		}
	}
	for _, p := range pushes {
		if !ackedKeys[p.Key] {
			v.storedUnacked++
		}
		// The decoded amount, too, must be the one sent.
		var n int
		if _, err := fmt.Sscanf(p.Key, "%X", &n); err == nil && !p.Amount.Equal(decimal.New(pgPushCents(n), -2)) {
			v.wrong++
			t.Errorf("push %s stored with amount %s, sent %d cents", p.Key, p.Amount, pgPushCents(n))
		}
	}
	return v
}

// pgChild is one listener process slot of TestPGCrashTwoListeners.
type pgChild struct {
	name string
	cmd  *exec.Cmd
	out  *bytes.Buffer
	url  atomic.Pointer[string]
}

func startPGChild(t *testing.T, c *pgChild, pgURL, dir string) time.Duration {
	t.Helper()
	start := time.Now()
	addrFile := filepath.Join(dir, c.name+".addr")
	_ = os.Remove(addrFile)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+pgURL+"|"+addrFile) // store.Open takes the URL as it takes a file
	c.out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.cmd = cmd
	addr := waitForFile(t, addrFile, cmd, c.out)
	u := "http://" + addr + "/push"
	c.url.Store(&u)
	return time.Since(start)
}

// killPGChild SIGKILLs the child and returns the errors it logged (why it
// answered 500), by kind.
func killPGChild(c *pgChild) map[string]int {
	if c.cmd == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
	c.cmd = nil
	why := map[string]int{}
	for _, line := range strings.Split(c.out.String(), "\n") {
		if _, msg, ok := strings.Cut(line, "listener: push "); ok {
			if _, err, ok := strings.Cut(msg, ": "); ok {
				why[pgReason(err)]++
			}
		}
	}
	return why
}

// TestPGCrashTwoListeners runs two listener processes on one fresh
// PostgreSQL database and sends signed pushes to both alternately, some to
// both (a gateway retrying a push at a second listener behind one URL),
// and acknowledged ones again; meanwhile it SIGKILLs one listener at a
// random moment (after a random number of new acknowledgements) and
// restarts it, again and again, alternating. At the end
// every push answered 200 must be in the database exactly once, with the
// content sent, and no push stored twice.
func TestPGCrashTwoListeners(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	skipKillsUnderRace(t)
	pgURL := pgtest.Fresh(t)
	// The schema first, so the children do not both start on an empty
	// database (they would wait for each other's migration lock).
	db, err := store.Open(pgURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	const rounds = 24
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(20261123))
	children := []*pgChild{{name: "A"}, {name: "B"}}
	t.Cleanup(func() { // before Fresh's drop (registered later, runs first)
		for _, c := range children {
			killPGChild(c)
		}
	})
	for _, c := range children {
		startPGChild(t, c, pgURL, dir)
	}

	book := newPGAckBook()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var stop atomic.Bool
	defer stop.Store(true) // the senders end when a wait fails the test, too
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				if g == 0 && i%20 == 0 {
					// Acknowledged pushes again, to either listener.
					for j, n := range book.someAcked(3) {
						book.post(t, client, *children[(i+j)%2].url.Load(), n)
					}
					continue
				}
				n := int(next.Add(1))
				first, other := children[n%2], children[(n+1)%2]
				ok := book.post(t, client, *first.url.Load(), n)
				// Every 4th push goes to both, as a gateway that retries
				// at the other listener behind one URL: after a 200 (the
				// answer lost on the way back) or after a failure.
				if n%4 == 0 || !ok && n%2 == 0 {
					book.bothSent.Add(1)
					if book.post(t, client, *other.url.Load(), n) && ok {
						book.bothAcked.Add(1)
					}
				}
				if !ok {
					time.Sleep(2 * time.Millisecond) // not a hot loop on a dead port
				}
			}
		}(g)
	}

	var restarts []time.Duration
	why500 := map[string]int{}
	started := time.Now()
	for round := 0; round < rounds; round++ {
		// Kill once a random number of new pushes were acknowledged, not
		// after a time: a slow machine makes the rounds longer, not emptier.
		book.mu.Lock()
		base := len(book.acked)
		book.mu.Unlock()
		book.waitAcked(t, base+10+rng.Intn(30), false)
		c := children[round%2]
		for k, n := range killPGChild(c) {
			why500[k] += n
		}
		restarts = append(restarts, startPGChild(t, c, pgURL, dir))
	}
	// Both up once more, under load, until some more pushes (one of them
	// by both listeners) are acknowledged.
	book.mu.Lock()
	base := len(book.acked)
	book.mu.Unlock()
	book.waitAcked(t, base+20, true)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(started)
	for _, c := range children {
		for k, n := range killPGChild(c) {
			why500[k] += n
		}
	}

	v := checkPGStore(t, pgURL, book)
	var slowest time.Duration
	for _, d := range restarts {
		slowest = max(slowest, d)
	}
	book.mu.Lock()
	t.Logf("PostgreSQL crash test, two listener processes: %d SIGKILLs in %.1f s (restart up to %v), %d posts (%d pushes posted to both listeners, %d answered 200 by both), answers %v, %d failed in flight; %s",
		rounds, elapsed.Seconds(), slowest.Round(time.Millisecond), book.sent.Load(), book.bothSent.Load(), book.bothAcked.Load(), book.statuses, book.failures, v)
	book.mu.Unlock()
	for k, n := range why500 {
		t.Logf("  500 × %d: %s", n, k)
	}
	if v.missing > 0 || v.twice > 0 || v.wrong > 0 || v.notInInbox > 0 {
		t.Fatalf("%d acknowledged pushes lost (%d not in the inbox), %d stored twice, %d stored wrong", v.missing, v.notInInbox, v.twice, v.wrong)
	}
	if v.ackedDistinct < 10*rounds || book.bothAcked.Load() == 0 {
		t.Fatalf("only %d pushes acknowledged (%d by both listeners): the test did not exercise the listeners", v.ackedDistinct, book.bothAcked.Load())
	}
}

// pgReason shortens a listener's error to its kind: push keys, database
// URLs and ports out, at most 140 characters.
func pgReason(err string) string {
	err = reKey.ReplaceAllString(err, "KEY")
	err = reURL.ReplaceAllString(err, "URL")
	err = rePort.ReplaceAllString(err, "127.0.0.1:PORT")
	if len(err) > 200 {
		err = err[:200] + "…"
	}
	return err
}

var (
	reKey  = regexp.MustCompile(`[0-9A-F]{32}`)
	reURL  = regexp.MustCompile(`postgres://[^ )]*`)
	rePort = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)
