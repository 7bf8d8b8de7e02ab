package kv

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestFillAtGroupEnd: an index whose new keys go at the end of their
// group (a group prefix, then a rising number), written a small
// transaction at a time as a cache grows, fills its pages better with the
// split fillAtGroupEnd sets than with bbolt's own split on a twin bucket
// given the same keys (the leaf pages in use against those allocated,
// bbolt's Bucket.Stats), and keys in groups too small to span two pages,
// or in any order, fill them as bbolt's split does.
func TestFillAtGroupEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups int
		random bool    // keys in any order instead of at their group's end
		gain   float64 // at least this much fuller than bbolt's split (negative: at most this much emptier)
	}{
		{"4 groups", 4, false, 0.30},
		{"25 groups", 25, false, 0.15},
		{"groups of about a page", 1000, false, -0.02},
		{"every key a group of its own", 1 << 30, false, -0.02},
		{"any order", 1 << 30, true, -0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "f.db"), 0o600, &bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			r := rand.New(rand.NewPCG(12, uint64(tc.groups)))
			const n, perTx = 20_000, 100
			val := make([]byte, 5)
			for seq := 0; seq < n; seq += perTx {
				err := db.Update(func(tx *bolt.Tx) error {
					idx, err := tx.CreateBucketIfNotExists([]byte("idx"))
					if err != nil {
						return err
					}
					plain, err := tx.CreateBucketIfNotExists([]byte("plain"))
					if err != nil {
						return err
					}
					for i := seq; i < seq+perTx; i++ {
						// A group's name, 0x00, then the rising part (the
						// creation time and the key in a list index).
						k := fmt.Appendf(nil, "group %d", r.IntN(tc.groups))
						k = append(k, 0)
						g := len(k)
						rising := uint64(i)
						if tc.random {
							rising = r.Uint64()
						}
						k = binary.BigEndian.AppendUint64(k, rising)
						k = append(k, "0123456789abcdefghij"...)
						fillAtGroupEnd(BoltBucket{idx}, k, g)
						if err := idx.Put(k, val); err != nil {
							return err
						}
						if err := plain.Put(k, val); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			err = db.View(func(tx *bolt.Tx) error {
				fill := func(name string) float64 {
					s := tx.Bucket([]byte(name)).Stats()
					if s.KeyN != n {
						t.Errorf("%s: %d keys, want %d", name, s.KeyN, n)
					}
					return float64(s.LeafInuse) / float64(s.LeafAlloc)
				}
				got, plain := fill("idx"), fill("plain")
				t.Logf("leaf pages %.1f%% full, %.1f%% with bbolt's split", 100*got, 100*plain)
				if got-plain < tc.gain {
					t.Errorf("leaf pages %.1f%% full, %.1f%% with bbolt's split: want a gain of at least %.0f points", 100*got, 100*plain, 100*tc.gain)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
