package store

import (
	"fmt"
	"testing"

	"paydesk/api"
)

// BenchmarkApplyReservePushInTx is BenchmarkApplyPushInTx for Reserve
// pushes: each makes a reservation, so its summary and — on bbolt since
// schema 5 — the list's indexes, search text and trigram sketch are
// written (what the list's paging costs the push path).
func BenchmarkApplyReservePushInTx(b *testing.B) {
	db := openTest(b)
	g := &gw{clock: t0}
	pushes := make([]*api.Push, b.N)
	bodies := make([][]byte, b.N)
	for i := range pushes {
		st := g.status(api.StatusSuccess, "")
		pushes[i] = dataPush(fmt.Sprintf("%032X", i+1), fmt.Sprint("ORD-", i), api.ActionReserve, st,
			api.ResponseParameter{Name: "ReservationNumber", Value: api.FlexString(fmt.Sprint("R", i))})
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
