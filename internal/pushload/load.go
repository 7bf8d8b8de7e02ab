package pushload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// GiftCardPush is a successful gift card payment push numbered n: its key
// is n in 32 hex digits, so pushes numbered in order have rising keys.
func GiftCardPush(n int, cents int64) *api.Push {
	st := api.Status{Code: api.Code{Code: api.StatusSuccess, Description: "Success"},
		SubCode: &api.SubCode{Code: api.SubCodeProcessed}, DateTime: api.NewDateTime(time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), true)}
	return &api.Push{Transaction: &api.TransactionPush{Key: fmt.Sprintf("%032X", n), Invoice: fmt.Sprintf("GC-%d", n),
		ServiceCode: "customgiftcard", Status: st, IsTest: true, Currency: "EUR",
		AmountDebit: api.NewAmount(decimal.New(cents, -2)), TransactionType: api.TypeGiftCardPay, MutationType: api.MutationGiftCard}}
}

// Plan says what to send.
type Plan struct {
	// Addr is the listener's host:port; PushURL the URL the pushes are
	// signed over (empty: http://Addr/push) and posted to.
	Addr        string
	PushURL     string
	Credentials api.Credentials
	Pushes      int
	// First numbers the first push (0 counts as 1), so runs against the
	// same cache do not repeat each other.
	First int
	// RandomKeys gives every push a random transaction key, as a gateway
	// hands them out, instead of rising ones.
	RandomKeys bool
}

// Prepare encodes and signs every push of p as a raw HTTP/1.1 request, so
// sending them later costs the sender nothing but the write.
func Prepare(p Plan) ([][]byte, error) {
	pushURL := p.PushURL
	if pushURL == "" {
		pushURL = "http://" + p.Addr + "/push"
	}
	u, err := url.Parse(pushURL)
	if err != nil {
		return nil, fmt.Errorf("push URL: %w", err)
	}
	target := u.RequestURI()
	hostPath := api.HostPath(pushURL)
	ts := time.Now().Unix()
	first := max(p.First, 1)
	reqs := make([][]byte, p.Pushes)
	for i := range reqs {
		push := GiftCardPush(first+i, int64(100+i%5000))
		if p.RandomKeys {
			push.Transaction.Key = strings.ToUpper(api.NewNonce())
		}
		body, err := push.Encode()
		if err != nil {
			return nil, fmt.Errorf("push %d: %w", i+1, err)
		}
		auth := api.Sign(p.Credentials, http.MethodPost, hostPath, body, api.NewNonce(), ts).String()
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n",
			target, p.Addr, auth, len(body))
		reqs[i] = append([]byte(head), body...)
	}
	return reqs, nil
}

// Result is what a run measured.
type Result struct {
	Sent    int
	Elapsed time.Duration
	// Latencies are the answered requests' times from the first byte sent
	// to the answer's status line, sorted.
	Latencies []time.Duration
	// Statuses counts the answers by HTTP status.
	Statuses map[int]int
}

// PerSecond is the rate of answered requests.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Latencies)) / r.Elapsed.Seconds()
}

// Merge is the result of runs made at the same time (to several
// listeners): their answers together, over the longest run's time.
func Merge(rs ...Result) Result {
	out := Result{Statuses: make(map[int]int)}
	for _, r := range rs {
		out.Sent += r.Sent
		out.Elapsed = max(out.Elapsed, r.Elapsed)
		out.Latencies = append(out.Latencies, r.Latencies...)
		for s, n := range r.Statuses {
			out.Statuses[s] += n
		}
	}
	slices.Sort(out.Latencies)
	return out
}

// Percentile is the latency below which p (0 to 100) percent of the
// answers came.
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	i := min(len(r.Latencies)-1, int(float64(len(r.Latencies))*p/100))
	return r.Latencies[i]
}

// Run sends reqs to addr from senders connections, each kept alive and
// waiting for its answer before it sends the next request (as a gateway's
// push workers do). Pre-built requests and a reader that only looks at the
// status line keep the tool's own CPU small: on a machine with few cores
// the load tool competes with the listener it measures.
func Run(ctx context.Context, addr string, reqs [][]byte, senders int) (Result, error) {
	var next atomic.Int64
	var mu sync.Mutex
	res := Result{Statuses: make(map[int]int)}
	var errs []error
	var wg sync.WaitGroup
	start := time.Now()
	for range max(senders, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, statuses, err := send(ctx, addr, reqs, &next)
			mu.Lock()
			defer mu.Unlock()
			res.Latencies = append(res.Latencies, mine...)
			for s, n := range statuses {
				res.Statuses[s] += n
			}
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Sent = int(min(next.Load(), int64(len(reqs))))
	slices.Sort(res.Latencies)
	if len(errs) > 0 {
		return res, fmt.Errorf("%d of %d senders failed; first: %w", len(errs), senders, errs[0])
	}
	return res, nil
}

func send(ctx context.Context, addr string, reqs [][]byte, next *atomic.Int64) ([]time.Duration, map[int]int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	br := bufio.NewReader(conn)
	var latencies []time.Duration
	statuses := make(map[int]int)
	for {
		i := next.Add(1) - 1
		if i >= int64(len(reqs)) {
			return latencies, statuses, nil
		}
		start := time.Now()
		if _, err := conn.Write(reqs[i]); err != nil {
			return latencies, statuses, err
		}
		status, closed, err := ReadStatus(br)
		if err != nil {
			return latencies, statuses, err
		}
		latencies = append(latencies, time.Since(start))
		statuses[status]++
		if closed {
			return latencies, statuses, errors.New("the listener closed the connection")
		}
	}
}

// ReadStatus reads one HTTP/1.1 response and returns its status code and
// whether the server closes the connection after it, skipping the
// headers and a Content-Length body.
func ReadStatus(br *bufio.Reader) (status int, closed bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("malformed status line %q", line)
	}
	length := 0
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		if len(h) <= 2 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		switch {
		case !ok:
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		case bytes.EqualFold(k, []byte("Connection")):
			closed = bytes.EqualFold(bytes.TrimSpace(v), []byte("close"))
		}
	}
	if _, err := br.Discard(length); err != nil {
		return 0, false, err
	}
	return status, closed, nil
}
