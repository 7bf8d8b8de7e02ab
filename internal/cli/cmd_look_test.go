package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// files lists what lies under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestLookCommandsWriteNothing: the read-only commands never start a
// sandbox, a listener or a log, and never create a file: on no cache they
// list nothing, on a cache they read it as it is.
func TestLookCommandsWriteNothing(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"reservations"}, {"reservations", "--json"}, {"transactions"}, {"pushes", "--json"}, {"audit"}} {
		code, out, errs := run(t, dir, args...)
		if code != 0 || errs != "" {
			t.Fatalf("%v on no cache: exit %d %q", args, code, errs)
		}
		if args[len(args)-1] == "--json" && strings.TrimSpace(out) != "[]" {
			t.Fatalf("%v on no cache: %q", args, out)
		}
	}
	if code, _, errs := run(t, dir, "show", "R1"); code != 1 || !strings.Contains(errs, "does not exist yet") {
		t.Fatalf("show on no cache: exit %d %q", code, errs)
	}
	if f := files(t, dir); len(f) != 0 {
		t.Fatalf("the look commands wrote %v", f)
	}

	// A cache with a reservation in it (made by a command that does write).
	if code, out, errs := runCLI(t, dir, "", "test-reservation", "--json", "--decline"); code != 1 || !strings.Contains(out, `"status": 690`) {
		t.Fatalf("test-reservation: exit %d %s %s", code, out, errs)
	}
	before := files(t, dir)
	for _, name := range []string{"sandbox.db", "sandbox.secret", "paydesk.log"} {
		if err := removeFile(dir, name); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runCLI(t, dir, "", "reservations")
	if code != 0 || !strings.Contains(out, "declined") || !strings.HasSuffix(out, "\n1 reservation\n") {
		t.Fatalf("reservations: exit %d\n%s%s", code, out, errs)
	}
	// A declined reservation has no number yet and no shipment window.
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "declined") && (!strings.HasPrefix(l, "-  ") || !strings.Contains(l, "  -  ")) {
			t.Fatalf("declined row %q", l)
		}
	}
	for _, args := range [][]string{{"transactions"}, {"pushes"}, {"audit"}, {"reservations", "--state", "declined"}} {
		if code, _, errs := runCLI(t, dir, "", args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
	}
	if after := files(t, dir); len(after) != len(before)-3 {
		t.Fatalf("the look commands wrote files: before %v, after %v", before, after)
	}
}

func removeFile(dir, name string) error {
	return os.Remove(filepath.Join(dir, "paydesk", name))
}

// TestFiltersAreValidated: an unknown filter value is a usage error that
// names the valid ones, not an empty list.
func TestFiltersAreValidated(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reservations", "--state", "partly"}, `--state "partly": not one of reserved, partly_captured, captured, cancelled, closed, declined, awaiting_customer`},
		{[]string{"transactions", "--kind", "payment"}, `--kind "payment": not one of capture, refund, giftcard_pay`},
		{[]string{"transactions", "--status", "ok"}, `--status "ok": not one of success, pending, failed`},
		{[]string{"pushes", "--status", "bad"}, `not one of success, pending, failed, rejected, ignored`},
		{[]string{"pushes", "--type", "Push"}, `--type "Push": not one of DataRequest, Transaction`},
		{[]string{"pushes", "--kind", "C7000"}, `--kind "C7000": not one of Reserve`},
		{[]string{"audit", "--limit", "-1"}, "--limit -1"},
		{[]string{"form", "ship", "R1"}, `form "ship": not one of capture`},
	} {
		code, _, errs := run(t, t.TempDir(), tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
	// Case does not matter where the gateway's spelling is CamelCase.
	if code, _, errs := run(t, t.TempDir(), "pushes", "--type", "transaction", "--kind", "reserve"); code != 0 {
		t.Errorf("pushes --type transaction --kind reserve: exit %d %s", code, errs)
	}
}

// TestAmountsArePlainDecimals: an exponent, a sign or words are refused
// naming the field, before anything starts.
func TestAmountsArePlainDecimals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"refund", "TX", "1e2", "--reason", "return", "--yes"}, `amount "1e2": write a plain decimal amount`},
		{[]string{"giftcard", "pay", "1E2", "--service", "voucherb", "--card", "1", "--pin", "1", "--yes"}, `amount "1E2"`},
		{[]string{"giftcard", "pay", "--service", "voucherb", "--card", "1", "--pin", "1", "--yes", "--", "-5"}, `amount "-5"`},
		{[]string{"refund", "TX", "0x10", "--reason", "return"}, `amount "0x10"`},
	} {
		dir := t.TempDir()
		code, _, errs := run(t, dir, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%v wrote %v", tc.args, f)
		}
	}
	for in, want := range map[string]string{"12": "12.00", "12.5": "12.50", "12,50": "12.50", " 0.01 ": "0.01"} {
		d, err := parseAmount("amount", in)
		if err != nil || money(d) != want {
			t.Errorf("parseAmount(%q) = %s, %v", in, money(d), err)
		}
	}
}

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 reservations"}, {1, "1 reservation"}, {2, "2 reservations"}, {-1, "-1 reservation"}} {
		if got := count(tc.n, "reservation", "reservations"); got != tc.want {
			t.Errorf("count(%d) = %q", tc.n, got)
		}
	}
}
