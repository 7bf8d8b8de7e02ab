package pushload

import (
	"bufio"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"paydesk/api"
)

func TestReadStatus(t *testing.T) {
	tests := []struct {
		name, in string
		status   int
		closed   bool
		rest     string
		wantErr  bool
	}{
		{"empty 200", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nNEXT", 200, false, "NEXT", false},
		{"401 with a body", "HTTP/1.1 401 Unauthorized\r\ncontent-length: 6\r\nConnection: close\r\n\r\nnope\r\nNEXT", 401, true, "NEXT", false},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", 0, false, "", true},
		{"cut short", "HTTP/1.1 200 OK\r\nContent-Len", 0, false, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(strings.NewReader(tc.in))
			status, closed, err := ReadStatus(br)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			rest, _ := io.ReadAll(br)
			if status != tc.status || closed != tc.closed || string(rest) != tc.rest {
				t.Errorf("got %d closed=%v rest %q; want %d %v %q", status, closed, rest, tc.status, tc.closed, tc.rest)
			}
		})
	}
}

// TestRunAgainstNetHTTP: every prepared request reaches a server intact
// (signature over the push URL included) and every answer is counted.
func TestRunAgainstNetHTTP(t *testing.T) {
	creds := api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	v := api.VerifierFor(creds)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := v.Verify(r.Header.Get("Authorization"), r.Method, addr+"/hooks/in", body); err != nil || r.URL.Path != "/hooks/in" {
			http.Error(w, "bad", http.StatusUnauthorized)
			return
		}
		if _, err := api.DecodePush(body); err != nil {
			http.Error(w, "bad", http.StatusBadRequest)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	reqs, err := Prepare(Plan{Addr: addr, PushURL: "http://" + addr + "/hooks/in", Credentials: creds, Pushes: 300, RandomKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, addr, reqs, 7)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 300 || len(res.Latencies) != 300 || res.Statuses[200] != 300 {
		t.Fatalf("sent %d, answered %d, statuses %v", res.Sent, len(res.Latencies), res.Statuses)
	}
	if res.PerSecond() <= 0 || res.Percentile(0) > res.Percentile(50) || res.Percentile(50) > res.Percentile(100) {
		t.Errorf("rate %.0f/s, percentiles %v %v %v", res.PerSecond(), res.Percentile(0), res.Percentile(50), res.Percentile(100))
	}
}

// TestMerge: runs made at the same time to several listeners add up to one
// result — every answer, over the longest run's time — so that two
// listeners' rate is their sum and their percentiles are over all answers.
func TestMerge(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name     string
		in       []Result
		sent     int
		elapsed  time.Duration
		lat      []time.Duration
		statuses map[int]int
	}{
		{"none", nil, 0, 0, nil, map[int]int{}},
		{"one", []Result{{Sent: 2, Elapsed: ms(10), Latencies: []time.Duration{ms(1), ms(3)}, Statuses: map[int]int{200: 2}}},
			2, ms(10), []time.Duration{ms(1), ms(3)}, map[int]int{200: 2}},
		{"two at once", []Result{
			{Sent: 2, Elapsed: ms(10), Latencies: []time.Duration{ms(1), ms(5)}, Statuses: map[int]int{200: 2}},
			{Sent: 3, Elapsed: ms(20), Latencies: []time.Duration{ms(2), ms(3), ms(4)}, Statuses: map[int]int{200: 2, 503: 1}},
		}, 5, ms(20), []time.Duration{ms(1), ms(2), ms(3), ms(4), ms(5)}, map[int]int{200: 4, 503: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(tc.in...)
			if got.Sent != tc.sent || got.Elapsed != tc.elapsed || !slices.Equal(got.Latencies, tc.lat) || !maps.Equal(got.Statuses, tc.statuses) {
				t.Fatalf("Merge = %+v; want sent %d, elapsed %v, latencies %v, statuses %v", got, tc.sent, tc.elapsed, tc.lat, tc.statuses)
			}
		})
	}
}
