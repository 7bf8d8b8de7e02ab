package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"paydesk/store"
)

// runCLI runs paydesk with args against a cache in dir. A stdin stands
// for a terminal someone types into; without one there is no terminal.
func runCLI(t *testing.T, dir string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runCLIWith(t, dir, stdin, stdin != "", args...)
}

// runCLIWith runs paydesk with stdin, a terminal or not.
func runCLIWith(t *testing.T, dir string, stdin string, interactive bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"XDG_DATA_HOME": dir, "XDG_CONFIG_HOME": dir, "USER": "clitest", "HOME": dir}
	code := Main(context.Background(), IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Interactive: interactive}, args)
	return code, out.String(), errb.String()
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return v
}

// TestCommandsAgainstEmbeddedSandbox runs the operations from the command
// line as a script would: JSON out, exit codes, the push waited for.
func TestCommandsAgainstEmbeddedSandbox(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation: exit %d\n%s%s", code, out, errs)
	}
	step := decodeJSON[map[string]any](t, out)
	number, _ := step["target"].(string)
	if number == "" || step["status"] != float64(190) {
		t.Fatalf("test-reservation result %v", step)
	}

	code, out, _ = runCLI(t, dir, "", "reservations", "--json")
	list := decodeJSON[[]map[string]any](t, out)
	if code != 0 || len(list) != 1 || list[0]["reservationNumber"] != number || list[0]["state"] != "reserved" || list[0]["amount"] != "213.80" {
		t.Fatalf("reservations: exit %d %v", code, list)
	}

	code, out, errs = runCLI(t, dir, "", "capture", number, "SHOE-42=2", "SOCK-3P=2", "--json", "--yes")
	capt := decodeJSON[map[string]any](t, out)
	if code != 0 || capt["status"] != float64(190) || capt["invoiceNumber"] == "" || capt["key"] == "" || capt["pushReceived"] != true || capt["amount"] != "148.90" {
		t.Fatalf("capture: exit %d %v %s", code, capt, errs)
	}

	// More than remains: refused before sending, the rule named, exit 1.
	code, out, _ = runCLI(t, dir, "", "capture", number, "SHOE-42=2", "--json", "--yes")
	bad := decodeJSON[map[string]any](t, out)
	if code != 1 || bad["ok"] != false || !strings.Contains(out, "only 1 left to capture") {
		t.Fatalf("over-capture: exit %d %s", code, out)
	}
	// The same refusal as text names the capture, not the gateway's
	// action ("Pay").
	code, _, errs = runCLI(t, dir, "", "capture", number, "SHOE-42=2", "--yes")
	if code != 1 || !strings.Contains(errs, "FAILED: Capture "+number) {
		t.Fatalf("over-capture as text: exit %d %q", code, errs)
	}

	code, out, _ = runCLI(t, dir, "", "show", number, "--json")
	show := decodeJSON[reservationJSON](t, out)
	if code != 0 || show.State != "partly_captured" || len(show.Lines) != 3 || show.Lines[0].ArticleNumber != "SHOE-42" ||
		show.Lines[0].Captured != 2 || show.Lines[0].Remaining != 1 || len(show.Transactions) != 1 {
		t.Fatalf("show: exit %d %+v", code, show)
	}

	// Sandbox and test ask for an explicit "yes": "n" and "y" send nothing,
	// and so does no terminal without --yes.
	for _, answer := range []string{"n\n", "y\n", "\n"} {
		code, _, errs = runCLI(t, dir, answer, "cancel", number)
		if code != 1 || !strings.Contains(errs, "nothing sent") || !strings.Contains(errs, "Cancel the remainder of reservation "+number+": 64.90 EUR") ||
			!strings.Contains(errs, "customer  Jan Jansen") || !strings.Contains(errs, "  lines     SHOE-42 Trail running shoe, size 42  1 × 59.95 = 59.95\n            SHIP Shipping  1 × 4.95 = 4.95\n") {
			t.Fatalf("cancel answered %q: exit %d %s", answer, code, errs)
		}
	}
	code, _, errs = runCLI(t, dir, "", "cancel", number)
	if code != 1 || !strings.Contains(errs, "no terminal to ask on: pass --yes; nothing sent") {
		t.Fatalf("cancel without a terminal: exit %d %s", code, errs)
	}
	code, out, errs = runCLI(t, dir, "yes\n", "cancel", number)
	if code != 0 || !strings.Contains(out, "190") {
		t.Fatalf("cancel: exit %d %s %s", code, out, errs)
	}

	key, _ := capt["key"].(string)
	code, out, errs = runCLI(t, dir, "", "refund", key, "20", "--reason", "return", "--json", "--yes")
	ref := decodeJSON[map[string]any](t, out)
	if code != 0 || ref["amount"] != "20.00" || ref["status"] != float64(190) {
		t.Fatalf("refund: exit %d %v %s", code, ref, errs)
	}
	code, _, errs = runCLI(t, dir, "", "refund", key, "--yes")
	if code != 1 || !strings.Contains(errs, "Reason: required") {
		t.Fatalf("refund without reason: exit %d %s", code, errs)
	}

	code, out, _ = runCLI(t, dir, "", "giftcard", "pay", "30", "--service", "voucherb", "--card", "6299440000000000023", "--pin", "2222", "--json", "--yes")
	gc := decodeJSON[map[string]any](t, out)
	if code != 0 || gc["subCode"] != "S003" || gc["remainder"] != "20.00" || gc["redirectUrl"] == "" {
		t.Fatalf("giftcard pay: exit %d %v", code, gc)
	}
	code, out, errs = runCLI(t, dir, "", "giftcard", "refund", gc["key"].(string), "--reason", "duplicate", "--yes", "--json")
	if code != 0 || !strings.Contains(out, `"status": 190`) {
		t.Fatalf("giftcard refund: exit %d %s %s", code, out, errs)
	}

	code, out, _ = runCLI(t, dir, "", "audit", "--json")
	audit := decodeJSON[[]map[string]any](t, out)
	actions := map[string]bool{}
	for _, a := range audit {
		actions[a["action"].(string)] = true
		if a["operator"] != "clitest" {
			t.Errorf("audit operator %v", a["operator"])
		}
	}
	for _, a := range []string{"reserve", "customer-approve", "capture", "cancel", "refund", "giftcard-pay", "giftcard-refund"} {
		if !actions[a] {
			t.Errorf("audit lacks %s: %v", a, actions)
		}
	}
	if code != 0 {
		t.Fatalf("audit exit %d", code)
	}
}

// TestCommandSaysWhenTheConsoleHoldsTheCache: a cache held by a process
// that serves no socket (a command that runs by itself) fails within
// seconds and plainly instead of hanging.
func TestCommandSaysWhenTheConsoleHoldsTheCache(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	code, _, errs := runCLI(t, dir, "", "reservations")
	if code != 1 || !strings.Contains(errs, "a paydesk command that is still running holds the cache") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
