package kv

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestWarmLists walks every block of both lists' sketches and text, in
// chunks that resume where the last stopped, and stops when its context
// ends.
func TestWarmLists(t *testing.T) {
	db := openBoltAt(t, filepath.Join(t.TempDir(), "paydesk.db"))
	listData(t, db, 600)
	if err := db.WarmLists(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range [][]byte{bSumGram, bSumText} {
		want := 0
		_ = db.eng.View(func(tx Tx) error {
			c := tx.Bucket(name).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				want++
			}
			return nil
		})
		if want < 3 {
			t.Fatalf("%s: %d blocks, the test wants several", name, want)
		}
		for _, chunk := range []int{1, 2, 3, want, want + 1} {
			got, err := warmBucket(context.Background(), db.file.db, db.path, name, chunk, 3, db.listsBusy, db.standAside)
			if err != nil || got != want {
				t.Errorf("%s in chunks of %d: %d blocks read, want %d (%v)", name, chunk, got, want, err)
			}
		}
		// The operator's reads come and go: the walks stop for them, out
		// of their transactions, and go on after.
		var asked, waits atomic.Int32
		busy := func() bool { return asked.Add(1)%2 == 0 }
		wait := func(context.Context) { waits.Add(1) }
		got, err := warmBucket(context.Background(), db.file.db, db.path, name, want, 3, busy, wait)
		if err != nil || got != want || waits.Load() < int32(want/2) {
			t.Errorf("%s with reads coming: %d blocks read, want %d, %d waits (%v)", name, got, want, waits.Load(), err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.WarmLists(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
