package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/internal/fold"
	"paydesk/internal/pgtest"
	"paydesk/store/domain"
	"paydesk/store/kv"
)

// TestRefoldOnOpen: a file whose search texts an older folding wrote (no
// fold version in meta, texts without the transliterations) has them
// folded again at open, also when that open is cut short and the next
// goes on: then "mueller" finds Müller, and the version is recorded.
func TestRefoldOnOpen(t *testing.T) {
	pgtest.OwnEngine(t)
	for _, cuts := range [][]int{nil, {1, 2}} {
		path := filepath.Join(t.TempDir(), "old.db")
		db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		pageData(t, db, 300)
		all, _ := db.LoadReservationSummaries(t.Context())
		// As an older paydesk left it: every row's text without the
		// German fold, and no version.
		err = db.bk.File().Bolt().Update(func(tx *bolt.Tx) error {
			rows, tb := tx.Bucket(bSumRow), tx.Bucket(bSumText)
			var f fold.Folder
			for _, s := range all {
				text := append(domain.AppendSearchFields(nil, &f, fold.String(s.Invoice), fold.String(s.Customer), s.Key), '\n')
				if err := kv.SetSearchText(kv.BoltBucket{Bolt: rows}, kv.BoltBucket{Bolt: tb}, []byte(s.Key), text); err != nil {
					return err
				}
			}
			return tx.Bucket(bMeta).Delete(kFoldVersion)
		})
		if err != nil {
			t.Fatal(err)
		}
		q := PageQuery{Filter: "mueller", Limit: 1000}
		want := PageSummaries(all, q)
		if len(want.Rows) == 0 {
			t.Fatal("the data has no Müller")
		}
		if p, _ := db.ReservationPage(t.Context(), q); len(p.Rows) != 0 {
			t.Fatalf("the old texts found %d rows for mueller", len(p.Rows))
		}
		_ = db.Close()
		for _, cut := range cuts {
			if _, err := Open(path, Options{NoSync: true, fillChunk: 50, failFillAfter: cut}); !errors.Is(err, domain.ErrFillCut) {
				t.Fatalf("open cut after %d chunks: %v", cut, err)
			}
		}
		db, err = Open(path, Options{NoSync: true, fillChunk: 50})
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.ReservationPage(t.Context(), q)
		if err != nil || !slices.Equal(posList(p), posList(want)) {
			t.Fatalf("after the refold: %d rows (%v), want %d", len(p.Rows), err, len(want.Rows))
		}
		_ = db.bk.File().Bolt().View(func(tx *bolt.Tx) error {
			if v := tx.Bucket(bMeta).Get(kFoldVersion); len(v) != 1 || int(v[0]) != fold.Version {
				t.Errorf("fold version %v recorded, want %d", v, fold.Version)
			}
			if tx.Bucket(bMeta).Get(kv.FillKey(kv.RefoldFill)) != nil {
				t.Error("the refold's state is still there")
			}
			return nil
		})
		_ = db.Close()
	}
}

// TestRefoldOnOpenPG: a PostgreSQL database whose list texts an older
// folding wrote has them folded again at open, on both engines.
func TestRefoldOnOpenPG(t *testing.T) {
	pgtest.OwnEngine(t)
	if os.Getenv("PAYDESK_TEST_PG") == "" {
		t.Skip("needs PostgreSQL: run `. .ci/pg` from the repository root first")
	}
	for _, native := range []bool{false, true} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			dsn := pgtest.Fresh(t)
			opts := Options{NoSync: true, Now: func() time.Time { return t0 }, kvEngine: !native, fillChunk: 50}
			db, err := Open(dsn, opts)
			if err != nil {
				t.Fatal(err)
			}
			pageData(t, db, 300)
			all, _ := db.LoadReservationSummaries(t.Context())
			q := PageQuery{Filter: "mueller", Limit: 1000}
			want := PageSummaries(all, q)
			tables := []string{"paydesk_summary", "paydesk_txlist"}
			if native {
				tables = []string{"paydesk_reservations", "paydesk_transactions"}
			}
			pool := db.bk.Pool()
			if native {
				pool = db.rel.Pool()
			}
			ctx := context.Background()
			for _, tb := range tables {
				if _, err := pool.Exec(ctx, "UPDATE "+tb+" SET search = 'old'"); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := pool.Exec(ctx, "DELETE FROM paydesk_numbers WHERE name = 'fold-version'"); err != nil {
				t.Fatal(err)
			}
			if p, _ := db.ReservationPage(ctx, q); len(p.Rows) != 0 || len(want.Rows) == 0 {
				t.Fatalf("old texts found %d rows; the data has %d", len(p.Rows), len(want.Rows))
			}
			_ = db.Close()
			db, err = Open(dsn, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			p, err := db.ReservationPage(ctx, q)
			if err != nil || !slices.Equal(posList(p), posList(want)) {
				t.Fatalf("after the refold: %d rows (%v), want %d", len(p.Rows), err, len(want.Rows))
			}
			tp, err := db.TransactionPage(ctx, PageQuery{Filter: "mueller", Limit: 1000})
			if err != nil || len(tp.Rows) == 0 && hasTx(db) {
				t.Fatalf("transactions after the refold: %d rows (%v)", len(tp.Rows), err)
			}
		})
	}
}

func hasTx(db *DB) bool {
	txs, _ := db.Transactions(context.Background())
	return len(txs) > 0
}
