package kv

import (
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// TestLayout13ListRowsFromRecords: a file of an older layout (the layout-7
// fixture, its summaries bucket beside JSON records) opened by this paydesk
// has no summaries bucket, and its list reads the rows the summaries held
// — every sort, both directions, the rows in full. Written again (format
// 3) every reservation reads the same, the file still has no summaries
// bucket, and the lists' indexes followed the writes; each record names
// its list row, and the key → row ID entries the fill wrote for the
// fixture's records are gone.
func TestLayout13ListRowsFromRecords(t *testing.T) {
	want := map[string]Summary{}
	path, old := layout7Copy(t)
	err := old.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bSummary).ForEach(func(k, v []byte) error {
			s, err := kvlayout.DecodeSummary(v)
			want[string(k)] = s
			return err
		})
	})
	if cerr := old.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(want) == 0 {
		t.Fatalf("the fixture's summaries: %d, %v", len(want), err)
	}

	db, err := OpenBolt(path, Options{File: FileOptions{NoSync: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check := func(when string, entries int) {
		t.Helper()
		if err := db.eng.View(func(tx Tx) error {
			if tx.Bucket(bSummary) != nil {
				t.Errorf("%s: the file has a summaries bucket", when)
			}
			n, named := 0, 0
			if err := tx.Bucket(bSumRow).ForEach(func(_, _ []byte) error { n++; return nil }); err != nil {
				return err
			}
			if err := tx.Bucket(bReservation).ForEach(func(_, v []byte) error {
				if _, ok := kvlayout.ReservationRow(v); ok {
					named++
				}
				return nil
			}); err != nil {
				return err
			}
			if n != entries || named != len(want)-entries {
				t.Errorf("%s: %d key → row ID entries and %d records naming their row, want %d and %d", when, n, named, entries, len(want)-entries)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for sort := range SortCount {
			for _, desc := range []bool{false, true} {
				p, err := (kvLister{db}).ReservationPage(t.Context(), PageQuery{Sort: sort, Desc: desc, Limit: len(want) + 1})
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Rows) != len(want) {
					t.Errorf("%s: sort %d desc %v: %d rows, want %d", when, sort, desc, len(p.Rows), len(want))
				}
				for _, r := range p.Rows {
					if w := want[r.Summary.Key]; !reflect.DeepEqual(r.Summary, w) && !sameSummary(r.Summary, w) {
						t.Errorf("%s: row %s = %+v, want %+v", when, r.Summary.Key, r.Summary, w)
					}
				}
			}
		}
	}
	check("upgraded", len(want))
	update(t, db, func(tx RepoTx) error {
		for k := range want {
			r, err := tx.Reservation(k)
			if err != nil || r == nil {
				t.Fatalf("reservation %s: %v", k, err)
			}
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
		}
		return nil
	})
	check("written again", 0)
}

// sameSummary compares two rows, their decimals by value and their times
// by instant.
func sameSummary(a, b domain.Summary) bool {
	if !a.Amount.Equal(b.Amount) || !a.Captured.Equal(b.Captured) || !a.Remaining.Equal(b.Remaining) || !a.Created.Equal(b.Created) {
		return false
	}
	a.Amount, a.Captured, a.Remaining, a.Created = b.Amount, b.Captured, b.Remaining, b.Created
	return reflect.DeepEqual(a, b)
}
