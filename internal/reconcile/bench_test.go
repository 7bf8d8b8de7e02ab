package reconcile

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// BenchmarkReconcile100k reads a statement of 100,000 lines (CSV) and
// matches it against 100,000 booked captures: the read and the match, per
// op. The bound is 2 s.
func BenchmarkReconcile100k(b *testing.B) {
	const n = 100_000
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	var csv bytes.Buffer
	csv.WriteString("PayoutReference,SettlementDate,TransactionKey,Invoice,TransactionType,Service,Currency,Gross,Fee,Net,StatusDate\n")
	booked := make([]Booked, n)
	for i := range n {
		key := fmt.Sprintf("%032X", i+1)
		amt := decimal.New(int64(1000+i%9000), -2)
		booked[i] = Booked{Key: key, Invoice: fmt.Sprintf("INV-%06d", i), Currency: "EUR", Amount: amt, At: day}
		fmt.Fprintf(&csv, "PO-20261125-SHOP1,2026-11-25,%s,INV-%06d,C700,deferredkp,EUR,%s,0.25,%s,2026-11-25\n", key, i,
			amt.StringFixed(2), amt.Sub(decimal.New(25, -2)).StringFixed(2))
	}
	data := csv.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		lines, err := Read(bytes.NewReader(data), "statement.csv")
		if err != nil {
			b.Fatal(err)
		}
		res := Reconcile(lines, booked, Options{})
		if res.Counts[Matched] != n {
			b.Fatalf("matched %d of %d", res.Counts[Matched], n)
		}
	}
}
