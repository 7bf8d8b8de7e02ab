package store_test

import (
	"path/filepath"
	"testing"

	"paydesk/internal/pgtest"
	"paydesk/store"
	"paydesk/store/storetest"
)

// TestCopyBulkInto: the generator's bulk copy (storetest/gen -from) fills a
// new database's kv tables and converts them to the native engine's
// tables (the next open, on the native engine, pages the same rows as the
// file); into a database converted already it refuses.
func TestCopyBulkInto(t *testing.T) {
	pgtest.OwnEngine(t)
	src, err := store.Open(filepath.Join(t.TempDir(), "gen.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := storetest.Generate(src, 300, 1); err != nil {
		t.Fatal(err)
	}
	dsn := pgtest.Fresh(t)
	if err := src.CopyBulkInto(t.Context(), dsn); err != nil {
		t.Fatal(err)
	}
	dst, err := store.Open(dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for _, q := range []store.PageQuery{{Sort: store.SortCreated, Desc: true, Limit: 50}, {Sort: store.SortCustomer, Limit: 50}} {
		want, err := src.ReservationPage(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dst.ReservationPage(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != len(want.Rows) {
			t.Fatalf("sort %v: %d rows, want %d", q.Sort, len(got.Rows), len(want.Rows))
		}
		for i := range want.Rows {
			if got.Rows[i].Summary.Key != want.Rows[i].Summary.Key {
				t.Fatalf("sort %v, row %d: %s, want %s", q.Sort, i, got.Rows[i].Summary.Key, want.Rows[i].Summary.Key)
			}
		}
	}
	n, err := dst.ReservationCount(t.Context(), store.PageQuery{})
	if err != nil || n != 300 {
		t.Fatalf("%d reservations (%v), want 300", n, err)
	}
	if err := src.CopyBulkInto(t.Context(), dsn); err == nil {
		t.Fatal("a second bulk copy into the converted database was not refused")
	}
}
