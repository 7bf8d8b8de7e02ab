package gwsync_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/gwsync"
)

// BenchmarkSync is one sync of n open reservations against the sandbox
// over loopback HTTP: the customer approved every one at the checkout and
// no push reached paydesk, so the run looks up n invoices and books n
// approvals. The setup (n Reserves through paydesk's operations) is not
// timed. Run it with -benchtime 1x: a second run in the same loop would
// learn nothing.
func BenchmarkSync(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("reservations=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				e := newEnv(b)
				ctx := context.Background()
				for i := range n {
					res, err := e.svc.Reserve(ctx, order(fmt.Sprintf("INV-B-%06d", i)))
					if err != nil {
						b.Fatal(err)
					}
					if err := e.sb.Approve(ctx, res.Key); err != nil {
						b.Fatal(err)
					}
				}
				now := time.Now()
				b.StartTimer()
				got, err := gwsync.Run(ctx, e.db, e.gateway, gwsync.Options{Now: func() time.Time { return now }})
				b.StopTimer()
				if err != nil || len(got.Failed) > 0 || len(got.Learned) != n {
					b.Fatalf("learned %d of %d (%v, %d failed)", len(got.Learned), n, err, len(got.Failed))
				}
				for _, l := range got.Learned {
					if l.Kind != api.ActionReserve || l.Status.Code != api.StatusSuccess {
						b.Fatalf("learned %+v", l)
					}
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "reservations/s")
		})
	}
}
