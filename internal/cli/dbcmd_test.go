package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"paydesk/internal/pgtest"
	"paydesk/store"
)

// TestDBMigrateSaysWhatItDid: on an empty database `db migrate` says which
// migrations it applied (not "schema is current" after making the tables);
// run again it says there was nothing to do.
func TestDBMigrateSaysWhatItDid(t *testing.T) {
	dsn := pgtest.Fresh(t)
	dir := t.TempDir()
	code, out, errs := runCLI(t, dir, "", "db", "migrate", "--db", dsn)
	if code != 0 || !strings.Contains(out, "applied ") || !strings.Contains(out, "0001_kv.sql") || strings.Contains(out, "nothing to do") {
		t.Fatalf("first migrate: exit %d %q %s", code, out, errs)
	}
	code, out, errs = runCLI(t, dir, "", "db", "migrate", "--db", dsn)
	if code != 0 || !strings.Contains(out, "schema is current, nothing to do") || strings.Contains(out, "applied") {
		t.Fatalf("second migrate: exit %d %q %s", code, out, errs)
	}
}

// TestDBCopyIntoADatabaseInUse: a cache copied into a new database is
// converted to the native engine's tables at the end of the copy; a second
// person's cache copied into it is refused before anything is written,
// saying why, and so is the first cache again (the kv tables the copy
// writes are no longer the store).
func TestDBCopyIntoADatabaseInUse(t *testing.T) {
	dsn := pgtest.Fresh(t)
	cache := func() string {
		dir := t.TempDir()
		if code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve"); code != 0 {
			t.Fatalf("test-reservation: exit %d %s %s", code, out, errs)
		}
		return filepath.Join(dir, "paydesk", "paydesk.db")
	}
	first, second := cache(), cache()
	dir := t.TempDir()
	if code, out, errs := runCLI(t, dir, "", "db", "copy", "--from", first, "--to", dsn); code != 0 {
		t.Fatalf("first copy: exit %d %s %s", code, out, errs)
	}
	code, out, errs := runCLI(t, dir, "", "db", "copy", "--from", second, "--to", dsn)
	if code != 1 || !strings.Contains(errs, "in use") || !strings.Contains(errs, "nothing was copied") {
		t.Fatalf("copy into a database in use: exit %d %s %s", code, out, errs)
	}
	db, err := store.Open(dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := db.LoadReservationSummaries(t.Context())
	_ = db.Close()
	if err != nil || len(sums) != 1 {
		t.Fatalf("after the refused copy the database has %d reservations (%v), want the first cache's 1", len(sums), err)
	}
	if code, out, errs := runCLI(t, dir, "", "db", "copy", "--from", first, "--to", dsn); code != 1 || !strings.Contains(errs, "native engine") {
		t.Fatalf("the first copy again: exit %d %s %s", code, out, errs)
	}
}

// TestLockedCacheNamesTheWayOut: a held cache named with --db is not
// answered with "use --db"; the default cache is.
func TestLockedCacheNamesTheWayOut(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	for _, tc := range []struct {
		path  string
		args  []string
		wantD bool
	}{
		{filepath.Join(dir, "paydesk", "paydesk.db"), []string{"reservations"}, true},
		{other, []string{"reservations", "--db", other}, false},
	} {
		db, err := store.Open(tc.path, store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(t, dir, "", tc.args...)
		_ = db.Close()
		if code != 1 || !strings.Contains(errs, "in use by another paydesk process") || strings.Contains(errs, "--db") != tc.wantD {
			t.Errorf("%v: exit %d, stderr %q (want --db named: %v)", tc.args, code, errs, tc.wantD)
		}
	}
}
