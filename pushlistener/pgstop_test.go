package pushlistener

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/api"
	"paydesk/store"
)

// TestPGStopImmediate runs a listener on a PostgreSQL server of its own
// and stops the server hard (pg_ctl stop -m immediate) under load, three
// times, starting it again once a dozen pushes were answered while it was
// down. While the server is down the listener must answer 500 (never 200:
// a push sent after the stop and answered before the start cannot have
// been stored); after each restart pushes are acknowledged again, and at
// the end every push answered 200 must be in the database exactly once.
// Each phase lasts until a count of answers, not a time, so a slow machine
// makes it longer, never emptier.
func TestPGStopImmediate(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped with -short")
	}
	pg := startPrivatePG(t)

	var whyMu sync.Mutex
	why := map[string]int{}
	db, err := store.Open(pg.URL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{DB: db, Verifier: api.VerifierFor(creds), Logf: func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		whyMu.Lock()
		why[pgReason(msg)]++
		whyMu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	url := "http://" + addr.String() + "/push"

	// down: the server is stopped (from when pg_ctl stop returned until
	// pg_ctl start is called); downSeq counts the stops.
	var down atomic.Bool
	var downSeq atomic.Int64
	var downPosts, downOK, downOther atomic.Int64
	book := newPGAckBook()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	var latMu sync.Mutex
	var downLat []time.Duration // how long a 500 took while the server was down
	var next atomic.Int64
	var stop atomic.Bool
	defer stop.Store(true) // the senders end when a wait fails the test, too
	var wg sync.WaitGroup
	for g := 0; g < 12; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				n := int(next.Add(1))
				wasDown, seq := down.Load(), downSeq.Load()
				start := time.Now()
				body := encode(t, giftCardPush(n, pgPushCents(n)))
				req := signedPost(t, url, body, creds, time.Now().Unix())
				book.sent.Add(1)
				resp, err := client.Do(req)
				status := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				// Sent and answered within one down period.
				inDown := wasDown && down.Load() && downSeq.Load() == seq
				book.mu.Lock()
				if err != nil {
					book.failures++
				} else {
					book.statuses[status]++
					if status == http.StatusOK {
						book.acked[n] = true
					}
				}
				book.mu.Unlock()
				if inDown {
					downPosts.Add(1)
					switch status {
					case http.StatusOK:
						downOK.Add(1)
					case http.StatusInternalServerError:
						latMu.Lock()
						downLat = append(downLat, time.Since(start))
						latMu.Unlock()
					default:
						downOther.Add(1)
					}
				}
				if status != http.StatusOK {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}(g)
	}

	const cycles = 3
	type cycle struct {
		ackedBefore, ackedDown, ackedAfter int
		stopTook, startTook, firstOK       time.Duration
	}
	acked := func() int { book.mu.Lock(); defer book.mu.Unlock(); return len(book.acked) }
	var done []cycle
	for c := 0; c < cycles; c++ {
		var cy cycle
		prev := acked()
		waitFor(t, "20 more pushes acknowledged before the stop", func() bool { return acked() >= prev+20 })
		cy.ackedBefore = acked()
		t0 := time.Now()
		if err := pg.stopImmediate(); err != nil {
			t.Fatal(err)
		}
		cy.stopTook = time.Since(t0)
		downSeq.Add(1)
		down.Store(true)
		downBase := downPosts.Load()
		waitFor(t, "12 pushes answered while the server is down", func() bool { return downPosts.Load() >= downBase+12 })
		down.Store(false)
		cy.ackedDown = acked() - cy.ackedBefore
		t1 := time.Now()
		if err := pg.start(); err != nil {
			t.Fatalf("%v\n%s", err, pg.tail())
		}
		cy.startTook = time.Since(t1)
		base := acked()
		waitFor(t, "a push acknowledged after the restart", func() bool { return acked() > base })
		cy.firstOK = time.Since(t1)
		waitFor(t, "20 pushes acknowledged after the restart", func() bool { return acked() >= base+20 })
		cy.ackedAfter = acked() - base
		done = append(done, cy)
	}
	stop.Store(true)
	wg.Wait()
	client.CloseIdleConnections()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	sessions := pgSessions(t, pg.URL)
	closed := make(chan struct{})
	go func() { _ = db.Close(); close(closed) }()
	closeHung := false
	select {
	case <-closed:
	case <-time.After(stuckAfter):
		closeHung = true // its pool waits for connections never given back
	}

	v := checkPGStore(t, pg.URL, book)
	for i, cy := range done {
		t.Logf("cycle %d: %d pushes acknowledged before the stop; stop -m immediate took %v; %d acknowledged while down (commits that made it before the stop); start took %v, first 200 %v after the start; %d acknowledged after it (the test waits for 20)",
			i+1, cy.ackedBefore, cy.stopTook.Round(time.Millisecond), cy.ackedDown, cy.startTook.Round(time.Millisecond), cy.firstOK.Round(time.Millisecond), cy.ackedAfter)
	}
	sort.Slice(downLat, func(i, j int) bool { return downLat[i] < downLat[j] })
	p99 := time.Duration(0)
	if len(downLat) > 0 {
		p99 = downLat[min(len(downLat)-1, len(downLat)*99/100)]
	}
	book.mu.Lock()
	t.Logf("PostgreSQL stopped hard %d times under load: %d posts, answers %v, %d failed in flight; sent and answered while down: %d posts, %d answered 500 (p99 %v), %d answered 200, %d otherwise; %s",
		cycles, book.sent.Load(), book.statuses, book.failures, downPosts.Load(), len(downLat), p99.Round(time.Millisecond), downOK.Load(), downOther.Load(), v)
	book.mu.Unlock()
	for k, n := range why {
		t.Logf("  500 × %d: %s", n, k)
	}
	t.Logf("the listener's sessions on the server after the load: %s", sessions)
	if closeHung {
		t.Errorf("store.DB.Close did not return within %v: its connection pool waits for connections that were never released", stuckAfter)
	}
	if downOK.Load() > 0 {
		t.Errorf("%d pushes sent while the database was down were answered 200", downOK.Load())
	}
	if downOther.Load() > 0 {
		t.Errorf("%d pushes sent while the database was down were answered neither 500 nor 200", downOther.Load())
	}
	if v.missing > 0 || v.twice > 0 || v.wrong > 0 || v.notInInbox > 0 {
		t.Fatalf("%d acknowledged pushes lost (%d not in the inbox), %d stored twice, %d stored wrong", v.missing, v.notInInbox, v.twice, v.wrong)
	}
	for i, cy := range done {
		if cy.ackedAfter == 0 {
			t.Errorf("cycle %d: no push acknowledged after the restart", i+1)
		}
	}
}

// pgSessions describes the sessions on the database at u other than this
// query's own, by state (idle in transaction is a transaction left open).
func pgSessions(t *testing.T, u string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return "(cannot connect: " + err.Error() + ")"
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT coalesce(state, '?'), count(*), coalesce(max(now() - xact_start)::text, '-')
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1 ORDER BY 1`)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var state, age string
		var n int
		if err := rows.Scan(&state, &n, &age); err != nil {
			return "(" + err.Error() + ")"
		}
		out = append(out, fmt.Sprintf("%d %s (oldest transaction open %s)", n, state, age))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
