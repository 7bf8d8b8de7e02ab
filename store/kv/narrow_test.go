package kv

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/store/domain"
	"paydesk/store/repotest"
)

// TestStateAndCreatedReadNoRecord: a filter of a state and a created
// range is answered from an index alone, the rows' records unread. Here
// every record is made unreadable once the indexes hold the rows: the
// counts of such filters are still the reference's, while a filter with a
// condition only a record answers (an amount at the ends of its range,
// where a fraction of a cent may decide) no longer finds those rows.
func TestStateAndCreatedReadNoRecord(t *testing.T) {
	db := openBoltAt(t, filepath.Join(t.TempDir(), "l.db"))
	listData(t, db, 400)
	all := summaries(t, db)
	before, after := t0.Add(-100*time.Minute), t0.Add(-150*time.Minute)
	upTo := func(to time.Time) *query.TimeRange { return &query.TimeRange{To: to} }
	tests := []struct {
		name  string
		q     PageQuery
		exact bool
	}{
		{"tab state, created before", PageQuery{State: domain.StateReserved, Where: query.Query{Created: upTo(before)}}, true},
		{"tab state, created between", PageQuery{State: domain.StateCancelled, Where: query.Query{Created: &query.TimeRange{From: after, To: before}}}, true},
		{"filter state, created after", PageQuery{Where: query.Query{State: string(domain.StateDeclined), Created: &query.TimeRange{From: after}}}, true},
		{"filter state alone", PageQuery{Where: query.Query{State: string(domain.StateReserved)}}, true},
		{"the same state twice", PageQuery{State: domain.StateReserved, Where: query.Query{State: string(domain.StateReserved), Created: upTo(before)}}, true},
		{"created alone", PageQuery{Where: query.Query{Created: upTo(before)}}, true},
		{"order missing, created before", PageQuery{State: StateOrderMissing, Where: query.Query{Created: upTo(before)}}, true},
		{"an amount at some rows' own", PageQuery{State: domain.StateReserved, Where: query.Query{Created: upTo(before), Amount: &query.AmountRange{Min: dec("2"), HasMin: true}}}, false},
	}
	want := make([]int, len(tests))
	for i, tt := range tests {
		q := tt.q
		q.Limit = 1
		if want[i] = domain.PageSummaries(all, q).Total; want[i] == 0 {
			t.Fatalf("%s: the reference keeps no row: the test's data drifted", tt.name)
		}
	}
	err := db.file.Bolt().Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bReservation)
		var keys [][]byte
		if err := b.ForEach(func(k, _ []byte) error {
			keys = append(keys, append([]byte(nil), k...))
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := b.Put(k, []byte{0xff}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := (kvLister{db}).ReservationCount(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if tt.exact && n != want[i] {
				t.Errorf("count %d, want %d: the records were read", n, want[i])
			}
			if !tt.exact && n == want[i] {
				t.Errorf("count %d with every record unreadable: the amount's ends were not checked", n)
			}
		})
	}
}

// TestFieldFilterReadsItsRowsOnly: a filter of a field's value
// (customer:, email:) is answered from the search text: the rows whose
// text holds the value are found by the text blocks' search and their
// field checked in the text, no record read. With an amount, the records
// of the rows at its range's ends only are read. Either keeps the
// reference's rows.
func TestFieldFilterReadsItsRowsOnly(t *testing.T) {
	db := openBoltAt(t, filepath.Join(t.TempDir(), "l.db"))
	listData(t, db, 400)
	all := summaries(t, db)
	amount := &query.AmountRange{Min: dec("2"), HasMin: true}
	for _, tt := range []struct {
		name  string
		state State
		w     query.Query
		reads bool // the rows' records are read
	}{
		{"customer", "", query.Query{Customer: []string{"gruber"}}, false},
		{"customer folded", "", query.Query{Customer: []string{"MÜLLER"}}, false},
		{"e-mail", "", query.Query{Email: []string{"c12"}}, false},
		{"customer and created", "", query.Query{Customer: []string{"zola"}, Created: &query.TimeRange{To: t0.Add(-100 * time.Minute)}}, false},
		{"state and customer", domain.StateReserved, query.Query{Customer: []string{"anna"}}, false},
		{"none", "", query.Query{Customer: []string{"nobody"}}, false},
		{"customer, created and amount", "", query.Query{Customer: []string{"gruber"}, Amount: amount, Created: &query.TimeRange{To: t0}}, true},
		{"state, customer and amount", domain.StateCancelled, query.Query{Customer: []string{"de vries"}, Amount: amount}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := PageQuery{State: tt.state, Where: tt.w, Limit: 1}
			want := domain.PageSummaries(all, q).Total
			got, read := condReads(t, db, q)
			if n := popCount(got); n != want {
				t.Errorf("%d rows, want %d", n, want)
			}
			// The records of the rows at the amount's ends (1.99, 2, 2.01)
			// among those the other conditions leave.
			edge := 0
			for _, s := range all {
				if s.Amount.Sub(dec("2")).Abs().LessThanOrEqual(dec("0.01")) {
					edge++
				}
			}
			if tt.reads && (read == 0 || read > edge) || !tt.reads && read > 0 {
				t.Errorf("%d records read for %d rows of %d (%d at the amount's ends)", read, want, len(all), edge)
			}
		})
	}
}

// TestAmountFilterReadsItsEdgesOnly: an amount range alone is a range of
// the amount index: its rows are kept without their record, except those
// whose cents sit at its ends (an amount's fraction of a cent is not in
// the index), and it keeps the reference's rows.
func TestAmountFilterReadsItsEdgesOnly(t *testing.T) {
	db := openBoltAt(t, filepath.Join(t.TempDir(), "l.db"))
	listData(t, db, 400)
	all := summaries(t, db)
	for _, tt := range []struct {
		name  string
		r     query.AmountRange
		edges []string // the amounts whose rows are read
	}{
		{"more than", query.AmountRange{Min: dec("2"), HasMin: true, MinExcl: true}, []string{"1.99", "2", "2.01"}},
		{"between", query.AmountRange{Min: dec("2"), HasMin: true, Max: dec("4"), HasMax: true}, []string{"1.99", "2", "2.01", "3.99", "4", "4.01"}},
		{"at most, a fraction of a cent", query.AmountRange{Max: dec("3.005"), HasMax: true}, []string{"2.99", "3", "3.01"}},
		{"with a customer", query.AmountRange{Min: dec("3"), HasMin: true}, []string{"2.99", "3", "3.01"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := query.Query{Amount: &tt.r}
			if tt.name == "with a customer" {
				w.Customer = []string{"anna"}
			}
			q := PageQuery{Where: w, Limit: 1}
			want := domain.PageSummaries(all, q).Total
			edge := 0
			for _, s := range all {
				for _, e := range tt.edges {
					if s.Amount.Equal(dec(e)) {
						edge++
					}
				}
			}
			got, read := condReads(t, db, q)
			if n := popCount(got); n != want || want == 0 {
				t.Errorf("%d rows, want %d (not 0: the test's data drifted)", n, want)
			}
			if read == 0 && edge > 0 || read > edge {
				t.Errorf("%d records read, want the %d rows at the range's ends", read, edge)
			}
		})
	}
}

// condReads finds the reservation list's rows of q's state and Where as a
// page does (condBits, nothing cached), and how many records it read.
func condReads(t *testing.T, db *DB, q PageQuery) ([]uint64, int) {
	t.Helper()
	l := *resBolt
	read := 0
	l.keep = func(k, v []byte, q *PageQuery, f *fold.Folder) bool {
		read++
		return resBolt.keep(k, v, q, f)
	}
	var got []uint64
	err := db.view(func(tx Tx) (err error) {
		var c pageCache
		got, err = c.condBits(t.Context(), tx.(boltTx), &l, &q)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, read
}

// TestAmountFilterOpenEnded: an amount range open at an end holds every
// amount past its other end, however large (beyond the cents the index
// answers ranges for).
func TestAmountFilterOpenEnded(t *testing.T) {
	db := openBoltAt(t, filepath.Join(t.TempDir(), "l.db"))
	rs, _ := repotest.ListData(3)
	for i, price := range []string{"20000000000000", "4.50", "-20000000000000"} {
		rs[i].Lines[0].Price = dec(price)
	}
	put(t, db, rs, nil)
	for _, tt := range []struct {
		name string
		r    query.AmountRange
		want int
	}{
		{"more than", query.AmountRange{Min: dec("5"), HasMin: true}, 1},
		{"at most", query.AmountRange{Max: dec("5"), HasMax: true}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := condReads(t, db, PageQuery{Where: query.Query{Amount: &tt.r}})
			if n := popCount(got); n != tt.want {
				t.Errorf("%d rows, want %d", n, tt.want)
			}
		})
	}
}
