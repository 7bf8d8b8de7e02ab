package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/ops"
	"paydesk/pushlistener"
	"paydesk/store"
)

// newReservation makes an approved test reservation in dir's cache and
// returns its number (SHOE-42 3 × 59.95, SOCK-3P 2 × 14.50, SHIP 4.95).
func newReservation(t *testing.T, dir string) string {
	t.Helper()
	code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation: exit %d %s %s", code, out, errs)
	}
	return decodeJSON[map[string]any](t, out)["target"].(string)
}

func TestUpdateCommand(t *testing.T) {
	dir := t.TempDir()
	number := newReservation(t, dir)

	// Refused before anything is sent: raising, unknown articles and fields.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"SHOE-42=4"}, "may only go down"},
		{[]string{"SHOE-42=0"}, "at least 1"},
		{[]string{"HAT=1"}, "HAT: not an article"},
		{[]string{"--price", "SOCK-3P=15"}, "a price may only go down (was 14.50)"},
		{[]string{"--price", "SOCK-3P=1e1"}, `--price SOCK-3P "1e1": write a plain decimal`},
		{[]string{"--billing", "street"}, "expected FIELD=VALUE"},
		{[]string{"--shipping", "planet=Mars"}, "city, company, country"},
	} {
		args := append([]string{"update", number, "--yes"}, tc.args...)
		code, _, errs := runCLI(t, dir, "", args...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, errs)
		}
	}
	code, out, _ := runCLI(t, dir, "", "update", number, "--yes", "--json")
	if code != exitFailed || !strings.Contains(out, "nothing to change") {
		t.Errorf("update with no change: exit %d %s", code, out)
	}

	// The summary names the lines; "y" is not enough.
	code, _, errs := runCLI(t, dir, "y\n", "update", number, "SHOE-42=2", "--price", "SOCK-3P=12.50")
	if code != exitFailed || !strings.Contains(errs, "Update reservation "+number+" to a total of: 149.85 EUR") ||
		!strings.Contains(errs, "SHOE-42 Trail running shoe, size 42  3 × 59.95 → 2 × 59.95 = 119.90") ||
		!strings.Contains(errs, "SOCK-3P Merino socks, 3 pairs  2 × 14.50 → 2 × 12.50 = 25.00") || !strings.Contains(errs, "nothing sent") {
		t.Fatalf("update answered y: exit %d\n%s", code, errs)
	}
	code, out, errs = runCLI(t, dir, "yes\n", "update", number, "SHOE-42=2", "--price", "SOCK-3P=12.50", "--shipping", "city=Utrecht", "--json")
	res := decodeJSON[map[string]any](t, out)
	if code != 0 || res["status"] != float64(190) || res["amount"] != "149.85" {
		t.Fatalf("update: exit %d %v %s", code, res, errs)
	}
	code, out, _ = runCLI(t, dir, "", "show", number, "--json")
	r := decodeJSON[reservationJSON](t, out)
	if code != 0 || r.Amount != "149.85" || r.Lines[0].Reserved != 2 || r.Lines[1].Price != "12.50" {
		t.Fatalf("after the update: %+v", r)
	}
}

func TestTransactionsAndPushesCommands(t *testing.T) {
	dir := t.TempDir()
	number := newReservation(t, dir)
	code, out, errs := runCLI(t, dir, "", "capture", number, "SHOE-42=1", "--yes", "--json")
	if code != 0 {
		t.Fatalf("capture: exit %d %s %s", code, out, errs)
	}
	key := decodeJSON[map[string]any](t, out)["key"].(string)

	code, out, _ = runCLI(t, dir, "", "transactions", "--json")
	txs := decodeJSON[[]map[string]any](t, out)
	if code != 0 || len(txs) != 1 || txs[0]["key"] != key || txs[0]["kind"] != "capture" || txs[0]["amount"] != "59.95" ||
		txs[0]["reservation"] != number {
		t.Fatalf("transactions: exit %d %v", code, txs)
	}
	code, out, _ = runCLI(t, dir, "", "transactions", "--kind", "refund")
	if code != 0 || !strings.HasSuffix(out, "\n0 transactions\n") {
		t.Fatalf("transactions --kind refund: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, dir, "", "transactions", "--status", "success", "--reservation", number)
	if code != 0 || !strings.Contains(out, key) || !strings.Contains(out, "59.95 EUR") || !strings.HasSuffix(out, "\n1 transaction\n") {
		t.Fatalf("transactions --reservation: exit %d %q", code, out)
	}

	// The Reserve push and the capture's push, newest first.
	code, out, _ = runCLI(t, dir, "", "pushes", "--json")
	pushes := decodeJSON[[]map[string]any](t, out)
	if code != 0 || len(pushes) != 2 || pushes[0]["kind"] != "C700" || pushes[0]["amount"] != "59.95" || pushes[1]["kind"] != "Reserve" {
		t.Fatalf("pushes: exit %d %v", code, pushes)
	}
	code, out, _ = runCLI(t, dir, "", "pushes", "--type", "DataRequest")
	if code != 0 || !strings.Contains(out, "Reserve") || strings.Contains(out, "C700") || !strings.HasSuffix(out, "\n1 push\n") {
		t.Fatalf("pushes --type DataRequest: exit %d %q", code, out)
	}
	// A limit that leaves some out says so (as audit does).
	code, out, _ = runCLI(t, dir, "", "pushes", "--limit", "1")
	if code != 0 || !strings.Contains(out, "C700") || strings.Contains(out, "Reserve") ||
		!strings.HasSuffix(out, "\nshowing the newest 1 of 2 pushes; --limit 0 for all or --limit N for more\n") {
		t.Fatalf("pushes --limit 1: exit %d %q", code, out)
	}
	code, out, _ = runCLI(t, dir, "", "pushes", "--status", "rejected", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("pushes --status rejected: exit %d %q", code, out)
	}
}

// TestLiveConfirmation: against a live gateway the invoice number is typed
// (at the prompt or with --confirm); --yes alone is not enough.
func TestLiveConfirmation(t *testing.T) {
	r := &store.Reservation{ReservationNumber: "R-1", Invoice: "INV-9", CustomerName: "Jan Jansen", Currency: "EUR"}
	s := summary{Action: "Cancel the whole of", Target: "reservation " + r.ReservationNumber, Amount: decimal.RequireFromString("64.9"),
		Currency: r.Currency, Customer: r.CustomerName, Invoice: r.Invoice}
	for _, tc := range []struct {
		name        string
		stdin       string
		interactive bool
		yes         bool
		confirm     string
		ok          bool
		want        string
	}{
		{"typed", "INV-9\n", true, false, "", true, "LIVE gateway: type the invoice number INV-9 to confirm"},
		{"typed wrong", "yes\n", true, false, "", false, "does not match INV-9; nothing sent"},
		{"flag", "", false, false, "INV-9", true, ""},
		{"flag wrong", "", false, false, "INV-8", false, "does not match"},
		{"yes is not enough", "", false, true, "", false, "--yes is not enough: pass --confirm INV-9"},
		{"no terminal", "", false, false, "", false, "no terminal to ask on: pass --confirm INV-9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			c := &cmdContext{name: "cancel", sio: IO{Stdin: strings.NewReader(tc.stdin), Stderr: &errb, Interactive: tc.interactive},
				flags: opsFlags{yes: tc.yes, confirm: tc.confirm}}
			if got := c.confirm(ops.ModeLive, s); got != tc.ok || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("confirm = %v, stderr %q", got, errb.String())
			}
			if tc.interactive && !strings.Contains(errb.String(), "Cancel the whole of reservation R-1: 64.90 EUR\n  customer  Jan Jansen\n  invoice   INV-9\n  gateway   LIVE") {
				t.Fatalf("summary %q", errb.String())
			}
		})
	}
}

// TestListenMoneyHasTwoDecimals: the listener prints amounts as every other
// command does, "1.50" and not the wire's "1.5".
func TestListenMoneyHasTwoDecimals(t *testing.T) {
	e := pushlistener.Event{Record: store.PushRecord{ID: 1, ReceivedAt: time.Unix(0, 0).UTC(), Envelope: "Transaction", Key: "K",
		Amount: decimal.RequireFromString("1.5"), HasAmount: true, Currency: "EUR", Signature: "valid"}, HTTPStatus: 200}
	var b bytes.Buffer
	printJSON(&b, e)
	var l map[string]any
	if err := json.Unmarshal(b.Bytes(), &l); err != nil || l["amount"] != "1.50" {
		t.Fatalf("--json: %s (%v)", b.String(), err)
	}
	b.Reset()
	printLine(&b, e)
	if !strings.Contains(b.String(), "amount 1.50 EUR") {
		t.Fatalf("line: %s", b.String())
	}
}
