package kv

import (
	"path/filepath"
	"testing"
)

// TestPushDuplicateByHashPrefix: a push's index entry keeps 8 bytes of its
// content hash (layout 10), and dedup stays exact: a push whose hash
// shares those 8 bytes but not the rest is no duplicate, the same hash is,
// and an entry of an earlier layout with the whole hash still finds its
// push.
func TestPushDuplicateByHashPrefix(t *testing.T) {
	db := openBoltAt(t, filepath.Join(t.TempDir(), "paydesk.db"))
	gc, rec := giftCardPush(1)
	appendPush(t, db, gc, rec)
	first := rec.ID
	twin := rec.Hash
	twin[31] ^= 1 // the same first 8 bytes, another hash
	old := rec.Hash
	old[0] ^= 1 // a hash written whole by an earlier layout
	update(t, db, func(tx RepoTx) error {
		ik := append(pairKey(rec.Key, ""), u64(first+100)...)
		return tx.(*kvTx).tx.Bucket(bTransaction).Put(ik, old[:])
	})
	if v := lastIndexValue(t, db, rec.Key, first); len(v) != pushHashPrefix {
		t.Fatalf("index entry holds %d bytes of the hash; want %d", len(v), pushHashPrefix)
	}
	tests := []struct {
		name string
		hash [32]byte
		want uint64
	}{
		{"the same content", rec.Hash, first},
		{"the same first 8 bytes, another hash", twin, 0},
		{"a whole hash of an earlier layout", old, first + 100},
		{"another hash", [32]byte{7}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got uint64
			err := db.Repo().View(t.Context(), func(tx RepoTx) (err error) {
				got, err = tx.PushDuplicate(rec.Key, tt.hash)
				return err
			})
			if err != nil || got != tt.want {
				t.Fatalf("PushDuplicate = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// lastIndexValue is the value of key's push index entry for push id.
func lastIndexValue(t *testing.T, db *DB, key string, id uint64) []byte {
	t.Helper()
	var v []byte
	err := db.Repo().View(t.Context(), func(tx RepoTx) error {
		v = append(v, tx.(*kvTx).tx.Bucket(bTransaction).Get(append(pairKey(key, ""), u64(id)...))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
