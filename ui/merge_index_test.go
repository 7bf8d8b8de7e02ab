package ui

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"paydesk/store"
)

// TestMergeIndexedIsMerge: gathering a stream's changes with the key index
// (waitChange) gives what merging them one by one does, key order
// included, through receipts that name their keys, that do not (the whole
// log) and that start again.
func TestMergeIndexedIsMerge(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 27))
			keys := func(n int) []string {
				var ks []string
				for range r.IntN(n) {
					ks = append(ks, fmt.Sprintf("K%d", r.IntN(40)))
				}
				return ks
			}
			var plain, indexed store.Change
			var idx keyIndex
			for i := range 300 {
				c := store.Change{Pushes: r.IntN(3), Reservations: keys(4), Transactions: keys(4), Audit: r.IntN(9) == 0}
				switch r.IntN(6) {
				case 0:
					c.Receipts = 1 + r.IntN(2) // the whole log
				case 1, 2:
					c.Receipts, c.ReceiptKeys = 1, append(keys(3), "R")
				}
				if i%50 == 0 {
					// A new gathering starts from the change itself.
					plain, indexed, idx = c, c, keyIndex{}
					continue
				}
				plain = merge(plain, c)
				indexed = mergeIndexed(indexed, c, &idx)
				if !reflect.DeepEqual(plain, indexed) {
					t.Fatalf("after change %d: indexed %+v, merged %+v", i, indexed, plain)
				}
			}
		})
	}
}

// BenchmarkGatherStream merges three seconds of a thousand pushes a
// second, each naming its transaction, as a console over SSH gathers them.
func BenchmarkGatherStream(b *testing.B) {
	changes := make([]store.Change, 3000)
	for i := range changes {
		changes[i] = store.Change{Pushes: 1, Transactions: []string{fmt.Sprintf("T%06d", i)}, Reservations: []string{fmt.Sprintf("R%04d", i%500)}}
	}
	for b.Loop() {
		c := changes[0]
		var idx keyIndex
		for _, more := range changes[1:] {
			c = mergeIndexed(c, more, &idx)
		}
	}
}
