package store

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/store/domain"
)

// TestPushLogIndexFill: a file without the push log's index (layout 8 as
// the releases before it wrote it) gets it at open, in chunks, going on
// where an open cut short stopped; a file whose newest pushes an older
// binary wrote without their keys (and whose index holds a key of an entry
// since gone) has it built again. Afterwards the log pages as the
// reference does.
func TestPushLogIndexFill(t *testing.T) {
	for _, tc := range []struct {
		name     string
		chunk    int
		cutAfter []int
		damage   func(tx *bolt.Tx) error
	}{
		{name: "no index", damage: func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("pushtime")) }},
		{name: "no index, chunks of 50, cut short", chunk: 50, cutAfter: []int{1, 3, 2},
			damage: func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("pushtime")) }},
		{name: "newest push without its key, a key of nothing", damage: func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("pushtime"))
			k, _ := b.Cursor().Last()
			if err := b.Delete(k); err != nil {
				return err
			}
			return b.Put(domain.PushPosOf(nil, t0.UnixNano(), true, 999999), []byte{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			all := pushLogData(t, db, 300)
			if err := db.bk.File().Bolt().Update(tc.damage); err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			db = openCutThenWhole(t, path, tc.chunk, tc.cutAfter)
			for _, q := range []PushQuery{{PageQuery: PageQuery{Desc: true, Limit: 1000}}, {PageQuery: PageQuery{Limit: 1000}},
				{PageQuery: PageQuery{Desc: true, Limit: 1000}, Status: "rejected"}} {
				p, err := db.PushPage(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				w := PagePushes(all, q)
				if got, want := pushKeyed(p), pushKeyed(w); !slices.Equal(got.keys, want.keys) || len(want.keys) == 0 || (got.total >= 0 && got.total != want.total) {
					t.Fatalf("%+v: %d rows (total %d), want %d (total %d)", q, len(got.keys), got.total, len(want.keys), want.total)
				}
			}
		})
	}
}
