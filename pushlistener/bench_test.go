package pushlistener

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/api"
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
		{"group-commit", store.Options{}, false, []int{64, 192}},
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
	hostPath := addr.String() + "/push"

	// Bodies and signatures are made before the clock starts: the figure is
	// the listener's, not the test's JSON encoder's.
	type signed struct {
		body []byte
		auth string
	}
	reqs := make([]signed, b.N)
	ts := time.Now().Unix()
	for i := range reqs {
		p := giftCardPush(i+1, int64(100+i%5000))
		if randomKeys {
			p.Transaction.Key = strings.ToUpper(api.NewNonce())
		}
		body := encode(b, p)
		reqs[i] = signed{body, api.Sign(creds, http.MethodPost, hostPath, body, api.NewNonce(), ts).String()}
	}
	// The senders write pre-signed HTTP/1.1 requests on keep-alive
	// connections and read the status line: on a 2-core machine the
	// net/http client would burn as much CPU as the listener it measures.
	reqBytes := make([][]byte, len(reqs))
	for i, r := range reqs {
		head := fmt.Sprintf("POST /push HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n",
			addr, r.auth, len(r.body))
		reqBytes[i] = append([]byte(head), r.body...)
	}

	var next atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	b.SetParallelism(max(1, senders/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("tcp", addr.String())
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var mine []time.Duration
		for pb.Next() {
			start := time.Now()
			if _, err := conn.Write(reqBytes[next.Add(1)-1]); err != nil {
				b.Error(err)
				return
			}
			status, err := readStatus(br)
			if err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(start))
			if status != http.StatusOK {
				b.Errorf("HTTP %d", status)
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	elapsed := b.Elapsed()
	// CPU of the whole process (listener and senders) per push: the figure
	// to watch when the machine, not the disk, is the limit.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
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

// readStatus reads one HTTP/1.1 response and returns its status code,
// skipping the headers and a Content-Length body.
func readStatus(br *bufio.Reader) (int, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 {
		return 0, fmt.Errorf("short status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("status line %q", line)
	}
	length := 0
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(h) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if _, err := br.Discard(length); err != nil {
		return 0, err
	}
	return status, nil
}
