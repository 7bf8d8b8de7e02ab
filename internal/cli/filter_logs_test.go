package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
	"paydesk/views"
	"paydesk/views/logs"
)

var (
	logDay      = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	pushInvRE   = regexp.MustCompile(`PINV-\d{3}`)
	auditTarget = regexp.MustCompile(`AUD-\d{3}`)
)

// logsCache writes pushes (applied, confirmed, ignored, one received
// three times, one rejected) and audit entries of three operators into
// the cache the commands of dir read.
func logsCache(t *testing.T, dir string) {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	services := []string{"customgiftcard", "klarnakp", "paypal"}
	apply := func(i int, p *api.Push, at time.Time) {
		t.Helper()
		body, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyPush(ctx, store.PushRecord{ReceivedAt: at, RemoteAddr: fmt.Sprintf("192.0.2.%d:1", i%250+1), Body: body, Method: "POST", URL: "/push"}, p); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		at := logDay.Add(time.Duration(i) * 9 * time.Hour)
		code := api.StatusSuccess
		if i%4 == 3 {
			code = api.StatusPendingProcessing
		}
		st := api.Status{Code: api.Code{Code: code}, DateTime: api.NewDateTime(at, true)}
		p := &api.Push{Transaction: &api.TransactionPush{Key: fmt.Sprintf("%032X", i+1), Invoice: fmt.Sprintf("PINV-%03d", i),
			ServiceCode: services[i%3], Status: st, IsTest: true, Currency: "EUR", TransactionType: api.TypeGiftCardPay,
			AmountDebit: api.NewAmount(decimal.New(int64(1000+i*700), -2)), MutationType: api.MutationDeferred}}
		apply(i, p, at)
		if i%5 == 0 { // an older status for the same key: ignored
			old := *p.Transaction
			old.Status = api.Status{Code: api.Code{Code: api.StatusPendingProcessing}, DateTime: api.NewDateTime(at.Add(-time.Hour), true)}
			old.Invoice = fmt.Sprintf("PINV-%03d", 100+i)
			apply(i, &api.Push{Transaction: &old}, at.Add(time.Minute))
		}
		if i == 7 { // the gateway delivers it twice more
			apply(i, p, at.Add(2*time.Minute))
			apply(i, p, at.Add(3*time.Minute))
		}
	}
	if _, err := db.RecordRejectedPush(ctx, store.PushRecord{ReceivedAt: logDay.Add(40 * time.Hour), RemoteAddr: "198.51.100.9:1",
		Method: "POST", URL: "/push", Invoice: "PINV-900", Signature: store.SignatureMismatch, Reason: "signature mismatch"}); err != nil {
		t.Fatal(err)
	}
	operators := []string{"alice", "bob", "Jürgen"}
	for i := range 24 {
		e := store.AuditEntry{Time: logDay.Add(time.Duration(i) * 11 * time.Hour), Operator: operators[i%3], Action: []string{"capture", "refund", "resend pushes"}[i%3],
			Target: fmt.Sprintf("AUD-%03d", i), Result: "190 success", Currency: "EUR"}
		if i%2 == 0 {
			e.Amount = decimal.New(int64(500+i*900), -2)
		}
		if _, err := db.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogFiltersSameInConsoleAndCLI: one filter gives the same rows, in
// the same order, in `pushes --filter` / `audit --filter` and typed into
// the console's "/" on the Pushes and Audit tabs; a filter the language
// refuses says the same on both ("--filter: …" and "Filter: …").
func TestLogFiltersSameInConsoleAndCLI(t *testing.T) {
	dir := t.TempDir()
	logsCache(t, dir)
	db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := db.Pushes(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rej, err := db.RejectedPushes(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	receipts, err := db.PushReceiptsOf(t.Context(), ps)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	rows := views.NewPushRowsReceipts(append(ps, rej...), receipts)

	for _, tc := range []struct {
		list, filter string
		refused      string // the refusal, after "--filter: " and "Filter: "
	}{
		{"pushes", "state:ignored", ""},
		{"pushes", "state:rejected", ""},
		{"pushes", "state:applied service:klarna", ""},
		{"pushes", "amount:>100 created:2026-11-05..2026-11-09", ""},
		{"pushes", "paypal", ""},
		{"pushes", "state:bogus", `state: "bogus" is not a state of the push list`},
		{"pushes", "operator:alice", "operator: not a field of the push list"},
		{"audit", "operator:alice", ""},
		{"audit", "operator:jurgen amount:>50", ""},
		{"audit", "refund created:<2026-11-05", ""},
		{"audit", "state:done", "state: not a field of the audit list"},
	} {
		t.Run(tc.list+" "+tc.filter, func(t *testing.T) {
			code, out, errs := runCLI(t, dir, "", tc.list, "--limit", "0", "--filter", tc.filter)
			var console string
			if tc.list == "pushes" {
				console = typePushes(t, rows, tc.filter)
			} else {
				console = typeAudit(t, entries, tc.filter)
			}
			if tc.refused != "" {
				if code != exitUsage || !strings.Contains(errs, "--filter: "+tc.refused) {
					t.Fatalf("command line: exit %d %q, want %q", code, errs, tc.refused)
				}
				if !strings.Contains(console, "Filter: "+tc.refused) {
					t.Fatalf("console does not say %q:\n%s", "Filter: "+tc.refused, console)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d %s", code, errs)
			}
			re := pushInvRE
			if tc.list == "audit" {
				re = auditTarget
				console, _, _ = strings.Cut(console, "───") // the table, not the detail under it
			}
			cli := re.FindAllString(out, -1)
			if len(cli) == 0 {
				t.Fatalf("%q found nothing on the command line:\n%s", tc.filter, out)
			}
			if got := re.FindAllString(console, -1); !slices.Equal(got, cli) {
				t.Errorf("console %v, command line %v", got, cli)
			}
		})
	}
}

func consoleContext() *views.Context {
	ctx := views.NewContext(func() time.Time { return logDay.Add(30 * 24 * time.Hour) })
	ctx.Location = time.UTC
	ctx.Tick = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	return ctx
}

// typeKeys types "/" and text into a screen, running what it returns.
func typeKeys(update func(tea.Msg) tea.Cmd, text string) {
	var run func(cmd tea.Cmd)
	run = func(cmd tea.Cmd) {
		for cmd != nil {
			msg := cmd()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			cmd = update(msg)
		}
	}
	for _, r := range "/" + text {
		run(update(tea.KeyPressMsg{Code: r, Text: string(r)}))
	}
}

func typePushes(t *testing.T, rows []*views.PushRow, filter string) string {
	t.Helper()
	s := views.NewPushes(consoleContext(), "")
	s.SetSize(160, 80)
	s.Update(views.PushRowsMsg{Full: true, Rows: rows})
	typeKeys(s.Update, filter)
	return s.View()
}

func typeAudit(t *testing.T, entries []store.AuditEntry, filter string) string {
	t.Helper()
	a := logs.NewAudit(consoleContext())
	a.SetSize(160, 120)
	a.SetEntries(entries)
	typeKeys(a.Update, filter)
	return a.View()
}

// TestPushesJSONReceipts: `paydesk pushes --json` says how often each
// push was received and lists the receipts of one received three times.
func TestPushesJSONReceipts(t *testing.T) {
	dir := t.TempDir()
	logsCache(t, dir)
	code, out, errs := runCLI(t, dir, "", "pushes", "--json", "--limit", "0", "--filter", "PINV-007")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	got := decodeJSON[[]pushJSON](t, out)
	if len(got) != 1 {
		t.Fatalf("%d pushes, want 1:\n%s", len(got), out)
	}
	p := got[0]
	at := logDay.Add(7 * 9 * time.Hour)
	if p.ReceivedCount != 3 || len(p.Receipts) != 3 {
		t.Fatalf("receivedCount %d, %d receipts; want 3 and 3:\n%s", p.ReceivedCount, len(p.Receipts), out)
	}
	for i, d := range []time.Duration{0, 2 * time.Minute, 3 * time.Minute} {
		r := p.Receipts[i]
		if want := at.Add(d).Format(time.RFC3339Nano); r.At != want || r.Signature != store.SignatureValid {
			t.Errorf("receipt %d: %+v, want at %s, valid", i, r, want)
		}
	}
	code, out, _ = runCLI(t, dir, "", "pushes", "--json", "--limit", "0", "--filter", "PINV-008")
	if code != 0 || decodeJSON[[]pushJSON](t, out)[0].ReceivedCount != 1 {
		t.Errorf("a push received once: %s", out)
	}
	code, out, _ = runCLI(t, dir, "", "pushes", "--limit", "0", "--filter", "PINV-007")
	if code != 0 || !strings.Contains(out, "×3") {
		t.Errorf("the table does not say ×3:\n%s", out)
	}
}

// TestPushesShow: `paydesk pushes show ID` lists every receipt of a push
// (text and --json); an ID that is not a push is refused with the rule.
func TestPushesShow(t *testing.T) {
	dir := t.TempDir()
	logsCache(t, dir)
	_, out, _ := runCLI(t, dir, "", "pushes", "--json", "--limit", "0", "--filter", "PINV-007")
	id := fmt.Sprint(decodeJSON[[]pushJSON](t, out)[0].ID)
	code, out, errs := runCLI(t, dir, "", "pushes", "show", id)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	for _, want := range []string{"Push", id, "PINV-007", "3 times", "first", "2026-11-04T00:00:00Z", "repeat", "2026-11-04T00:03:00Z", "signature valid"} {
		if !strings.Contains(out, want) {
			t.Errorf("pushes show %s does not say %q:\n%s", id, want, out)
		}
	}
	code, out, _ = runCLI(t, dir, "", "pushes", "show", id, "--json")
	if p := decodeJSON[pushJSON](t, out); code != 0 || p.ReceivedCount != 3 || len(p.Receipts) != 3 {
		t.Errorf("pushes show --json: exit %d %s", code, out)
	}
	for _, tc := range []struct{ arg, want string }{{"x", "a push ID is a positive number"}, {"999", "push 999: not in the push log"}} {
		if code, _, errs := runCLI(t, dir, "", "pushes", "show", tc.arg); code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("pushes show %s: exit %d %q, want %q", tc.arg, code, errs, tc.want)
		}
	}
}
