package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// BenchmarkPgRelConvertLogs converts the logs of a layout-7 database of
// 5,000 pushes, 5,000 operations with their audit entries and 1,000
// gateway log entries (written as the bucket engine writes them) into
// 0010's tables, in chunks of logsConversionChunk.
//
//	. .ci/pg && go test -run XXX -bench PgRelConvertLogs -benchtime=1x ./store/
func BenchmarkPgRelConvertLogs(b *testing.B) {
	const n = 5000
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		url := pgtest.Fresh(b)
		kv, err := openPostgres(ctx, url, true)
		if err != nil {
			b.Fatal(err)
		}
		err = kv.Update(func(tx Tx) error {
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			for j := 1; j <= n; j++ {
				k := fmt.Sprintf("%032X", j)
				body := []byte(`{"Transaction":{"Key":"` + k + `","Invoice":"INV-` + k + `","AmountDebit":49.95}}`)
				p := &PushRecord{ID: uint64(j), ReceivedAt: at, Key: k, Invoice: "INV-" + k, Kind: api.TypeDeferredPay, Envelope: api.EnvelopeTransaction,
					Body: body, Header: http.Header{"Content-Type": {"application/json"}}, Signature: SignatureValid,
					Status: Status{Code: 190, Time: at}, Amount: dec("49.95"), HasAmount: true, Applied: true, Hash: sha256.Sum256(body)}
				if err := tx.Bucket(bPush).Put(u64(uint64(j)), kvlayout.EncodePush(p)); err != nil {
					return err
				}
				op := &PendingOp{ID: uint64(j), Created: at, Updated: at, Operator: "op", Action: api.ActionPay, Service: api.ServiceDeferred,
					Target: "RES-" + k, Invoice: "INV-" + k, Currency: "EUR", Amount: dec("49.95"), State: OpSettled, ResultKey: k,
					Request: api.Capture{Currency: "EUR", Invoice: "INV-" + k, ReservationNumber: "RES-" + k, Amount: dec("49.95")}.Request()}
				v, err := json.Marshal(op)
				if err != nil {
					return err
				}
				if err := tx.Bucket(bOp).Put(u64(uint64(j)), v); err != nil {
					return err
				}
				if j <= n/5 {
					x, _ := json.Marshal(Exchange{ID: uint64(j), Time: at, Action: api.ActionPay, Method: "POST", URL: "https://gw/json/Transaction",
						RequestBody: body, HTTPStatus: 200, ResponseBody: body, Duration: time.Millisecond})
					if err := tx.Bucket(bExchange).Put(u64(uint64(j)), x); err != nil {
						return err
					}
				}
			}
			return nil
		})
		_ = kv.Close()
		if err != nil {
			b.Fatal(err)
		}
		e, err := postgres.Open(ctx, url, true)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := e.ConvertLogs(ctx, 0, 0); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		var pushes, ops int
		if err := e.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM paydesk_pushes), (SELECT count(*) FROM paydesk_operations)`).Scan(&pushes, &ops); err != nil || pushes != n || ops != n {
			b.Fatalf("converted %d pushes and %d operations of %d: %v", pushes, ops, n, err)
		}
		_ = e.Close()
	}
}
