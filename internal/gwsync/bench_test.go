package gwsync_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/gwsync"
	"paydesk/store"
)

// BenchmarkSync is one sync of n open reservations against the sandbox
// over loopback HTTP: the customer approved every one at the checkout and
// no push reached paydesk, so the run looks up n invoices and books n
// approvals. The setup (n Reserves at the sandbox, each known to paydesk
// as awaiting the customer) is not timed. Run it with -benchtime 1x: a second run in the same loop would
// learn nothing.
func BenchmarkSync(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("reservations=%d", n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				e := newEnv(b)
				ctx := context.Background()
				seed(b, e, n)
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

var benchSizes = []int{100, 1000, 10000}

// seed makes n reservations at the sandbox, each booked in paydesk as the
// Reserve's first answer (791, awaiting the customer) and then approved by
// the customer at the checkout, with no push reaching paydesk.
func seed(b *testing.B, e *env, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := order(fmt.Sprintf("INV-B-%06d", i))
				resp, err := e.gateway.Send(ctx, o)
				if err == nil {
					p := api.InvoiceTransaction{Action: api.ActionReserve, Response: *resp}.Push()
					p.DataRequest.Invoice = o.Invoice // the answer to a Reserve does not repeat it
					_, err = e.db.ApplyPush(ctx, store.PushRecord{}, p)
				}
				if err == nil {
					err = e.sb.Approve(ctx, resp.Key)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}
