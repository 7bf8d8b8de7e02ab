package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"paydesk/internal/pgtest"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// BenchmarkPgRelConvertLedger converts a layout-7 ledger of 5,000
// reservations, each with a capture and a refund, into the tables; run it
// with -benchtime=1x (each run makes its database first).
func BenchmarkPgRelConvertLedger(b *testing.B) {
	const n = 5000
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		url := pgtest.Fresh(b)
		kv, err := openPostgres(ctx, url, true)
		if err != nil {
			b.Fatal(err)
		}
		at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
		err = kv.Update(func(tx Tx) error {
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			for j := 0; j < n; j++ {
				k := fmt.Sprintf("%032X", j)
				r := ledgerReservation(k, "RES-"+k, "INV-"+k, at)
				v, err := json.Marshal(r)
				if err != nil {
					return err
				}
				if err := tx.Bucket(bReservation).Put([]byte(k), v); err != nil {
					return err
				}
				for _, x := range []*Transaction{
					{Key: k + "-C1", Kind: KindCapture, Invoice: r.Invoice, Amount: dec("49.95"), ReservationKey: k, Refunds: []string{k + "-R1"}},
					{Key: k + "-R1", Kind: KindRefund, Invoice: r.Invoice, Amount: dec("49.95"), Original: k + "-C1", ReservationKey: k},
				} {
					if err := tx.Bucket(bTransaction).Put([]byte(x.Key), kvlayout.EncodeTx(x)); err != nil {
						return err
					}
				}
				if err := tx.Bucket(bRelated).Put(pairKey(k+"-C1", k+"-R1"), nil); err != nil {
					return err
				}
				for _, owned := range []string{k, k + "-C1", k + "-R1"} {
					if err := tx.Bucket(bKeyOwner).Put([]byte(owned), []byte(k)); err != nil {
						return err
					}
				}
				if err := tx.Bucket(bResNumber).Put([]byte(r.ReservationNumber), []byte(k)); err != nil {
					return err
				}
			}
			return nil
		})
		_ = kv.Close()
		if err != nil {
			b.Fatal(err)
		}
		e, err := postgres.Open(ctx, url, false)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		if err := e.ConvertLedger(ctx, 0, 0); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "reservations/s")
		b.StopTimer()
		_ = e.Close()
	}
}

// BenchmarkPgRelPutReservation is what a push does to the ledger on the
// native engine: a transaction that reads a reservation, puts it back
// (row, lines, number, owners) and puts a transaction.
func BenchmarkPgRelPutReservation(b *testing.B) {
	ctx := context.Background()
	e, err := postgres.Open(ctx, pgtest.Fresh(b), true)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := fmt.Sprintf("%032X", i%1000)
		err := e.UpdateTx(ctx, func(tx *postgres.Tx) error {
			r, err := tx.Reservation(k)
			if err != nil {
				return err
			}
			if r == nil {
				r = ledgerReservation(k, "RES-"+k, "INV-"+k, at)
			}
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
			_, err = tx.PutTransaction(&Transaction{Key: fmt.Sprintf("T%d", i), Kind: KindCapture, Invoice: r.Invoice,
				Amount: dec("49.95"), ReservationKey: k, Status: Status{Code: 190, Time: at}})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
