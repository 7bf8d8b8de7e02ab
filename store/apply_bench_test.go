package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// BenchmarkApplyPushInTx measures the serial part of ingest: applying one
// new gift card push inside a transaction of 100 (what the group-commit
// writer does per push, commit included, fsync not: NoSync), without HTTP.
func BenchmarkApplyPushInTx(b *testing.B) {
	g := &gw{clock: t0}
	benchApplyInTx(b, func(i int) *api.Push {
		return txPush(fmt.Sprintf("%032X", i+1), fmt.Sprint("GC-", i), "customgiftcard", api.TypeGiftCardPay,
			decimal.New(int64(100+i), -2), g.status(api.StatusSuccess, api.SubCodeProcessed), nil)
	})
}

// benchApplyInTx applies b.N pushes made by push, prepared before the
// clock starts, in transactions of 100.
func benchApplyInTx(b *testing.B, push func(i int) *api.Push) {
	db := openTest(b)
	pushes := make([]*api.Push, b.N)
	prepared := make([]*preparedPush, b.N)
	for i := range pushes {
		pushes[i] = push(i)
		body, _ := pushes[i].Encode()
		prepared[i] = db.preparePush(PushRecord{Body: body, Method: "POST", URL: "/push"}, pushes[i])
	}
	b.ResetTimer()
	i := 0
	for i < b.N {
		err := db.repo.Update(context.Background(), func(tx RepoTx) error {
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
