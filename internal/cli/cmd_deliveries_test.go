package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// deliveriesCache is a cache with three deliveries: one delivered, one
// given up (its answer an escape sequence), one pending after a 500.
func deliveriesCache(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "listen.db")
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	db, err := store.Open(path, store.Options{NoSync: true, Now: func() time.Time { return at }, ForwardTo: []string{"http://shop.test/push"}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for i, k := range []string{"K1", "K2", "K3"} {
		p := &api.Push{Transaction: &api.TransactionPush{Key: k, Invoice: "INV-" + k, ServiceCode: api.ServiceDeferred,
			Status: api.Status{Code: api.Code{Code: api.StatusSuccess}, DateTime: api.NewDateTime(at, true)}, IsTest: true, Currency: "EUR",
			AmountDebit: api.NewAmount(decimal.RequireFromString("10")), TransactionType: api.TypeDeferredPay, MutationType: api.MutationDeferred}}
		b, _ := p.Encode()
		rec := store.PushRecord{Body: b, Signature: store.SignatureValid, ReceivedAt: at.Add(time.Duration(i) * time.Hour)}
		if _, err := db.ApplyPush(ctx, rec, p); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		id  uint64
		a   store.Attempt
		out store.AttemptOutcome
	}{
		{1, store.Attempt{At: at, Status: 200, Latency: 3 * time.Millisecond}, store.AttemptOutcome{Delivered: true}},
		{2, store.Attempt{At: at, Status: 502, Excerpt: "bad \x1b[31mgateway"}, store.AttemptOutcome{GaveUp: true}},
		{3, store.Attempt{At: at, Error: "connection refused"}, store.AttemptOutcome{NextAt: at.Add(time.Minute)}},
	}
	for _, s := range steps {
		if err := db.RecordAttempt(ctx, s.id, s.a, s.out); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func runDeliveriesCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr lockedBuffer
	code := Main(context.Background(), IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}, args)
	return code, stdout.String(), stderr.String()
}

func TestDeliveriesCommand(t *testing.T) {
	path := deliveriesCache(t)
	tests := []struct {
		name    string
		args    []string
		wantIDs []uint64
	}{
		{"all", []string{"deliveries", "--db", path, "--json"}, []uint64{3, 2, 1}},
		{"failed", []string{"deliveries", "--db", path, "--json", "--failed"}, []uint64{3, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runDeliveriesCLI(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var ds []deliveryJSON
			if err := json.Unmarshal([]byte(out), &ds); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var ids []uint64
			for _, d := range ds {
				ids = append(ids, d.ID)
			}
			if len(ids) != len(tt.wantIDs) || (len(ids) > 0 && ids[0] != tt.wantIDs[0]) || ids[len(ids)-1] != tt.wantIDs[len(tt.wantIDs)-1] {
				t.Fatalf("ids = %v, want %v", ids, tt.wantIDs)
			}
			if strings.Contains(out, "\x1b") || strings.Contains(out, `\u001b`) {
				t.Fatalf("an escape sequence reached the output: %q", out)
			}
		})
	}
	code, out, _ := runDeliveriesCLI(t, "deliveries", "--db", path)
	if code != 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "HTTP 502") || !strings.Contains(out, "3 deliveries") {
		t.Fatalf("table (exit %d):\n%s", code, out)
	}
}

func TestDeliveriesResend(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		resent   []uint64 // pending again with Resent 1
		stderrIn string
	}{
		{"one", []string{"1"}, 0, []uint64{1}, ""},
		{"failed", []string{"--failed"}, 0, []uint64{2, 3}, ""},
		{"window", []string{"--since", "2026-11-25T10:30:00Z", "--until", "2026-11-25T11:30:00Z"}, 0, []uint64{2}, ""},
		{"nothing in the window", []string{"--since", "2020-01-01", "--until", "2020-01-02"}, 0, nil, ""},
		{"nothing said", nil, 2, nil, "say what to resend"},
		{"ID and flag", []string{"1", "--failed"}, 2, nil, "not both"},
		{"bad ID", []string{"x"}, 2, nil, "delivery ID"},
		{"no such", []string{"9"}, 1, nil, "no delivery 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := deliveriesCache(t)
			code, _, errOut := runDeliveriesCLI(t, append([]string{"deliveries", "resend", "--db", path}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.stderrIn) {
				t.Fatalf("exit %d (want %d): %s", code, tt.code, errOut)
			}
			db, err := store.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ds, err := db.Deliveries(context.Background(), store.DeliveryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				want := false
				for _, id := range tt.resent {
					want = want || id == d.ID
				}
				if got := d.Resent == 1 && d.State == store.DeliveryPending; got != want {
					t.Errorf("delivery %d: state %s resent %d; resent expected: %v", d.ID, d.State, d.Resent, want)
				}
			}
		})
	}
}

// A resend is the role's to do (agent, finance, admin) and audited with
// who and how many; a warehouse user is refused and nothing is resent; a
// read-only config resends nothing. deliveries is no longer in the help's
// read-only group.
func TestDeliveriesResendRoleAndAudit(t *testing.T) {
	for _, tc := range []struct {
		name, user, conf string
		code             int
		errIn            string
	}{
		{"agent", "ann", "[users]\nann = \"agent\"\n", 0, ""},
		{"alone is admin", "sam", "", 0, ""},
		{"warehouse refused", "wes", "[users]\nwes = \"warehouse\"\n", 1, "only agent, finance, admin may"},
		{"read-only", "sam", "read-only = true\n", 1, "nothing resent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := deliveriesCache(t)
			var stdout, stderr lockedBuffer
			env := map[string]string{"USER": tc.user, "HOME": t.TempDir()}
			code := Main(context.Background(), IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
				[]string{"deliveries", "resend", "--config", writeConfig(t, tc.conf), "--db", path, "--failed"})
			if code != tc.code || !strings.Contains(stderr.String(), tc.errIn) {
				t.Fatalf("exit %d (want %d): %s", code, tc.code, stderr.String())
			}
			db, err := store.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			es, err := db.Audit(t.Context(), 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				if e.Action == store.AuditDeliveryResend {
					got = append(got, e.Operator+" "+e.Result+" "+e.Reason)
				}
			}
			want := ""
			if tc.code == 0 {
				want = tc.user + " 2 deliveries queued again from the command line"
			}
			if strings.Join(got, "|") != want {
				t.Fatalf("audit %q, want %q", got, want)
			}
		})
	}
	code, out, _ := runDeliveriesCLI(t, "--help")
	low := strings.ToLower(out)
	i, j := strings.Index(low, "look (read-only"), strings.Index(low, "operations")
	if code != 0 || i < 0 || j < i || strings.Contains(low[i:j], "deliveries") || !strings.Contains(low[j:], "deliveries") {
		t.Fatalf("help (exit %d):\n%s", code, out)
	}
}
