package pushlistener

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"paydesk/internal/pushload"
	"paydesk/store"
)

// BenchmarkIngestDurable posts signed pushes over loopback HTTP from
// parallel senders to a listener whose cache fsyncs (no NoSync); a push is
// acknowledged only after its transaction is on disk. "group-commit" is the
// listener as shipped; "naive" gives every push its own transaction and
// fsync, for comparison; "nosync-ceiling" skips fsync to show what the disk
// costs. Each sender waits for its answer before it sends again, so the
// sender count sets how many pushes can share a commit: the figures at 64
// and 192 senders show the trade between throughput and latency.
//
// The pushes carry rising transaction keys, so the cache's per-key indexes
// grow at one end; "random-keys" sends the random keys a gateway really
// hands out, which land on a different page of each index every time.
func BenchmarkIngestDurable(b *testing.B) {
	for _, mode := range []struct {
		name       string
		opts       store.Options
		randomKeys bool
		senders    []int
	}{
		{"group-commit", store.Options{}, false, []int{64, 128, 192}},
		{"group-commit-random-keys", store.Options{}, true, []int{192}},
		{"naive", store.Options{NoGroupCommit: true}, false, []int{64}},
		{"nosync-ceiling", store.Options{NoSync: true}, false, []int{192}},
	} {
		for _, n := range mode.senders {
			b.Run(fmt.Sprintf("%s/senders=%d", mode.name, n), func(b *testing.B) { benchIngest(b, mode.opts, mode.randomKeys, n) })
		}
	}
}

func benchIngest(b *testing.B, opts store.Options, randomKeys bool, senders int) {
	db, url := startListener(b, opts, nil, false)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/push")
	// Bodies and signatures are made before the clock starts: the figure is
	// the listener's, not the test's JSON encoder's. The senders write the
	// pre-signed requests on keep-alive connections and read the status
	// line: on a 2-core machine the net/http client would burn as much CPU
	// as the listener it measures.
	reqs, err := pushload.Prepare(pushload.Plan{Addr: addr, Credentials: creds, Pushes: b.N, RandomKeys: randomKeys})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	res, err := pushload.Run(context.Background(), addr, reqs, senders)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Statuses[http.StatusOK] != b.N {
		b.Fatalf("answers %v, want %d × 200", res.Statuses, b.N)
	}
	// CPU of the whole process (listener and senders) per push: the figure
	// to watch when the machine, not the disk, is the limit.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(res.Percentile(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(res.PerSecond(), "pushes/s")
	if n, err := db.Counts(b.Context()); err != nil || n.Pushes != uint64(b.N) {
		b.Fatalf("stored %d pushes of %d (%v)", n.Pushes, b.N, err)
	}
}

// BenchmarkIngestDuplicates is BenchmarkIngestDurable's group-commit run
// for a gateway that delivers everything twice: the pushes are sent once
// before the clock starts, then again, every one a duplicate (whose
// receipt the store records against the push stored first).
func BenchmarkIngestDuplicates(b *testing.B) {
	db, url := startListener(b, store.Options{}, nil, false)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/push")
	reqs, err := pushload.Prepare(pushload.Plan{Addr: addr, Credentials: creds, Pushes: b.N})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pushload.Run(context.Background(), addr, reqs, 64); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := pushload.Run(context.Background(), addr, reqs, 64)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Statuses[http.StatusOK] != b.N {
		b.Fatalf("answers %v, want %d × 200", res.Statuses, b.N)
	}
	b.ReportMetric(float64(res.Percentile(99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(res.PerSecond(), "pushes/s")
	if n, err := db.Counts(b.Context()); err != nil || n.Pushes != uint64(b.N) {
		b.Fatalf("stored %d pushes of %d (%v)", n.Pushes, b.N, err)
	}
}
