package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkNextDeliveriesShopDown: what one look for due deliveries costs
// the worker while a shop is down and open deliveries pile up, none due
// (each is waiting for its retry). The worker looks after every push
// stored, so this is paid per push (kicks arriving meanwhile coalesce).
func BenchmarkNextDeliveriesShopDown(b *testing.B) {
	for _, open := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("open=%d", open), func(b *testing.B) {
			ep := "http://shop.example.test/push"
			db, err := Open(filepath.Join(b.TempDir(), "paydesk.db"), Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: []string{ep}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			retry := t0.Add(time.Hour)
			for done := 0; done < open; done += 10000 {
				err := db.update(b.Context(), func(tx RepoTx, _ *Change) error {
					for i := done; i < min(done+10000, open); i++ {
						d := &Delivery{PushID: uint64(i + 1), Key: fmt.Sprintf("%032X", i), Endpoint: ep, Created: t0, State: DeliveryPending, NextAt: retry}
						if _, err := tx.AppendDelivery(d); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				due, next, err := db.NextDeliveries(ctx, t0, 256)
				if err != nil || len(due) != 0 || !next.Equal(retry) {
					b.Fatalf("due %d next %v, %v", len(due), next, err)
				}
			}
		})
	}
}

// BenchmarkEnqueueDeliveries: what recording a push's delivery costs the
// push's commit (the store's endpoints read, the delivery and its index
// entries written), in transactions of 500 as the group commit makes them
// under load. New keys: each delivery opens its chain.
func BenchmarkEnqueueDeliveries(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "paydesk.db"), Options{NoSync: true, Now: func() time.Time { return t0 },
		ForwardTo: []string{"http://shop.example.test/push"}})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rec := &PushRecord{Body: []byte(`{"Transaction":{}}`), Signature: SignatureValid, ReceivedAt: t0}
	n := 0
	b.ResetTimer()
	for n < b.N {
		err := db.update(b.Context(), func(tx RepoTx, _ *Change) error {
			for i := n; i < min(n+500, b.N); i++ {
				rec.Key = fmt.Sprintf("%032X", i)
				if err := db.enqueueDeliveries(tx, rec, uint64(i+1)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		n += 500
	}
}
