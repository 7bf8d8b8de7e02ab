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
	g := &gw{clock: t0}
	benchApplyInTx(b, func(i int) *api.Push {
		return dataPush(fmt.Sprintf("%032X", i+1), fmt.Sprint("ORD-", i), api.ActionReserve, g.status(api.StatusSuccess, ""),
			api.ResponseParameter{Name: "ReservationNumber", Value: api.FlexString(fmt.Sprint("R", i))})
	})
}
