package store

import (
	"context"
	"testing"
	"time"

	"paydesk/internal/pgtest"
)

// BenchmarkInboxDrain measures the applier alone: b.N pushes ingested
// first, then applied from the inbox (DrainInbox), in pushes a second.
func BenchmarkInboxDrain(b *testing.B) {
	url := pgtest.Fresh(b)
	db, err := Open(url, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ps := inboxPushes(b.N)
	for _, p := range ps {
		body, _ := p.Encode()
		if _, err := db.IngestPush(context.Background(), PushRecord{Body: body}, p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	n, err := db.DrainInbox(context.Background())
	if err != nil || n != b.N {
		b.Fatalf("drained %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "pushes/s")
}
