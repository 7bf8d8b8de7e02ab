package store

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// BenchmarkApplyPushInTx measures the serial part of ingest: applying one
// new gift card push inside a transaction of 100 (what the group-commit
// writer does per push, commit included, fsync not: NoSync), without HTTP.
func BenchmarkApplyPushInTx(b *testing.B) {
	db := openTest(b)
	g := &gw{clock: t0}
	pushes := make([]*api.Push, b.N)
	bodies := make([][]byte, b.N)
	for i := range pushes {
		pushes[i] = txPush(fmt.Sprintf("%032X", i+1), fmt.Sprint("GC-", i), "customgiftcard", api.TypeGiftCardPay,
			decimal.New(int64(100+i), -2), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
		bodies[i], _ = pushes[i].Encode()
	}
	prepared := make([]*preparedPush, b.N)
	for i := range prepared {
		prepared[i] = db.preparePush(PushRecord{Body: bodies[i], Method: "POST", URL: "/push"}, pushes[i])
	}
	b.ResetTimer()
	i := 0
	for i < b.N {
		err := db.eng.Update(func(tx Tx) error {
			var c Change
			for j := 0; j < 100 && i < b.N; j, i = j+1, i+1 {
				var res ApplyResult
				if err := db.applyPush(tx, prepared[i], pushes[i], &res, &c); err != nil {
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
