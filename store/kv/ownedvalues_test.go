package kv

import (
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestFillAtEndRemembersTheEnd: ownedValues.fillAtEnd, which spares the
// look at the bucket's end for a key after the last it put there, sets
// the same fill as the package's fillAtEnd, which looks every time, on a
// twin bucket given the same keys in the same transaction — keys rising,
// rising then one landing inside, near the end, in any order, with
// deletes of the last keys, and after earlier transactions.
func TestFillAtEndRemembersTheEnd(t *testing.T) {
	key := func(v uint64) []byte { return binary.BigEndian.AppendUint64([]byte("k"), v) }
	type op struct {
		k   uint64
		del bool
	}
	rising := func(from, n int) (ops []op) {
		for i := range n {
			ops = append(ops, op{k: uint64(from + i)})
		}
		return ops
	}
	r := rand.New(rand.NewPCG(25, 5))
	var random []op
	for range 2000 {
		random = append(random, op{k: r.Uint64N(1 << 20)})
	}
	var delLast []op
	for i := range 600 {
		delLast = append(delLast, op{k: uint64(10_000 + i)})
		if i%50 == 49 {
			delLast = append(delLast, op{k: uint64(10_000 + i), del: true}, op{k: uint64(10_000 + i - 1), del: true})
		}
	}
	// senders: the keys of a group commit, each sender's rising, the
	// senders' interleaved (a push's transaction key, its created time).
	senders := func(from, per int) (ops []op) {
		for i := range per {
			for s := range 4 {
				ops = append(ops, op{k: uint64(from + 4*i + 3 - s)})
			}
		}
		return ops
	}
	for _, tc := range []struct {
		name     string
		before   []op // an earlier transaction
		ops      []op
		inFinal  bool // the last transaction leaves the default split
		maxLooks int  // when set: at most this many looks at the end
	}{
		{"senders' keys interleaved", rising(0, 500), senders(1000, 50), false, 1},
		{"senders' keys interleaved, past nearEnd", rising(0, 500), senders(1000, nearEnd/2), false, 0},
		{"rising", nil, rising(0, 1000), false, 1},
		{"rising after earlier keys", rising(0, 500), rising(500, 1000), false, 1},
		{"rising, then one far inside", nil, append(rising(1000, 2*nearEnd), op{k: 3}), true, 0},
		{"rising, then one near the end", nil, append(rising(1000, 2*nearEnd), op{k: uint64(1000 + 2*nearEnd - 10)}), false, 0},
		{"rising after earlier, then inside", rising(0, 2000), append(rising(5000, 300), op{k: 700}), true, 0},
		{"any order", nil, random, true, 0},
		{"the last keys deleted now and then", nil, delLast, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := bolt.Open(filepath.Join(t.TempDir(), "f.db"), 0o600, &bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			run := func(ops []op, check bool) {
				err := db.Update(func(tx *bolt.Tx) error {
					plain, err := tx.CreateBucketIfNotExists([]byte("plain"))
					if err != nil {
						return err
					}
					owned, err := tx.CreateBucketIfNotExists([]byte("owned"))
					if err != nil {
						return err
					}
					var own ownedValues
					for i, o := range ops {
						k := key(o.k)
						if o.del {
							if err := plain.Delete(k); err != nil {
								return err
							}
							if err := owned.Delete(k); err != nil {
								return err
							}
							continue
						}
						fillAtEnd(BoltBucket{plain}, k)
						own.fillAtEnd(BoltBucket{owned}, k)
						if check && plain.FillPercent != owned.FillPercent {
							t.Fatalf("key %d (op %d): fill %v, want %v as the look at the end gives", o.k, i, owned.FillPercent, plain.FillPercent)
						}
						if err := plain.Put(k, nil); err != nil {
							return err
						}
						if err := owned.Put(k, nil); err != nil {
							return err
						}
					}
					if check && (owned.FillPercent == fillInside) != tc.inFinal {
						t.Errorf("the transaction ends with fill %v", owned.FillPercent)
					}
					if check && tc.maxLooks > 0 && own.looks > tc.maxLooks {
						t.Errorf("%d looks at the end for %d keys, want at most %d", own.looks, len(ops), tc.maxLooks)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			run(tc.before, false)
			run(tc.ops, true)
		})
	}
}
