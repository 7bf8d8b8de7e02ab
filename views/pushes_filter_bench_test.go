package views

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store"
)

// BenchmarkFilterPushes is one keystroke in the push log's filter: the
// filter language over the 5,000 pushes the console loads (a word and a
// field, every row).
func BenchmarkFilterPushes(b *testing.B) {
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	ps := make([]*store.PushRecord, 5000)
	for i := range ps {
		ps[i] = &store.PushRecord{ID: uint64(i + 1), ReceivedAt: t0.Add(time.Duration(i) * time.Minute), Envelope: "Transaction",
			Kind: "C700", Key: fmt.Sprintf("%032X", i+1), Invoice: fmt.Sprintf("INV-%05d", i), Service: []string{"klarnakp", "paypal"}[i%2],
			Amount: decimal.New(int64(1000+i), -2), HasAmount: true, Signature: store.SignatureValid, Applied: true}
	}
	ctx := NewContext(func() time.Time { return t0.Add(30 * 24 * time.Hour) })
	s := NewPushes(ctx, "")
	s.SetSize(140, 40)
	rows := NewPushRows(ps)
	finish(s.Update(PushRowsMsg{Full: true, Rows: rows}), s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.list.query = fmt.Sprintf("paypal service:pay amount:>%d", i%20)
		finish(s.list.restart(), s)
	}
	if s.list.len() == 0 {
		b.Fatal("the filter kept nothing")
	}
}
