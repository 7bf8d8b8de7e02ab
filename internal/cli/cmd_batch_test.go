package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchCommand runs batch capture and cancel-rest from the command line
// against the embedded sandbox: the dry run sends nothing, the run captures,
// the same manifest again sends nothing, and the cancel of the rest takes
// what was not shipped.
func TestBatchCommand(t *testing.T) {
	dir := t.TempDir()
	number := newReservation(t, dir)
	manifest := filepath.Join(dir, "shipments.csv")
	csv := "Reservation Number;SKU;Qty;Parcel;Track & Trace\n" + number + ";SHOE-42;1;P1;3S001\n" + number + ";SOCK-3P;2;P1;3S001\nNOPE;SHOE-42;1;P2;3S002\n"
	if err := os.WriteFile(manifest, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, _ := runCLI(t, dir, "", "batch", "capture", manifest, "--dry-run", "--json")
	pf := decodeJSON[map[string]any](t, out)
	if code != exitFailed || pf["reservations"] != float64(1) || pf["refusedReservations"] != float64(1) {
		t.Fatalf("dry run: exit %d %v", code, pf)
	}

	// No terminal and no --yes: refused, nothing journaled.
	code, _, errs := runCLI(t, dir, "", "batch", "capture", manifest)
	if code != exitFailed || !strings.Contains(errs, "pass --yes") {
		t.Fatalf("without --yes: exit %d %s", code, errs)
	}
	code, _, errs = runCLI(t, dir, "", "batch", "capture", manifest, "--concurrency", "0")
	if code != exitUsage || !strings.Contains(errs, "--concurrency") {
		t.Fatalf("concurrency 0: exit %d %s", code, errs)
	}

	code, out, errs = runCLI(t, dir, "", "batch", "capture", manifest, "--yes", "--json")
	res := decodeJSON[map[string]any](t, out)
	counts, _ := res["counts"].(map[string]any)
	if code != exitFailed || res["batch"] != "B1" || counts["settled"] != float64(1) || res["sent"] != float64(1) {
		t.Fatalf("run: exit %d %v %s", code, res, errs) // exit 1: a reservation was refused
	}
	code, out, _ = runCLI(t, dir, "", "reservations", "--json")
	list := decodeJSON[[]map[string]any](t, out)
	if code != exitOK || list[0]["captured"] != "88.95" {
		t.Fatalf("captured %v", list[0])
	}

	// The same manifest again: its batch, nothing sent.
	code, out, _ = runCLI(t, dir, "", "batch", "capture", manifest, "--yes")
	if code != exitOK || !strings.Contains(out, "This manifest is batch B1") || !strings.Contains(out, "sent now 0, ended in an earlier run 1") {
		t.Fatalf("again: exit %d\n%s", code, out)
	}

	// What was not shipped is cancelled; a second list naming it again is refused.
	list2 := filepath.Join(dir, "finished.txt")
	if err := os.WriteFile(list2, []byte(number+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, dir, "", "batch", "cancel-rest", list2, "--yes")
	if code != exitOK || !strings.Contains(out, "1 settled") || !strings.Contains(out, "cancelled: 124.85 EUR") {
		t.Fatalf("cancel-rest: exit %d\n%s%s", code, out, errs)
	}
	_, out, _ = runCLI(t, dir, "", "audit")
	for _, want := range []string{"batch-capture", "batch-cancel-rest", "batch B1 rows 2, 3; parcel P1 tracking 3S001"} {
		if !strings.Contains(out, want) {
			t.Errorf("audit lacks %q:\n%s", want, out)
		}
	}
}
