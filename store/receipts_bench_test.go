package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// BenchmarkApplyDuplicatePushInTx measures the duplicate path inside
// transactions of 100 (NoSync, as BenchmarkApplyPushInTx): "spread"
// repeats each of 1,000 stored pushes in turn, "one-push" repeats a single
// push for ever (a hostile repeater: its record sits at the bound).
func BenchmarkApplyDuplicatePushInTx(b *testing.B) {
	for _, tc := range []struct {
		name   string
		stored int
	}{{"spread", 1000}, {"one-push", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			g := &gw{clock: t0}
			db := openTest(b)
			pushes := make([]*api.Push, tc.stored)
			prepared := make([]*preparedPush, tc.stored)
			for i := range pushes {
				pushes[i] = txPush(fmt.Sprintf("%032X", i+1), fmt.Sprint("GC-", i), "customgiftcard", api.TypeGiftCardPay,
					decimal.New(int64(100+i), -2), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
				body, _ := pushes[i].Encode()
				prepared[i] = db.preparePush(PushRecord{Body: body, Method: "POST", URL: "/push", RemoteAddr: "192.0.2.1:40000"}, pushes[i])
			}
			apply := func(n int) {
				for i := 0; i < n; {
					err := db.repo.Update(context.Background(), func(tx RepoTx) error {
						var c Change
						for j := 0; j < 100 && i < n; j, i = j+1, i+1 {
							var res ApplyResult
							if err := db.applyPush(tx, prepared[i%tc.stored], pushes[i%tc.stored], &res, &c); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			apply(tc.stored)      // the first receipts
			apply(tc.stored * 25) // past the bound
			b.ResetTimer()
			apply(b.N)
		})
	}
}
