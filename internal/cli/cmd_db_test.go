package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBCheck (issue 24): `paydesk db check` says a sound cache is sound,
// lists a truncated one's damage with the way out and exits 1; the other
// commands refuse the truncated cache in one line that names the check,
// never with a crash (the old code died of a SIGBUS reading it).
func TestDBCheck(t *testing.T) {
	dir := t.TempDir()
	if code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve"); code != 0 {
		t.Fatalf("test-reservation: exit %d\n%s%s", code, out, errs)
	}
	path := filepath.Join(dir, "paydesk", "paydesk.db")
	code, out, errs := runCLI(t, dir, "", "db", "check")
	if code != 0 || !strings.Contains(out, "no damage found") {
		t.Fatalf("sound cache: exit %d\n%s%s", code, out, errs)
	}
	if err := os.Truncate(path, 8<<10); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, dir, "", "db", "check", "--db", path)
	if code != 1 || !strings.Contains(out, "is damaged") || !strings.Contains(out, "the file was cut short") || !strings.Contains(out, "mv "+path) {
		t.Fatalf("truncated cache: exit %d\n%s%s", code, out, errs)
	}
	for _, args := range [][]string{{"reservations"}, {"audit", "--verify"}, {"transactions"}} {
		code, out, errs = runCLI(t, dir, "", args...)
		if code != 1 || !strings.Contains(errs, "is damaged") || !strings.Contains(errs, "paydesk db check") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v on a truncated cache: exit %d\n%s%s", args, code, out, errs)
		}
	}
	if code, _, errs := runCLI(t, dir, "", "db", "check", "--db", "postgres://x@127.0.0.1/none"); code != 2 || !strings.Contains(errs, "amcheck") {
		t.Errorf("db check of a PostgreSQL URL: exit %d %s", code, errs)
	}
}

// TestDBCompact: `paydesk db compact` writes the cache again, says how
// much smaller, and the cache reads the same after; a PostgreSQL URL is
// refused with what to use instead.
func TestDBCompact(t *testing.T) {
	dir := t.TempDir()
	for range 3 {
		if code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve"); code != 0 {
			t.Fatalf("test-reservation: exit %d\n%s%s", code, out, errs)
		}
	}
	_, before, _ := runCLI(t, dir, "", "reservations", "--json")
	code, out, errs := runCLI(t, dir, "", "db", "compact")
	if code != 0 || !strings.Contains(out, "compacted: ") || !strings.Contains(out, " MB → ") {
		t.Fatalf("db compact: exit %d\n%s%s", code, out, errs)
	}
	if _, after, _ := runCLI(t, dir, "", "reservations", "--json"); after != before || !strings.Contains(after, "reservationNumber") {
		t.Fatalf("after the compaction the reservations read\n%s\nwant\n%s", after, before)
	}
	if code, _, errs := runCLI(t, dir, "", "db", "compact", "--db", "postgres://x@127.0.0.1/none"); code != 2 || !strings.Contains(errs, "VACUUM") {
		t.Errorf("db compact of a PostgreSQL URL: exit %d %s", code, errs)
	}
}
