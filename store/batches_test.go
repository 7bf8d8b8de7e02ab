package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

func TestBatches(t *testing.T) {
	db := openTest(t)
	items := make([]BatchItem, 12) // more than 9: items keep their order past B1 0x00 9
	for i := range items {
		items[i] = BatchItem{Reservation: fmt.Sprintf("R%d", i), Amount: decimal.NewFromInt(int64(i)), State: ItemPlanned,
			Lines: []api.CaptureLine{{ArticleNumber: "A", Quantity: i + 1}}}
	}
	b, err := db.CreateBatch(t.Context(), Batch{Kind: BatchCapture, Hash: "abc", Source: "m.csv"}, items)
	if err != nil || b.ID != "B1" || b.Items != 12 {
		t.Fatalf("CreateBatch: %+v %v", b, err)
	}
	if _, err := db.CreateBatch(t.Context(), Batch{Kind: BatchCapture, Hash: "abc"}, nil); !errors.Is(err, ErrBatchExists) {
		t.Fatalf("same manifest again: %v", err)
	}
	// The same manifest for the other kind is another batch.
	b2, err := db.CreateBatch(t.Context(), Batch{Kind: BatchCancelRest, Hash: "abc"}, items[:1])
	if err != nil || b2.ID != "B2" {
		t.Fatalf("cancel-rest batch: %+v %v", b2, err)
	}
	it := items[10]
	it.Index, it.State, it.OpID = 10, ItemSettled, 77
	if err := db.UpdateBatchItem(t.Context(), "B1", it); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateBatchItem(t.Context(), "B9", it); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing batch: %v", err)
	}
	got, its, err := db.Batch(t.Context(), "B1")
	if err != nil || got.Source != "m.csv" || len(its) != 12 {
		t.Fatalf("Batch: %+v %d %v", got, len(its), err)
	}
	for i, it := range its {
		if it.Index != i || it.Reservation != fmt.Sprintf("R%d", i) {
			t.Fatalf("item %d is %+v", i, it)
		}
	}
	if its[10].State != ItemSettled || its[10].OpID != 77 {
		t.Fatalf("item 10 %+v", its[10])
	}
	if _, its, _ := db.Batch(t.Context(), "B2"); len(its) != 1 {
		t.Fatalf("B2 has %d items (B1's leaked in?)", len(its))
	}
	if h, err := db.BatchByHash(t.Context(), BatchCapture, "abc"); err != nil || h.ID != "B1" {
		t.Fatalf("BatchByHash: %+v %v", h, err)
	}
	if h, err := db.BatchByHash(t.Context(), BatchCapture, "nope"); err != nil || h != nil {
		t.Fatalf("BatchByHash of an unknown hash: %+v %v", h, err)
	}
	if list, err := db.Batches(t.Context(), 0); err != nil || len(list) != 2 {
		t.Fatalf("Batches: %+v %v", list, err)
	}
}

// TestReservationLedgers: the batch lookup finds what Reservation finds,
// with the same ledger.
func TestReservationLedgers(t *testing.T) {
	db := openTest(t)
	d := decimal.RequireFromString
	r := &Reservation{Key: "K1", ReservationNumber: "N1", Invoice: "INV-1", Currency: "EUR", LinesKnown: true,
		Status: Status{Code: api.StatusSuccess}, Original: Update{Articles: []api.Article{{Number: "A", Title: "a", Price: d("2.50"), Vat: d("21"), Quantity: 3}}}}
	if err := db.PutReservations(t.Context(), []*Reservation{r}); err != nil {
		t.Fatal(err)
	}
	found, err := db.ReservationLedgers(t.Context(), []string{"K1", "N1", "INV-1", "missing", ""})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 3 {
		t.Fatalf("found %d", len(found))
	}
	full, _ := db.Reservation(t.Context(), "INV-1")
	for ref, got := range found {
		if got.Key != "K1" || got.State() != full.State() || len(got.Lines) != 1 || got.Lines[0].Remaining() != 3 ||
			!got.RemainingAmount().Equal(full.RemainingAmount()) {
			t.Fatalf("%s: %+v", ref, got)
		}
	}
}

// TestMigrateToBatches: a version 3 cache (no batch buckets) opens as
// version 4 and keeps batches.
func TestMigrateToBatches(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = db.bk.File().Bolt().Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bBatch, bBatchItem, bBatchHash} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bMeta).Put(kSchema, u64(3))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateBatch(t.Context(), Batch{Kind: BatchCapture, Hash: "h"}, []BatchItem{{Reservation: "R"}}); err != nil {
		t.Fatalf("CreateBatch after the migration: %v", err)
	}
}
