package ops

import (
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// returnFixture: 3 shoes (59.95) and 2 packs of socks (14.50) shipped in
// two captures; the first also had 14.50 refunded by amount, the second a
// shoe refunded by line.
func returnFixture() (*store.Reservation, []*store.Transaction) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	r := &store.Reservation{ReservationNumber: "R-1", Invoice: "INV-1", Currency: "EUR", LinesKnown: true, Lines: []store.Line{
		{ArticleNumber: "SHOE", Price: dec("59.95"), Reserved: 3, Captured: 3},
		{ArticleNumber: "SOCK", Price: dec("14.50"), Reserved: 2, Captured: 2},
	}}
	ok := func(at time.Time) store.Status { return store.Status{Code: api.StatusSuccess, Time: at} }
	c1 := &store.Transaction{Key: "C1", Kind: store.KindCapture, Currency: "EUR", Amount: dec("74.45"), Refunded: dec("14.50"), Status: ok(t0),
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE", Quantity: 1}, {ArticleNumber: "SOCK", Quantity: 1}}, Refunds: []string{"F1"}}
	c2 := &store.Transaction{Key: "C2", Kind: store.KindCapture, Currency: "EUR", Amount: dec("134.40"), Refunded: dec("59.95"), Status: ok(t0.Add(time.Hour)),
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE", Quantity: 2}, {ArticleNumber: "SOCK", Quantity: 1}}, Refunds: []string{"F2"}}
	f1 := &store.Transaction{Key: "F1", Kind: store.KindRefund, Amount: dec("14.50"), Status: ok(t0.Add(2 * time.Hour)), Original: "C1"}
	f2 := &store.Transaction{Key: "F2", Kind: store.KindRefund, Amount: dec("59.95"), Status: ok(t0.Add(3 * time.Hour)), Original: "C2",
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE", Quantity: 1}}}
	return r, []*store.Transaction{c1, c2, f1, f2}
}

func TestPlanReturn(t *testing.T) {
	reason := Reason{Code: ReasonReturn}
	tests := []struct {
		name    string
		units   map[string]int
		extra   string
		reason  Reason
		want    map[string]string // capture → amount
		errWant string            // field with the error
	}{
		{name: "one shoe: the oldest capture", units: map[string]int{"SHOE": 1}, extra: "0", reason: reason, want: map[string]string{"C1": "59.95"}},
		{name: "two shoes: one from each", units: map[string]int{"SHOE": 2}, extra: "0", reason: reason, want: map[string]string{"C1": "59.95", "C2": "59.95"}},
		{name: "extra goes where there is room", units: map[string]int{"SHOE": 1, "SOCK": 1}, extra: "5", reason: reason,
			want: map[string]string{"C1": "59.95", "C2": "19.5"}},
		{name: "three shoes: one was refunded by line", units: map[string]int{"SHOE": 3}, extra: "0", reason: reason, errWant: api.PArticleQuantity},
		{name: "unknown article", units: map[string]int{"HAT": 1}, extra: "0", reason: reason, errWant: api.PArticleNumber},
		{name: "nothing chosen", units: map[string]int{}, extra: "0", reason: reason, errWant: api.PArticleQuantity},
		{name: "negative extra", units: map[string]int{"SHOE": 1}, extra: "-1", reason: reason, errWant: api.FieldAmountCredit},
		{name: "extra with no room", units: map[string]int{"SOCK": 1}, extra: "100", reason: reason, errWant: api.FieldAmountCredit},
		{name: "other needs a text", units: map[string]int{"SHOE": 1}, extra: "0", reason: Reason{Code: ReasonOther}, errWant: "Reason"},
		// C1 had 14.50 refunded by amount: its shoe fits in what is left
		// (59.95), its socks then do not and come from C2.
		{name: "units go where the money is", units: map[string]int{"SHOE": 2, "SOCK": 1}, extra: "0", reason: reason,
			want: map[string]string{"C1": "59.95", "C2": "74.45"}},
		{name: "more than is left to refund", units: map[string]int{"SHOE": 2, "SOCK": 2}, extra: "0", reason: reason, errWant: api.FieldAmountCredit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, txs := returnFixture()
			p, err := PlanReturn(r, txs, tt.units, decimal.RequireFromString(tt.extra), tt.reason)
			if tt.errWant != "" {
				var ve *api.ValidationError
				if !errors.As(err, &ve) || !ve.Has(tt.errWant) {
					t.Fatalf("err %v, want a field error on %s", err, tt.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, pt := range p.Parts {
				got[pt.Capture.Key] = pt.Amount.String()
			}
			if len(got) != len(tt.want) {
				t.Fatalf("parts %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Fatalf("parts %v, want %v", got, tt.want)
				}
			}
		})
	}
}
