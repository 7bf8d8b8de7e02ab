package kv

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store/domain"
)

// TestIndexPagesFill: an index whose keys a commit puts at its end (rising
// invoices, a little out of order as parallel pushes bring them) fills its
// pages; one whose keys land anywhere (creation times of an import) keeps
// the half-full split that suits them, instead of pages filled to the brim
// and split off nearly empty.
func TestIndexPagesFill(t *testing.T) {
	const commits, per = 30, 300
	tests := []struct {
		name    string
		created func(rng *rand.Rand, n int) time.Time
		bucket  []byte
		min     float64
	}{
		{"rising invoices", func(*rand.Rand, int) time.Time { return t0 }, []byte("txpos.invoice"), 0.75},
		{"rising keys", func(*rand.Rand, int) time.Time { return t0 }, []byte("txrow"), 0.75},
		{"creation times in any order", func(rng *rand.Rand, _ int) time.Time {
			return t0.Add(-time.Duration(rng.Int63n(int64(30 * 24 * time.Hour))))
		}, []byte("txpos.created"), 0.55},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openBoltAt(t, filepath.Join(t.TempDir(), "paydesk.db"))
			rng := rand.New(rand.NewSource(1))
			for c := range commits {
				txs := make([]*Transaction, per)
				for i := range txs {
					n := c*per + i
					txs[i] = &Transaction{Key: fmt.Sprintf("%032X", n), Kind: domain.KindGiftCardPay, Invoice: fmt.Sprintf("GC-%09d", n),
						Currency: "EUR", Amount: dec("1.06"), Status: Status{Code: api.StatusSuccess, Time: t0}, Created: tt.created(rng, n)}
				}
				// One commit's pushes arrive a little out of order (a few
				// dozen senders in parallel).
				for i := range txs {
					j := min(len(txs)-1, i+rng.Intn(48))
					txs[i], txs[j] = txs[j], txs[i]
				}
				put(t, db, nil, txs)
			}
			var fill float64
			if err := db.eng.View(func(tx Tx) error {
				b := tx.Bucket(tt.bucket).(BoltBucket).Bolt
				s := b.Stats()
				fill = float64(s.LeafInuse) / float64(s.LeafPageN*b.Tx().DB().Info().PageSize)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if fill < tt.min {
				t.Fatalf("%s: pages %.0f%% full, want at least %.0f%%", tt.bucket, 100*fill, 100*tt.min)
			}
			t.Logf("%s: pages %.0f%% full", tt.bucket, 100*fill)
		})
	}
}
