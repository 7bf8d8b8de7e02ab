package store

import (
	"testing"

	"paydesk/api"
)

// TestRecomputePure runs the ledger rule on values alone, with no store:
// the reservation and its transactions as loaded in, the ledger out, and
// the transactions it renamed for the list.
func TestRecomputePure(t *testing.T) {
	ok := Status{Code: api.StatusSuccess, Time: t0}
	failed := Status{Code: api.StatusFailed, Time: t0}
	capture := func(key, amount string, st Status, lines ...api.CaptureLine) *Transaction {
		return &Transaction{Key: key, Kind: KindCapture, Amount: dec(amount), Status: st, Lines: lines, FullCapture: len(lines) == 0, CustomerName: "Ann Smith"}
	}
	refund := func(key, amount string, lines ...api.CaptureLine) *Transaction {
		return &Transaction{Key: key, Kind: KindRefund, Amount: dec(amount), Status: ok, Lines: lines, CustomerName: "Ann Smith"}
	}
	cl := func(n string, q int) api.CaptureLine { return api.CaptureLine{ArticleNumber: n, Quantity: q} }
	tests := []struct {
		name      string
		cancelled bool
		txs       []*Transaction
		refunds   map[string][]string // capture → its refunds (sumRefunds)
		captured  string
		lines     map[string]lineWant // reserved, captured, cancelled, refunded, remaining
		renamed   []string
	}{
		{
			name:  "nothing captured",
			lines: map[string]lineWant{"A": {3, 0, 0, 0, 3}, "B": {1, 0, 0, 0, 1}},
		},
		{
			name:     "a failed capture takes nothing",
			txs:      []*Transaction{capture("C1", "39.98", failed, cl("A", 2))},
			captured: "0", lines: map[string]lineWant{"A": {3, 0, 0, 0, 3}},
		},
		{
			name:      "captures by line, the rest cancelled",
			cancelled: true,
			txs:       []*Transaction{capture("C1", "39.98", ok, cl("A", 2))},
			captured:  "39.98", lines: map[string]lineWant{"A": {3, 2, 1, 0, 0}, "B": {1, 0, 1, 0, 0}},
		},
		{
			name:     "a full capture takes what remained",
			txs:      []*Transaction{capture("C1", "39.98", ok, cl("A", 2)), capture("C2", "109.94", ok)},
			captured: "149.92", lines: map[string]lineWant{"A": {3, 3, 0, 0, 0}, "B": {1, 1, 0, 0, 0}},
		},
		{
			name:     "a refund by line counts its units, capped at what the capture shipped",
			txs:      []*Transaction{capture("C1", "39.98", ok, cl("A", 2)), refund("R1", "59.97", cl("A", 3))},
			refunds:  map[string][]string{"C1": {"R1"}},
			captured: "39.98", lines: map[string]lineWant{"A": {3, 2, 0, 2, 1}},
		},
		{
			name:     "a capture elsewhere whose amount fits one choice of lines",
			txs:      []*Transaction{{Key: "C1", Kind: KindCapture, Amount: dec("89.95"), Status: ok, CustomerName: "Ann Smith"}},
			captured: "89.95", lines: map[string]lineWant{"A": {3, 0, 0, 0, 3}, "B": {1, 1, 0, 0, 0}},
		},
		{
			name:    "the customer's name goes to the transactions that lack it",
			txs:     []*Transaction{{Key: "C1", Kind: KindCapture, Amount: dec("19.99"), Status: ok, Lines: []api.CaptureLine{cl("A", 1)}}, capture("C2", "5", failed)},
			renamed: []string{"C1"}, captured: "19.99",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reservation{Key: "K", CustomerName: "Ann Smith", LinesKnown: true, Original: Update{Articles: []api.Article{
				{Number: "A", Title: "Shirt", Price: dec("19.99"), Quantity: 3}, {Number: "B", Title: "Shoes", Price: dec("89.95"), Quantity: 1}}}}
			if tc.cancelled {
				r.Requests = []Request{{Key: "X", Action: api.ActionCancelReservation, Status: ok}}
			}
			txs := map[string]*Transaction{}
			for _, x := range tc.txs {
				txs[x.Key] = x
				if x.Kind == KindCapture {
					r.Transactions = append(r.Transactions, x.Key)
				}
			}
			for c, rks := range tc.refunds {
				var rs []*Transaction
				for _, k := range rks {
					rs = append(rs, txs[k])
				}
				sumRefunds(txs[c], rs)
			}
			renamed := recompute(r, txs)
			var names []string
			for _, x := range renamed {
				names = append(names, x.Key)
			}
			if len(names) != len(tc.renamed) || (len(names) > 0 && names[0] != tc.renamed[0]) {
				t.Errorf("renamed %v, want %v", names, tc.renamed)
			}
			if tc.captured != "" && !r.CapturedAmount.Equal(dec(tc.captured)) {
				t.Errorf("captured %s, want %s", r.CapturedAmount, tc.captured)
			}
			for _, l := range r.Lines {
				want, ok := tc.lines[l.ArticleNumber]
				if !ok {
					continue
				}
				got := lineWant{l.Reserved, l.Captured, l.Cancelled, l.Refunded, max(0, l.Reserved-l.Captured-l.Cancelled)}
				if got != want {
					t.Errorf("line %s = %+v, want %+v", l.ArticleNumber, got, want)
				}
			}
		})
	}
}
