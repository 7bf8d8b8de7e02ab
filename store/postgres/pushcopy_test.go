package postgres

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store/domain"
)

// TestPushRowsByCopy: the applier's push rows read back the same whether
// flush sends them as INSERT (fewer than copyMin) or by COPY (copyMin or
// more), bodies that are JSON, bytes that are not and an empty body
// among them; a duplicate among copied rows fails the transaction,
// naming the rows and the key the server refused, and leaves no row.
func TestPushRowsByCopy(t *testing.T) {
	e := openNative(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC)
	record := func(id int) *domain.PushRecord {
		body := fmt.Appendf(nil, `{"Transaction":{"Key":"K%d","Invoice":"INV-%d","AmountDebit":1.01}}`, id, id)
		switch id % 5 {
		case 1:
			body = []byte{0xff, 0x00, 'x'} // not JSON, not UTF-8: bytes only
		case 2:
			body = nil
		}
		return &domain.PushRecord{ID: uint64(id), ReceivedAt: at.Add(time.Duration(id) * time.Millisecond),
			RemoteAddr: "192.0.2.1:4000", Method: http.MethodPost, URL: "/push",
			Header: http.Header{"Content-Type": {"application/json"}}, Body: body,
			Envelope: "Transaction", Key: fmt.Sprintf("K%d", id), Invoice: fmt.Sprintf("INV-%d", id), Service: "deferredkp",
			Kind: "C700", Status: domain.Status{Code: 190, SubCode: "S001", Time: at},
			Currency: "EUR", Amount: decimal.RequireFromString("1.01"), HasAmount: true,
			Signature: "valid", Applied: true, ReservationKey: "R1", Hash: sha256.Sum256(body)}
	}
	queue := func(tx *Tx, recs []*domain.PushRecord) {
		for _, rec := range recs {
			args, err := pushArgs("push", rec)
			if err != nil {
				t.Fatal(err)
			}
			tx.queue("push "+rec.Key, pgPushInsert, append(args, pgBodyJSON(rec.Body))...)
		}
	}
	next := 1
	for _, n := range []int{1, copyMin - 1, copyMin, 3 * copyMin} {
		t.Run(fmt.Sprintf("%d rows", n), func(t *testing.T) {
			var recs []*domain.PushRecord
			for range n {
				recs = append(recs, record(next))
				next++
			}
			if err := e.UpdateTx(ctx, func(tx *Tx) error {
				queue(tx, recs)
				copied, _, rest := pushCopy(tx.queued)
				if want := map[bool]int{true: n}[n >= copyMin]; len(copied) != want || len(copied)+len(rest) != n {
					t.Errorf("%d rows by COPY and %d as INSERT, want %d by COPY", len(copied), len(rest), want)
				}
				return tx.flush()
			}); err != nil {
				t.Fatal(err)
			}
			for _, want := range recs {
				var got *domain.PushRecord
				if err := e.ViewTx(ctx, func(tx *Tx) error { var err error; got, err = tx.Push(want.ID); return err }); err != nil {
					t.Fatal(err)
				}
				if got == nil {
					t.Fatalf("push %d: no row", want.ID)
				}
				got.ReceivedAt, got.Status.Time = got.ReceivedAt.UTC(), got.Status.Time.UTC()
				if !reflect.DeepEqual(got, want) {
					t.Errorf("push %d reads back\n%+v\nwant\n%+v", want.ID, got, want)
				}
				var same bool
				if err := e.Pool().QueryRow(ctx, `SELECT push IS NOT DISTINCT FROM $2::text::jsonb FROM paydesk_pushes WHERE id = $1`,
					int64(want.ID), jsonText(want.Body)).Scan(&same); err != nil || !same {
					t.Errorf("push %d: its push column is not its body as jsonb (%v)", want.ID, err)
				}
			}
		})
	}
	t.Run("a duplicate among copied rows", func(t *testing.T) {
		var recs []*domain.PushRecord
		for range copyMin {
			recs = append(recs, record(next))
			next++
		}
		dup := *recs[0]
		dup.ID = uint64(next)
		recs = append(recs, &dup)
		err := e.UpdateTx(ctx, func(tx *Tx) error { queue(tx, recs); return tx.flush() })
		if err == nil || !strings.Contains(err.Error(), "push "+recs[0].Key+", ") ||
			!strings.Contains(err.Error(), "more") || !strings.Contains(err.Error(), "(key, hash)=("+recs[0].Key) {
			t.Fatalf("error %v, want one naming the rows and the duplicate key", err)
		}
		var rows int
		if err := e.Pool().QueryRow(ctx, `SELECT count(*) FROM paydesk_pushes WHERE id >= $1`, int64(recs[0].ID)).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 0 {
			t.Errorf("%d rows left by the failed transaction", rows)
		}
	})
}

// jsonText is the body as text when it is JSON, else nil (SQL NULL).
func jsonText(b []byte) any {
	if pgBodyJSON(b) == nil {
		return nil
	}
	return string(b)
}
