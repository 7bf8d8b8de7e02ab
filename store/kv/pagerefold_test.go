package kv

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"paydesk/internal/fold"
	"paydesk/store/domain"
)

// TestRefoldOnOpen: a file whose search texts an older folding wrote (no
// fold version in meta, texts without the transliterations) has them
// folded again at open, also when that open is cut short and the next
// goes on: then "mueller" finds Müller, and the version is recorded.
func TestRefoldOnOpen(t *testing.T) {
	for _, cuts := range [][]int{nil, {1, 2}} {
		t.Run(fmt.Sprintf("cuts=%v", cuts), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := OpenBolt(path, Options{File: FileOptions{NoSync: true}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			listData(t, db, 300)
			all := summaries(t, db)
			// As an older paydesk left it: every row's text without the
			// German fold, and no version.
			err = db.file.Bolt().Update(func(tx *bolt.Tx) error {
				rows, tb := BoltBucket{Bolt: tx.Bucket(bSumRow)}, BoltBucket{Bolt: tx.Bucket(bSumText)}
				var f fold.Folder
				for _, s := range all {
					text := append(domain.AppendSearchFields(nil, &f, fold.String(s.Invoice), fold.String(s.Customer), s.Key), '\n')
					id, _ := recordRow(rows, []byte(s.Key), tx.Bucket(bReservation).Get([]byte(s.Key)))
					if err := setRowText(tb, id, []byte(s.Key), text); err != nil {
						return err
					}
				}
				return tx.Bucket(bMeta).Delete(kFoldVersion)
			})
			if err != nil {
				t.Fatal(err)
			}
			q := PageQuery{Filter: "mueller", Limit: 1000}
			want := domain.PageSummaries(all, q)
			if len(want.Rows) == 0 {
				t.Fatal("the data has no Müller")
			}
			if p, _ := (kvLister{db}).ReservationPage(t.Context(), q); len(p.Rows) != 0 {
				t.Fatalf("the old texts found %d rows for mueller", len(p.Rows))
			}
			_ = db.Close()
			for _, cut := range cuts {
				if _, err := OpenBolt(path, Options{File: FileOptions{NoSync: true}, FillChunk: 50, FailFillAfter: cut}, nil); !errors.Is(err, domain.ErrFillCut) {
					t.Fatalf("open cut after %d chunks: %v", cut, err)
				}
			}
			db, err = OpenBolt(path, Options{File: FileOptions{NoSync: true}, FillChunk: 50}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p, err := (kvLister{db}).ReservationPage(t.Context(), q)
			if err != nil || !slices.Equal(rowKeys(p), rowKeys(want)) {
				t.Fatalf("after the refold: %d rows (%v), want %d", len(p.Rows), err, len(want.Rows))
			}
			_ = db.file.Bolt().View(func(tx *bolt.Tx) error {
				if v := tx.Bucket(bMeta).Get(kFoldVersion); len(v) != 1 || int(v[0]) != fold.Version {
					t.Errorf("fold version %v recorded, want %d", v, fold.Version)
				}
				if tx.Bucket(bMeta).Get(fillKey(refoldFillName)) != nil {
					t.Error("the refold's state is still there")
				}
				return nil
			})
		})
	}
}

// TestRefoldOnOpenPG: the kv tables of a PostgreSQL database whose list
// texts an older folding wrote have them folded again (RefoldPG, which
// the store's open runs). The native engine's tables: store/postgres.
func TestRefoldOnOpenPG(t *testing.T) {
	db := openPG(t)
	listData(t, db, 300)
	all := summaries(t, db)
	q := PageQuery{Filter: "mueller", Limit: 1000}
	want := domain.PageSummaries(all, q)
	ctx := context.Background()
	pool := db.pg().pool
	for _, tb := range []string{"paydesk_summary", "paydesk_txlist"} {
		if _, err := pool.Exec(ctx, "UPDATE "+tb+" SET search = 'old'"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, "DELETE FROM paydesk_numbers WHERE name = 'fold-version'"); err != nil {
		t.Fatal(err)
	}
	if p, _ := (kvLister{db}).ReservationPage(ctx, q); len(p.Rows) != 0 || len(want.Rows) == 0 {
		t.Fatalf("old texts found %d rows; the data has %d", len(p.Rows), len(want.Rows))
	}
	if err := db.RefoldPG(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := (kvLister{db}).ReservationPage(ctx, q)
	if err != nil || !slices.Equal(rowKeys(p), rowKeys(want)) {
		t.Fatalf("after the refold: %d rows (%v), want %d", len(p.Rows), err, len(want.Rows))
	}
}
