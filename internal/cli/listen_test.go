package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

func TestListenCommand(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		name := "lines"
		if asJSON {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "listen.db")
			env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
			args := []string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", dbPath}
			if asJSON {
				args = append(args, "--json")
			}
			var stdout, stderr lockedBuffer
			procs, gc := goruntime.GOMAXPROCS(0), gcPercent()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			go func() {
				done <- Main(ctx, IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}, args)
			}()
			base := "http://" + awaitListening(t, &stderr)
			if got := goruntime.GOMAXPROCS(0); got != 2*procs {
				t.Errorf("GOMAXPROCS while listening = %d, want %d", got, 2*procs)
			}
			if got := gcPercent(); got != 400 {
				t.Errorf("GC percent while listening = %d, want 400", got)
			}
			url := base + "/push"
			creds := api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}
			st := api.Status{Code: api.Code{Code: 190}, SubCode: &api.SubCode{Code: "S001"}, DateTime: api.NewDateTime(time.Now(), true)}
			good := &api.Push{Transaction: &api.TransactionPush{Key: "ABC123", Invoice: "INV\x1b]52;c;ZXZpbA==\x07-1\x1b[2J",
				ServiceCode: "deferredkp", Status: st, Currency: "EUR", AmountDebit: api.MustAmount("59.97"), TransactionType: "C700"}}
			body, _ := good.Encode()
			post := func(body []byte, c api.Credentials) int {
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Authorization", api.Sign(c, "POST", api.HostPath(url), body, api.NewNonce(), time.Now().Unix()).String())
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if got := post(body, creds); got != 200 {
				t.Fatalf("good push: HTTP %d", got)
			}
			if got := post(body, api.Credentials{WebsiteKey: "WK", SecretKey: "wrong"}); got != 401 {
				t.Fatalf("bad signature: HTTP %d", got)
			}
			cancel()
			if code := <-done; code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if got := goruntime.GOMAXPROCS(0); got != procs {
				t.Errorf("GOMAXPROCS after listen = %d, want %d again", got, procs)
			}
			if got := gcPercent(); got != gc {
				t.Errorf("GC percent after listen = %d, want %d again", got, gc)
			}
			out := stdout.String()
			if strings.ContainsAny(out, "\x1b\x07") {
				t.Fatalf("escape sequence reached the output: %q", out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 {
				t.Fatalf("%d lines, want 2:\n%s", len(lines), out)
			}
			// The rejected push's line is printed as it is answered; the accepted
			// one's after the push inbox has applied it, which may come later.
			if strings.Contains(lines[0], "REJECTED") || strings.Contains(lines[0], `"rejected":true`) {
				lines[0], lines[1] = lines[1], lines[0]
			}
			if asJSON {
				var first, second map[string]any
				if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
					t.Fatal(err)
				}
				if first["key"] != "ABC123" || first["amount"] != "59.97" || first["status"] != 190.0 || first["signature"] != "valid" || first["invoice"] != "INV␛]52;c;ZXZpbA==␇-1␛[2J" {
					t.Errorf("first line %v", first)
				}
				if second["rejected"] != true || second["signature"] != "mismatch" || !strings.Contains(second["reason"].(string), "signature does not match") {
					t.Errorf("second line %v", second)
				}
			} else {
				for _, want := range []string{"#1", "Transaction", "key ABC123", "invoice INV␛]52;c;ZXZpbA==␇-1␛[2J", "service deferredkp", "C700", "status 190/S001", "amount 59.97 EUR", "signature valid"} {
					if !strings.Contains(lines[0], want) {
						t.Errorf("line %q lacks %q", lines[0], want)
					}
				}
				for _, want := range []string{"REJECTED 401", "signature mismatch", "reason signature: signature does not match"} {
					if !strings.Contains(lines[1], want) {
						t.Errorf("line %q lacks %q", lines[1], want)
					}
				}
			}
			db, err := store.Open(dbPath, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if n, _ := db.Counts(t.Context()); n.Pushes != 1 || n.Rejected != 1 {
				t.Errorf("counts %+v", n)
			}
		})
	}
}

// gcPercent reads the collector's setting (setting it back at once).
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestListenDefaultDB(t *testing.T) {
	got := defaultListenDBPath(func(k string) string {
		return map[string]string{"XDG_DATA_HOME": "/data", "PAYDESK_DB": "/elsewhere/x.db"}[k]
	})
	if got != "/data/paydesk/listen.db" {
		t.Errorf("default = %s", got)
	}
}
