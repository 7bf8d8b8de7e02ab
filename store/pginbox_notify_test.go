package store

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
)

// A listener that does not apply wakes the applier with one NOTIFY and
// then, until notifyEvery has passed, gathers its batches into the next
// one, whose payload counts them: thirty batches committed while the
// pause lasts make two notifications that count thirty pushes, where each
// batch sent one before.
func TestInboxNotifyGathersBatches(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	url := freshNative(t)
	db, err := Open(url, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	resume := make(chan struct{})
	db.inbox.notifyPace = func() bool {
		<-resume
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+inboxChannel); err != nil {
		_ = conn.Close(context.Background())
		t.Fatal(err)
	}
	var mu sync.Mutex
	var payloads []int
	stopped := make(chan struct{})
	defer func() { cancel(); <-stopped; _ = conn.Close(context.Background()) }()
	go func() {
		defer close(stopped)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				return
			}
			c, _ := strconv.Atoi(n.Payload)
			mu.Lock()
			payloads = append(payloads, c)
			mu.Unlock()
		}
	}()
	got := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		sum := 0
		for _, c := range payloads {
			sum += c
		}
		return len(payloads), sum
	}
	ps := inboxPushes(30)
	for _, p := range ps { // a batch each: each waits for its commit
		ingest(t, db, p, nil)
	}
	close(resume)
	waitLease(t, "notifications counting every push", func() bool { _, sum := got(); return sum == len(ps) })
	if n, sum := got(); n != 2 {
		t.Errorf("%d notifications counting %d pushes; want 2", n, sum)
	}
}
