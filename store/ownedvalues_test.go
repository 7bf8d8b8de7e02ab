package store

import (
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
)

// bucketBytes is every key and value of the named buckets.
func bucketBytes(t *testing.T, db *DB, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.bk.File().Bolt().View(func(tx *bolt.Tx) error {
		for _, n := range names {
			if err := tx.Bucket([]byte(n)).ForEach(func(k, v []byte) error {
				out[n+"/"+string(k)] = string(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSearchTextBlocksInOneCommit: the transactions of one commit share
// their search text blocks and sketches, which the commit builds in
// place (store/kv/ownedvalues.go); the file holds the same blocks and
// sketches, byte for byte, as when each transaction has a commit of its
// own — across block boundaries, with a transaction rewritten (a refund
// changes its capture, out of row order) and with the same block written
// again after another block.
func TestSearchTextBlocksInOneCommit(t *testing.T) {
	mk := func(i int) *Transaction {
		created := t0.Add(time.Duration(i) * time.Second)
		return &Transaction{Key: fmt.Sprintf("%032X", 0xA000+i), Invoice: fmt.Sprintf("GC-%09d", 7919*i),
			Currency: "EUR", Amount: decimal.New(int64(100+i), -2), Kind: KindGiftCardPay, ServiceCode: "customgiftcard",
			CustomerName: []string{"Anna Müller", "", "Jan de Vries"}[i%3],
			Status:       Status{Code: api.StatusSuccess, Time: created}, Created: created}
	}
	var all []*Transaction
	for i := range 300 {
		all = append(all, mk(i))
	}
	// Rewrites with a new search text, in another block than the last.
	again := []*Transaction{mk(3), mk(200), mk(70)}
	for _, tr := range again {
		tr.InvoiceNumber = "PI-" + tr.Key[24:]
	}
	write := func(groups [][]*Transaction) map[string]string {
		db, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{NoSync: true, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, g := range groups {
			if err := db.PutTransactions(t.Context(), g); err != nil {
				t.Fatal(err)
			}
		}
		return bucketBytes(t, db, "txtext", "txgram", "txrow")
	}
	var one [][]*Transaction
	for _, tr := range append(append([]*Transaction{}, all...), again...) {
		one = append(one, []*Transaction{tr})
	}
	want := write(one)
	for _, tc := range []struct {
		name   string
		groups [][]*Transaction
	}{
		{"all in one commit, rewrites in the next", [][]*Transaction{all, again}},
		{"rewrites in the same commit", [][]*Transaction{append(append([]*Transaction{}, all...), again...)}},
		{"commits of 50 across blocks", [][]*Transaction{all[:50], all[50:100], all[100:250], append(append([]*Transaction{}, all[250:]...), again...)}},
	} {
		if got := write(tc.groups); !maps.Equal(got, want) {
			diff := 0
			for k, v := range want {
				if got[k] != v {
					diff++
				}
			}
			t.Errorf("%s: %d of %d entries differ from one commit per transaction (%d entries)", tc.name, diff, len(want), len(got))
		}
	}
}
