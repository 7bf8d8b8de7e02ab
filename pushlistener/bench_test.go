package pushlistener

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// BenchmarkIngestDurable posts signed pushes over loopback HTTP from many
// parallel senders to a listener whose cache fsyncs (no NoSync); a push is
// acknowledged only after its transaction is on disk. "group-commit" is the
// listener as shipped; "naive" gives every push its own transaction and
// fsync, for comparison.
func BenchmarkIngestDurable(b *testing.B) {
	for _, mode := range []struct {
		name  string
		naive bool
	}{{"group-commit", false}, {"naive", true}, {"nosync-ceiling", false}} {
		b.Run(mode.name, func(b *testing.B) {
			benchIngest(b, store.Options{NoGroupCommit: mode.naive, NoSync: mode.name == "nosync-ceiling"})
		})
	}
}

func benchIngest(b *testing.B, opts store.Options) {
	db, err := store.Open(filepath.Join(b.TempDir(), "listen.db"), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	srv, err := New(Config{DB: db, Verifier: api.VerifierFor(creds), Logf: b.Logf})
	if err != nil {
		b.Fatal(err)
	}
	addr, err := srv.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			b.Error(err)
		}
	}()
	url := "http://" + addr.String() + "/push"
	hostPath := api.HostPath(url)

	// Bodies and signatures are made before the clock starts: the figure is
	// the listener's, not the test's JSON encoder's.
	type signed struct {
		body []byte
		auth string
	}
	reqs := make([]signed, b.N)
	ts := time.Now().Unix()
	for i := range reqs {
		body := encode(b, giftCardPush(i+1, int64(100+i%5000)))
		reqs[i] = signed{body, api.Sign(creds, http.MethodPost, hostPath, body, api.NewNonce(), ts).String()}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute}}
	defer client.CloseIdleConnections()

	var next atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	b.SetParallelism(32) // 64 senders on this 2-core machine
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			r := reqs[next.Add(1)-1]
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(r.body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", r.auth)
			start := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mine = append(mine, time.Since(start))
			if resp.StatusCode != http.StatusOK {
				b.Errorf("HTTP %d", resp.StatusCode)
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	elapsed := b.Elapsed()
	slices.Sort(latencies)
	if len(latencies) > 0 {
		p99 := latencies[min(len(latencies)-1, len(latencies)*99/100)]
		b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pushes/s")
	if n, err := db.Counts(); err != nil || n.Pushes != uint64(b.N) {
		b.Fatalf("stored %d pushes of %d (%v)", n.Pushes, b.N, err)
	}
}
