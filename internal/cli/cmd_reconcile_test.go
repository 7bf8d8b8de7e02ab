package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
)

// A day on the embedded sandbox: a capture and a refund, settled on the
// sandbox's statement. The bookkeeper's copy misses the refund, adds a
// payout paydesk never booked (its invoice a spreadsheet formula) and
// changes the capture's amount: each outcome once, exit 1, the run and
// each line that did not match in the audit log, and the CSV inert.
func TestReconcileCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation: exit %d\n%s%s", code, out, errs)
	}
	number, _ := decodeJSON[map[string]any](t, out)["target"].(string)
	code, out, errs = runCLI(t, dir, "", "capture", number, "--json", "--yes")
	capt := decodeJSON[map[string]any](t, out)
	if code != 0 || capt["status"] != float64(190) {
		t.Fatalf("capture: exit %d %v %s", code, capt, errs)
	}
	captKey := capt["key"].(string)
	code, out, errs = runCLI(t, dir, "", "refund", captKey, "20", "--reason", "return", "--json", "--yes")
	if code != 0 {
		t.Fatalf("refund: exit %d %s %s", code, out, errs)
	}
	code, out, _ = runCLI(t, dir, "", "transactions", "--json")
	txs := decodeJSON[[]map[string]any](t, out)
	if code != 0 || len(txs) != 2 {
		t.Fatalf("transactions: exit %d %v", code, txs)
	}

	// The statement of the day the capture succeeded, from the embedded
	// sandbox's state (the commands have let go of it).
	at, err := time.Parse(time.RFC3339, txs[0]["created"].(string))
	if err != nil {
		t.Fatalf("created of %v: %v", txs[0], err)
	}
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{{WebsiteKey: "x", SecretKey: "y"}},
		StatePath: filepath.Join(dir, "paydesk", "sandbox.db")})
	if err != nil {
		t.Fatal(err)
	}
	lines := sb.Statement("", at.Local())
	_ = sb.Close()
	if len(lines) != 2 {
		t.Fatalf("the statement has %d lines, want the capture and the refund: %+v", len(lines), lines)
	}
	var buf bytes.Buffer
	if err := sandbox.WriteStatement(&buf, lines); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "whole.csv")
	if err := os.WriteFile(whole, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, dir, "", "reconcile", whole)
	if code != 0 || !strings.Contains(out, "matched 2 · unsettled 0 · unknown 0 · differs 0") {
		t.Fatalf("the whole statement: exit %d\n%s%s", code, out, errs)
	}
	// The report's settled and fees are the payout's, on its day, however
	// often the statement is reconciled.
	day := lines[0].SettlementDate
	capGross := lines[0].Gross.Add(lines[1].Gross) // the capture, and the refund as a negative line
	settled := func() (string, string) {
		t.Helper()
		code, out, errs := runCLI(t, dir, "", "report", "--since", day, "--until", day, "--json")
		rep := decodeJSON[struct {
			Rows []struct {
				Group, Settled, Fees string
			} `json:"rows"`
		}](t, out)
		if code != 0 {
			t.Fatalf("report: exit %d %s", code, errs)
		}
		for _, r := range rep.Rows {
			if r.Group == day {
				return r.Settled, r.Fees
			}
		}
		t.Fatalf("report: no row for %s: %s", day, out)
		return "", ""
	}
	for run := 1; run <= 2; run++ {
		if got, fees := settled(); got != capGross.StringFixed(2) || fees != "0.00" {
			t.Fatalf("after reconciling %d time(s): settled %s, fees %s; want %s and 0.00", run, got, fees, capGross.StringFixed(2))
		}
		if run == 1 {
			if code, out, errs = runCLI(t, dir, "", "reconcile", whole); code != 0 {
				t.Fatalf("the whole statement again: exit %d\n%s%s", code, out, errs)
			}
		}
	}

	var edited []sandbox.StatementLine
	for _, l := range lines {
		if l.Key == captKey {
			l.Gross, l.Net = l.Gross.Sub(decimal.NewFromInt(1)), l.Net.Sub(decimal.NewFromInt(1))
			edited = append(edited, l)
		}
	}
	edited = append(edited, sandbox.StatementLine{PayoutReference: "PO-X", SettlementDate: lines[0].SettlementDate, Key: "FOREIGN",
		Invoice: "=HYPERLINK(\"http://evil\")", Type: "C700", Currency: "EUR", Gross: decimal.NewFromInt(10), Net: decimal.NewFromInt(10)})
	buf.Reset()
	if err := sandbox.WriteStatement(&buf, edited); err != nil {
		t.Fatal(err)
	}
	copyCSV := filepath.Join(dir, "copy.csv")
	if err := os.WriteFile(copyCSV, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, dir, "", "reconcile", copyCSV, "--json")
	res := decodeJSON[struct {
		Counts map[string]int `json:"counts"`
		Lines  []struct {
			Outcome string `json:"outcome"`
			Key     string `json:"key"`
		} `json:"lines"`
	}](t, out)
	if code != 1 {
		t.Fatalf("reconcile of the copy: exit %d, want 1\n%s", code, errs)
	}
	for _, o := range []string{"matched", "unsettled", "unknown", "differs"} {
		want := 1
		if o == "matched" {
			want = 0
		}
		if res.Counts[o] != want {
			t.Errorf("%s: %d, want %d (%v)", o, res.Counts[o], want, res.Counts)
		}
	}
	code, out, _ = runCLI(t, dir, "", "reconcile", copyCSV, "--csv")
	if code != 1 || !strings.Contains(out, `"'=HYPERLINK(""http://evil"")"`) {
		t.Fatalf("the bookkeeper's CSV: exit %d, the formula is not made inert:\n%s", code, out)
	}
	code, out, _ = runCLI(t, dir, "", "audit", "--json", "--limit", "0")
	if code != 0 || strings.Count(out, `"action": "reconcile-item"`) != 6 || strings.Count(out, `"action": "reconcile"`) != 4 {
		t.Fatalf("audit: exit %d: want 4 runs and 6 items (3 for each run of the copy)\n%s", code, out)
	}
	// The copy reconciled last speaks for its payouts: the capture's one
	// less, the refund gone, and the foreign payout of 10.
	if got, _ := settled(); got != lines[0].Gross.Sub(decimal.NewFromInt(1)).Add(decimal.NewFromInt(10)).StringFixed(2) {
		t.Fatalf("after the copy: settled %s", got)
	}
	// The whole statement read once more matches the capture and the
	// refund the copy left open: each closed by an entry of its own; the
	// foreign payout stays open.
	if code, out, errs = runCLI(t, dir, "", "reconcile", whole); code != 0 {
		t.Fatalf("the whole statement after the copy: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI(t, dir, "", "audit", "--json", "--limit", "0")
	entries := decodeJSON[[]struct {
		Action, Target, Result string
	}](t, out)
	closed := map[string]bool{}
	for _, e := range entries {
		if e.Action == "reconcile-item" && e.Result == "matched" {
			closed[e.Target] = true
		}
	}
	k0, _ := txs[0]["key"].(string)
	k1, _ := txs[1]["key"].(string)
	if code != 0 || len(closed) != 2 || !closed[k0] || !closed[k1] || closed["FOREIGN"] {
		t.Fatalf("closed items %v; want the capture and the refund (%s, %s), not FOREIGN", closed, k0, k1)
	}
}
