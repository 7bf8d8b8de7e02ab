package pushload

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
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
