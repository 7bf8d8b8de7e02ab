package cli

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// paydesk import: one line per order, idempotent, a refused order named
// with its row and rule and exit 1; the orders show in reservations as
// awaiting their Reserve push.
func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join("..", "..", "testdata", "webshop", "orders.csv")
	code, out, errs := runCLI(t, dir, "", "import", csv)
	if code != 0 || !strings.Contains(out, "SHOP-88001  imported") || !strings.Contains(out, "2 orders imported, 0 already known") {
		t.Fatalf("import: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = runCLI(t, dir, "", "import", csv, "--json")
	rows := decodeJSON[[]importJSON](t, out)
	if code != 0 || len(rows) != 2 || rows[0].Result != "already known" || rows[0].Where != "rows 2-4" {
		t.Fatalf("import again: exit %d %+v", code, rows)
	}
	var in strings.Builder
	in.WriteString("invoice,article_number,title,quantity,price,vat\nX-1,A,Mug,1,1e2,21\nX-2,B,Cup,2,3.50,9\n")
	code, out, _ = runCLIStdin(t, dir, in.String(), "import", "-")
	if code != 1 || !strings.Contains(out, `row 2: column price: "1e2" is not a plain decimal`) || !strings.Contains(out, "X-2") {
		t.Fatalf("bad row: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, dir, "", "reservations", "--json")
	res := decodeJSON[[]reservationJSON](t, out)
	if code != 0 || len(res) != 3 {
		t.Fatalf("reservations after import: %d %+v", code, res)
	}
	for _, r := range res {
		if r.State != "awaiting_customer" || !r.LinesKnown {
			t.Errorf("%s: %s, lines known %v", r.Invoice, r.State, r.LinesKnown)
		}
	}
}

// runCLIStdin is runCLI with data on standard input but no terminal.
func runCLIStdin(t *testing.T, dir, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return runCLIWith(t, dir, stdin, false, args...)
}

// paydesk audit --verify: intact after operations; exit 1 naming the entry
// once one is removed.
func TestAuditVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	if code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json"); code != 0 {
		t.Fatalf("test-reservation: %d\n%s%s", code, out, errs)
	}
	code, out, _ := runCLI(t, dir, "", "audit", "--verify")
	if code != 0 || !strings.Contains(out, "audit log intact") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	// Someone removes the first entry from the cache file behind paydesk's back.
	b, err := bolt.Open(filepath.Join(dir, "paydesk", "paydesk.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("audit")).Delete(binary.BigEndian.AppendUint64(nil, 1))
	})
	_ = b.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, dir, "", "audit", "--verify")
	if code != 1 || !strings.Contains(out, "NOT intact") || !strings.Contains(out, "entries before 2 are missing") {
		t.Fatalf("verify after removing entry 1: exit %d\n%s", code, out)
	}
}

// issue 24: every record is accounted for (read = imported + known +
// conflicts + refused), a refused record's echo is cut with a marker so no
// report line runs to megabytes, and the exit code says something was not
// imported.
func TestImportAccountsAndBoundsLines(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("Ä", 300<<10)
	in := "invoice,article_number,title,quantity,price,vat,first_name\n" +
		"X-1,A,Mug,1,2.00,21,Ann\n" +
		"X-2,A,Mug,1,2.00,21,Ann\nX-2,B,Cup,1,2.00,21," + long + "\n" +
		"X-3,A,Mug,1,2.00,21,Ann\nX-3,A,Mug,1,2.00,21,Ann\n"
	code, out, errs := runCLIStdin(t, dir, in, "import", "-")
	if code != 1 || !strings.Contains(out, "3 records read: 1 order imported, 0 already known, 0 conflicts, 2 refused") {
		t.Fatalf("exit %d\n%.2000s%s", code, out, errs)
	}
	if !strings.Contains(out, "more bytes]") || !strings.Contains(out, "must be unique") {
		t.Fatalf("no cut marker or no duplicate-article refusal:\n%.3000s", out)
	}
	for i, l := range strings.Split(out, "\n") {
		if len(l) > 1000 {
			t.Fatalf("line %d is %d bytes", i+1, len(l))
		}
	}
	code, out, _ = runCLIStdin(t, dir, in, "import", "-", "--json")
	rows := decodeJSON[[]importJSON](t, out)
	if code != 1 || len(rows) != 3 || len(rows[1].Reason) > 1000 {
		t.Fatalf("json: exit %d, %d rows", code, len(rows))
	}
}

// A directory or a device given to import is refused at once, naming it.
func TestImportRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := runCLI(t, dir, "", "import", dir)
	if code != 1 || !strings.Contains(out, "a directory, not a regular file") || !strings.Contains(out, "1 file not read to the end") {
		t.Fatalf("directory: exit %d\n%s", code, out)
	}
}
