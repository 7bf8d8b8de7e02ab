package batch

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// BenchmarkBatchCapture2000 runs a 2,000-row manifest (400 reservations,
// five rows each) against the embedded sandbox with its pushes, at the
// default concurrency: rows settled per second, end to end (journal, send,
// settle, audit, batch record).
func BenchmarkBatchCapture2000(b *testing.B) {
	for _, conc := range []int{1, DefaultConcurrency, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var rows, took float64
			for range b.N {
				b.StopTimer()
				e := newEnv(b, envOpts{})
				e.reserveMany(context.Background(), 400)
				_, bt, items := startBatch(b, e, shipmentManifest(400))
				rn := &Runner{Svc: e.svc, Store: e.db, Concurrency: conc}
				b.StartTimer()
				start := time.Now()
				out, err := rn.Run(context.Background(), bt, items)
				took += time.Since(start).Seconds()
				if err != nil || out.Counts[store.ItemSettled] != 400 {
					b.Fatalf("%v %s", err, out.CountsText())
				}
				rows += 2000
			}
			b.ReportMetric(rows/took, "rows/s")
			b.ReportMetric(rows/5/took, "captures/s")
		})
	}
}

// BenchmarkPreflight100k checks a 100,000-row manifest (25,000
// reservations, four rows each) against a cache of those reservations:
// parse, look up, plan. Target: under 1 s.
func BenchmarkPreflight100k(b *testing.B) {
	db, err := store.Open(filepath.Join(b.TempDir(), "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const n = 25_000
	now := db.Now()
	d := decimal.RequireFromString
	var rs []*store.Reservation
	var csv strings.Builder
	csv.WriteString("invoice,article,quantity,amount,parcel,tracking\n")
	for i := range n {
		inv := fmt.Sprintf("SHOP-%06d", i)
		arts := []api.Article{
			{Number: "SHOE-42", Title: "Shoe", Price: d("59.95"), Vat: d("21"), Quantity: 3},
			{Number: "SOCK-3P", Title: "Socks", Price: d("14.50"), Vat: d("21"), Quantity: 2},
			{Number: "CAP", Title: "Cap", Price: d("17.49"), Vat: d("21"), Quantity: 1},
			{Number: "SHIP", Title: "Shipping", Type: "ShipmentFee", Price: d("4.95"), Vat: d("21"), Quantity: 1},
		}
		rs = append(rs, &store.Reservation{Original: store.Update{Articles: arts}, Key: fmt.Sprintf("%032X", i+1), ReservationNumber: fmt.Sprintf("res-%06d", i), Invoice: inv,
			Currency: "EUR", LinesKnown: true, Status: store.Status{Code: api.StatusSuccess, Time: now}, Created: now,
			Lines: []store.Line{
				{ArticleNumber: "SHOE-42", Title: "Shoe", Price: d("59.95"), Vat: d("21"), Reserved: 3},
				{ArticleNumber: "SOCK-3P", Title: "Socks", Price: d("14.50"), Vat: d("21"), Reserved: 2},
				{ArticleNumber: "CAP", Title: "Cap", Price: d("17.49"), Vat: d("21"), Reserved: 1},
				{ArticleNumber: "SHIP", Title: "Shipping", Type: "ShipmentFee", Price: d("4.95"), Vat: d("21"), Reserved: 1},
			}})
		fmt.Fprintf(&csv, "%s,SHOE-42,2,119.90,P%d,3S%08d\n%s,SOCK-3P,1,14.50,P%d,3S%08d\n%s,CAP,1,17.49,P%d,3S%08d\n%s,SHIP,1,4.95,P%d,3S%08d\n",
			inv, i, i, inv, i, i, inv, i, i, inv, i, i)
		if len(rs) == 5000 {
			if err := db.PutReservations(b.Context(), rs); err != nil {
				b.Fatal(err)
			}
			rs = rs[:0]
		}
	}
	data := csv.String()
	cpu0 := cpuTime()
	b.ResetTimer()
	var last *Preflight
	for range b.N {
		m, err := ReadManifest(strings.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		last = PlanCapture(m, Ledgers(db), now, false)
	}
	b.StopTimer()
	if last.Rows != 100_000 || len(last.Items) != n || len(last.Refused) != 0 {
		b.Fatalf("rows %d items %d refused %d %+v", last.Rows, len(last.Items), len(last.Refused), last.Refused[:min(3, len(last.Refused))])
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/preflight")
	// The machine is shared: CPU time says what the wall clock cannot.
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/preflight")
}
