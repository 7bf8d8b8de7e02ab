package ops

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

var planNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func planReservation() *store.Reservation {
	return &store.Reservation{Key: "K1", ReservationNumber: "R1", Invoice: "INV-1", Currency: "EUR", LinesKnown: true,
		Status: store.Status{Code: api.StatusSuccess}, Created: planNow.AddDate(0, 0, -3),
		Lines: []store.Line{
			{ArticleNumber: "A", Title: "Shoe", Price: dec("59.95"), Reserved: 3, Captured: 1},
			{ArticleNumber: "B", Title: "Socks", Price: dec("14.50"), Reserved: 2},
			{ArticleNumber: "D", Title: "Discount", Price: dec("-5.00"), Reserved: 1},
		}, CapturedAmount: dec("59.95")}
}

func TestPlanCapture(t *testing.T) {
	tests := []struct {
		name     string
		qty      map[string]int
		created  time.Time
		amount   string
		full     bool
		lines    int
		late     bool
		errField string
		errIs    error
	}{
		{name: "everything remaining", qty: nil, amount: "143.9", full: true},
		{name: "every line at its remainder is full", qty: map[string]int{"A": 2, "B": 2, "D": 1}, amount: "143.9", full: true},
		{name: "partial with a skipped line", qty: map[string]int{"A": 1, "B": 0, "D": 0}, amount: "59.95", lines: 1},
		{name: "partial with the discount", qty: map[string]int{"A": 1, "B": 1, "D": 1}, amount: "69.45", lines: 3},
		{name: "more than remains", qty: map[string]int{"A": 3}, errField: api.PArticleQuantity},
		{name: "negative", qty: map[string]int{"B": -1}, errField: api.PArticleQuantity},
		{name: "unknown article", qty: map[string]int{"Z": 1}, errField: api.PArticleNumber},
		{name: "nothing shipped", qty: map[string]int{"A": 0, "B": 0, "D": 0}, errField: api.PArticleQuantity},
		{name: "only the discount", qty: map[string]int{"D": 1}, errField: api.FieldAmountDebit},
		{name: "past the window", qty: nil, created: planNow.AddDate(0, 0, -15), amount: "143.9", full: true, late: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := planReservation()
			if !tt.created.IsZero() {
				r.Created = tt.created
			}
			p, err := PlanCapture(r, tt.qty, planNow)
			if tt.errField != "" {
				var ve *api.ValidationError
				if !errors.As(err, &ve) || !ve.Has(tt.errField) {
					t.Fatalf("err %v, want a rule on %s", err, tt.errField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !p.Amount.Equal(dec(tt.amount)) || p.Full != tt.full || len(p.Lines) != tt.lines || p.PastWindow != tt.late {
				t.Fatalf("plan amount %s full %v lines %v late %v", p.Amount, p.Full, p.Lines, p.PastWindow)
			}
			if err := p.Op("EUR").Validate(api.Rules{}); err != nil {
				t.Fatalf("the planned capture does not validate: %v", err)
			}
		})
	}
	r := planReservation()
	r.Cancelled = true
	if _, err := PlanCapture(r, nil, planNow); !errors.Is(err, ErrNotPossible) {
		t.Fatalf("capture of a cancelled reservation: %v", err)
	}
}

func TestPlanUpdate(t *testing.T) {
	r := planReservation() // reserved 3×59.95 + 2×14.50 − 5 = 203.85
	lines := func(aQty int, aPrice, bPrice string) []api.Article {
		return []api.Article{{Number: "A", Title: "Shoe", Price: dec(aPrice), Quantity: aQty, Vat: dec("21")},
			{Number: "B", Title: "Socks", Price: dec(bPrice), Quantity: 2, Vat: dec("21")},
			{Number: "D", Title: "Discount", Price: dec("-5"), Quantity: 1, Vat: dec("21")}}
	}
	tests := []struct {
		name     string
		ch       UpdateChange
		errField string
	}{
		{"lower a quantity", UpdateChange{Articles: lines(2, "59.95", "14.50")}, ""},
		{"lower a price", UpdateChange{Articles: lines(3, "59.95", "12.00")}, ""},
		{"address only", UpdateChange{Billing: api.Address{Street: "Keizersgracht"}}, ""},
		{"raise the amount", UpdateChange{Articles: lines(3, "59.95", "20.00")}, api.PArticlePrice},
		{"below the captured units", UpdateChange{Articles: lines(0, "59.95", "14.50")}, api.PArticleQuantity},
		{"reprice a captured line", UpdateChange{Articles: lines(3, "49.95", "14.50")}, api.PArticlePrice},
		{"nothing", UpdateChange{}, api.PArticleTitle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PlanUpdate(r, tt.ch)
			if tt.errField == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ve *api.ValidationError
			if !errors.As(err, &ve) || !ve.Has(tt.errField) {
				t.Fatalf("err %v, want a rule on %s", err, tt.errField)
			}
		})
	}
}

func TestPlanRefundAndReasons(t *testing.T) {
	capt := &store.Transaction{Key: "C1", Kind: store.KindCapture, Invoice: "INV-1", Currency: "EUR", Amount: dec("100"),
		Refunded: dec("30"), Status: store.Status{Code: api.StatusSuccess}}
	tests := []struct {
		name     string
		amount   string
		reason   Reason
		want     string
		errField string
	}{
		{"all that is left", "", Reason{Code: ReasonReturn}, "70", ""},
		{"part", "12.5", Reason{Code: ReasonDefect}, "12.5", ""},
		{"exactly what is left", "70", Reason{Code: ReasonGoodwill}, "70", ""},
		{"above what is left", "70.01", Reason{Code: ReasonReturn}, "", api.FieldAmountCredit},
		{"three decimals", "1.005", Reason{Code: ReasonReturn}, "", api.FieldAmountCredit},
		{"zero", "0", Reason{Code: ReasonReturn}, "", api.FieldAmountCredit},
		{"no reason", "1", Reason{}, "", "Reason"},
		{"unknown reason", "1", Reason{Code: "whim"}, "", "Reason"},
		{"other without text", "1", Reason{Code: ReasonOther}, "", "Reason"},
		{"other with text", "1", Reason{Code: ReasonOther, Text: "price match"}, "1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var amount *decimal.Decimal
			if tt.amount != "" {
				amount = ptr(dec(tt.amount))
			}
			op, err := PlanRefund(capt, amount, tt.reason)
			if tt.errField != "" {
				var ve *api.ValidationError
				if !errors.As(err, &ve) || !ve.Has(tt.errField) {
					t.Fatalf("err %v, want a rule on %s", err, tt.errField)
				}
				return
			}
			if err != nil || !op.Amount.Equal(dec(tt.want)) {
				t.Fatalf("op %+v err %v", op, err)
			}
		})
	}
	if got := ParseReason("Other: price match"); got.Code != "other" || got.Text != "price match" || got.String() != "other: price match" {
		t.Fatalf("ParseReason %+v", got)
	}
}

func TestParseQuantities(t *testing.T) {
	q, err := ParseQuantities([]string{"A=2", "B=0"})
	if err != nil || q["A"] != 2 || q["B"] != 0 {
		t.Fatalf("%v %v", q, err)
	}
	for _, bad := range [][]string{{"A"}, {"=2"}, {"A=-1"}, {"A=x"}, {"A=1", "A=2"}, {"A="}} {
		if _, err := ParseQuantities(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if q, err := ParseQuantities(nil); q != nil || err != nil {
		t.Fatal("no pairs must mean everything remaining")
	}
}

func TestLiveGuards(t *testing.T) {
	s := &Service{cfg: Config{Mode: ModeLive}}
	if err := s.liveConfirm("cancel", "INV-1", "INV-2"); !errors.Is(err, ErrConfirmRequired) {
		t.Fatalf("wrong invoice: %v", err)
	}
	if err := s.liveConfirm("cancel", "INV-1", " INV-1 "); err != nil {
		t.Fatalf("typed invoice: %v", err)
	}
	if _, err := s.Reserve(context.Background(), TestReservation(planNow, "")); !errors.Is(err, ErrLiveRefused) {
		t.Fatalf("live reserve: %v", err)
	}
	s.cfg.Mode = ModeTest
	if err := s.liveConfirm("cancel", "INV-1", ""); err != nil {
		t.Fatalf("test mode needs no typed invoice: %v", err)
	}
}
