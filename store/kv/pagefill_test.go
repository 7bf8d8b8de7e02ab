package kv

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// TestListMigration: a file from before the list's indexes (schema 4)
// gets them on open, and they answer like the reference — built in one
// chunk, in many, and in many cut short at every point and finished by the
// next open.
func TestListMigration(t *testing.T) {
	for _, tc := range []struct {
		name       string
		chunk      int
		cutAfter   []int // opens that stop after that many chunks, before the one that finishes
		wantChunks bool
	}{
		{name: "one chunk"},
		{name: "chunks of 7", chunk: 7},
		{name: "chunks of 50, cut short", chunk: 50, cutAfter: []int{1, 3, 9, 2, 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := OpenBolt(path, Options{File: boltOpts}, nil)
			if err != nil {
				t.Fatal(err)
			}
			listData(t, db, 400)
			all := summaries(t, db)
			// Back to schema 4: the indexes go, and the records are JSON
			// again, naming no list row.
			err = db.file.Bolt().Update(func(tx *bolt.Tx) error {
				for _, b := range pageBuckets {
					if err := tx.DeleteBucket(b); err != nil {
						return err
					}
				}
				if err := jsonRecords(tx); err != nil {
					return err
				}
				return tx.Bucket(bMeta).Put(kSchema, u64(4))
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			for _, cut := range tc.cutAfter {
				_, err := OpenBolt(path, Options{File: boltOpts, FillChunk: tc.chunk, FailFillAfter: cut}, nil)
				if !errors.Is(err, domain.ErrFillCut) {
					t.Fatalf("open cut after %d chunks: %v", cut, err)
				}
			}
			db, err = OpenBolt(path, Options{File: boltOpts, FillChunk: tc.chunk}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, q := range []PageQuery{{Sort: SortCustomer, Limit: 1000}, {Sort: SortAmount, Desc: true, Limit: 1000},
				{Sort: SortInvoice, Limit: 1000}, {Sort: SortState, Limit: 1000}, {Limit: 1000},
				{Filter: "muller", Limit: 1000}, {State: domain.StateCancelled, Limit: 1000}, {State: StateOrderMissing, Limit: 1000},
				{Filter: all[7].Invoice, Limit: 1000}} {
				p, err := (kvLister{db}).ReservationPage(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				if w := domain.PageSummaries(all, q); !slices.Equal(rowKeys(p), rowKeys(w)) || len(w.Rows) == 0 {
					t.Fatalf("%+v: %d rows, want %d", q, len(p.Rows), len(w.Rows))
				}
			}
			// Each row once in each index, and the fill's state gone.
			err = db.file.Bolt().View(func(tx *bolt.Tx) error {
				for _, ix := range listIndexes[:5] {
					if n := tx.Bucket(ix.b).Stats().KeyN; n != len(all) {
						t.Errorf("index %s holds %d entries, want %d", ix.b, n, len(all))
					}
				}
				if n := tx.Bucket(bSumRow).Stats().KeyN; n != len(all) {
					t.Errorf("%d row IDs, want %d", n, len(all))
				}
				if tx.Bucket(bMeta).Get(fillKey(listFillName)) != nil {
					t.Error("the fill's state is still there")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// jsonRecords writes a file's reservation records as the JSON of a file
// before layout 8, which names no list row.
func jsonRecords(tx *bolt.Tx) error {
	b := tx.Bucket(bReservation)
	recs := map[string][]byte{}
	if err := b.ForEach(func(k, v []byte) error {
		r, err := kvlayout.DecodeReservationOf(string(k), v)
		if err != nil {
			return err
		}
		recs[string(k)], err = json.Marshal(r)
		return err
	}); err != nil {
		return err
	}
	for k, v := range recs {
		if err := b.Put([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}
