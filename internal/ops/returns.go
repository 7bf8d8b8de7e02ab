package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// A return is refunded by article line: the operator says which units came
// back, and each unit is paid back from the capture that shipped it (a
// refund on the wire names one capture and an amount). Units of one line
// shipped in two captures give two refunds; the plan lists them before
// anything is sent.

// ReturnPart is one refund of a return: a capture and the units of it that
// came back.
type ReturnPart struct {
	Capture *store.Transaction
	Lines   []api.CaptureLine
	// Goods is what the units cost (units × price); Extra the part of the
	// extra amount (return shipping) this refund carries; Amount the sum.
	Goods  decimal.Decimal
	Extra  decimal.Decimal
	Amount decimal.Decimal
}

// ReturnPlan is a return as it will be refunded.
type ReturnPlan struct {
	Reservation *store.Reservation
	Parts       []ReturnPart
	Total       decimal.Decimal
	Extra       decimal.Decimal
}

// Shipped is one capture's units per line and what of them came back
// before: what a return can still take from it.
type Shipped struct {
	Capture  *store.Transaction
	Units    map[string]int // article number → units the capture shipped
	Returned map[string]int // article number → units refunded by line before
	Whole    bool           // the capture was refunded in full
}

// Left is what can still come back of the line from this capture.
func (s Shipped) Left(article string) int {
	if s.Whole {
		return 0
	}
	return max(s.Units[article]-s.Returned[article], 0)
}

// ShippedBy replays the reservation's successful captures oldest first,
// as the ledger does, and says which units each shipped and which came
// back already. txs are the reservation's transactions (captures and
// refunds); a capture whose lines are unknown (another tool's) counts
// only when its amount is exactly what remained.
func ShippedBy(r *store.Reservation, txs []*store.Transaction) []Shipped {
	byKey := map[string]*store.Transaction{}
	var caps []*store.Transaction
	for _, t := range txs {
		if t == nil {
			continue
		}
		byKey[t.Key] = t
		if t.Kind == store.KindCapture && t.Status.IsSuccess() {
			caps = append(caps, t)
		}
	}
	slices.SortStableFunc(caps, func(a, b *store.Transaction) int {
		if c := a.Status.Time.Compare(b.Status.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	left := map[string]int{}
	price := map[string]decimal.Decimal{}
	for _, l := range r.Lines {
		left[l.ArticleNumber] += l.Reserved
		price[l.ArticleNumber] = l.Price
	}
	remaining := func() decimal.Decimal {
		t := decimal.Zero
		for a, n := range left {
			t = t.Add(price[a].Mul(decimal.NewFromInt(int64(n))))
		}
		return t
	}
	var out []Shipped
	for _, c := range caps {
		s := Shipped{Capture: c, Units: map[string]int{}, Returned: map[string]int{},
			Whole: c.Amount.IsPositive() && c.Refunded.GreaterThanOrEqual(c.Amount)}
		switch {
		case len(c.Lines) > 0:
			for _, l := range c.Lines {
				n := min(l.Quantity, left[l.ArticleNumber])
				s.Units[l.ArticleNumber] += n
				left[l.ArticleNumber] -= n
			}
		case c.FullCapture || c.Amount.Equal(remaining()):
			for a, n := range left {
				if n > 0 {
					s.Units[a] = n
					left[a] = 0
				}
			}
		default:
			continue // lines unknown: nothing to return by line from it
		}
		for _, rk := range c.Refunds {
			rt := byKey[rk]
			if rt == nil || !rt.Status.IsSuccess() {
				continue
			}
			for _, l := range rt.Lines {
				s.Returned[l.ArticleNumber] += l.Quantity
			}
		}
		out = append(out, s)
	}
	return out
}

// PlanReturn splits a return over the captures that shipped the units,
// oldest capture first, and puts the extra amount (return shipping) on the
// refund with the most room. It refuses an unknown article, more units
// than came to the customer, a refund above what is left of its capture
// and an empty return.
func PlanReturn(r *store.Reservation, txs []*store.Transaction, units map[string]int, extra decimal.Decimal, reason Reason) (ReturnPlan, error) {
	p := ReturnPlan{Reservation: r, Extra: extra}
	if !r.LinesKnown {
		return p, fmt.Errorf("refund return: %w: the reservation's lines are not known to this cache; refund a capture by amount", ErrNotPossible)
	}
	shipped := ShippedBy(r, txs)
	if len(shipped) == 0 {
		return p, fmt.Errorf("refund return: %w: nothing of reservation %s was captured", ErrNotPossible, r.ReservationNumber)
	}
	var fe []api.FieldError
	line := map[string]store.Line{}
	for _, l := range r.Lines {
		line[l.ArticleNumber] = l
	}
	parts := make([]ReturnPart, len(shipped))
	// room is what each capture can still pay back: a capture refunded
	// partly by amount has units left but less money; units go to the
	// oldest capture that has both.
	room := make([]decimal.Decimal, len(shipped))
	for i, s := range shipped {
		room[i] = s.Capture.Refundable()
	}
	some := false
	for _, l := range r.Lines {
		n := units[l.ArticleNumber]
		if n < 0 {
			fe = append(fe, api.FieldError{Field: api.PArticleQuantity, Group: l.ArticleNumber, Rule: "must be 0 or a positive number of units"})
			continue
		}
		if n == 0 {
			continue
		}
		avail := 0
		for _, s := range shipped {
			avail += s.Left(l.ArticleNumber)
		}
		if n > avail {
			fe = append(fe, api.FieldError{Field: api.PArticleQuantity, Group: l.ArticleNumber,
				Rule: fmt.Sprintf("only %d shipped and not yet refunded", avail)})
			continue
		}
		some = true
		for i, s := range shipped {
			take := min(n, s.Left(l.ArticleNumber))
			if l.Price.IsPositive() {
				take = min(take, int(room[i].Div(l.Price).IntPart()))
			}
			if take <= 0 {
				continue
			}
			goods := l.Price.Mul(decimal.NewFromInt(int64(take)))
			parts[i].Lines = append(parts[i].Lines, api.CaptureLine{ArticleNumber: l.ArticleNumber, Quantity: take})
			parts[i].Goods = parts[i].Goods.Add(goods)
			room[i] = room[i].Sub(goods)
			n -= take
			if n == 0 {
				break
			}
		}
		if n > 0 {
			fe = append(fe, api.FieldError{Field: api.FieldAmountCredit, Group: l.ArticleNumber,
				Rule: fmt.Sprintf("%d of the %s units do not fit in what is left to refund of the captures that shipped them (refunded by amount before)", n, l.ArticleNumber)})
		}
	}
	for a := range units {
		if _, ok := line[a]; !ok && units[a] != 0 {
			fe = append(fe, api.FieldError{Field: api.PArticleNumber, Group: a, Rule: "is not a line of this reservation"})
		}
	}
	switch {
	case extra.IsNegative():
		fe = append(fe, api.FieldError{Field: api.FieldAmountCredit, Rule: "the extra amount must not be negative"})
	case !extra.Equal(extra.Round(2)):
		fe = append(fe, api.FieldError{Field: api.FieldAmountCredit, Rule: "the extra amount must have at most two decimals"})
	}
	if e := reason.Check(); e != nil {
		fe = append(fe, *e)
	}
	if len(fe) > 0 {
		return p, fieldErr(api.ActionRefund, fe...)
	}
	if !some {
		return p, fieldErr(api.ActionRefund, api.FieldError{Field: api.PArticleQuantity, Rule: "choose the returned units (at least one)"})
	}
	for i := range parts {
		parts[i].Capture = shipped[i].Capture
		parts[i].Amount = parts[i].Goods
	}
	if extra.IsPositive() {
		best := -1
		for i, pt := range parts {
			if len(pt.Lines) == 0 {
				continue
			}
			room := pt.Capture.Refundable().Sub(pt.Goods)
			if room.GreaterThanOrEqual(extra) && (best < 0 || room.GreaterThan(parts[best].Capture.Refundable().Sub(parts[best].Goods))) {
				best = i
			}
		}
		if best < 0 {
			return p, fieldErr(api.ActionRefund, api.FieldError{Field: api.FieldAmountCredit,
				Rule: "no capture of this return has room for the extra amount " + extra.StringFixed(2)})
		}
		parts[best].Extra = extra
		parts[best].Amount = parts[best].Goods.Add(extra)
	}
	for _, pt := range parts {
		if len(pt.Lines) == 0 {
			continue
		}
		if pt.Amount.GreaterThan(pt.Capture.Refundable()) {
			return p, fieldErr(api.ActionRefund, api.FieldError{Field: api.FieldAmountCredit,
				Rule: fmt.Sprintf("the capture %s has only %s left to refund, the returned units cost %s", shortKey(pt.Capture.Key),
					pt.Capture.Refundable().StringFixed(2), pt.Amount.StringFixed(2))})
		}
		if _, err := PlanRefund(pt.Capture, &pt.Amount, reason); err != nil {
			return p, err
		}
		p.Parts = append(p.Parts, pt)
		p.Total = p.Total.Add(pt.Amount)
	}
	return p, nil
}

func shortKey(k string) string {
	if len(k) > 12 {
		return k[:12] + "…"
	}
	return k
}

// ReturnRequest refunds a return by article line: one refund per capture
// that shipped returned units.
type ReturnRequest struct {
	Reservation string
	Units       map[string]int // article number → units returned
	Extra       decimal.Decimal
	Reason      Reason
	Confirm     string // the invoice number, against a live gateway
}

// Run plans the return again on the cache as it is now and sends its
// refunds one after the other; it stops at the first that is not done (a
// refusal, an unknown outcome) and says which were sent.
func (rr ReturnRequest) Run(ctx context.Context, s *Service) (Result, error) {
	return s.RefundReturn(ctx, rr)
}

// Describe says what the return refunds.
func (rr ReturnRequest) Describe() string { return "refund a return of " + rr.Reservation }

// RefundReturn refunds a return by article line.
func (s *Service) RefundReturn(ctx context.Context, rr ReturnRequest) (Result, error) {
	res := Result{Action: api.ActionRefund, Target: rr.Reservation}
	if err := s.Check(ctx, access.Refund); err != nil {
		return res, fmt.Errorf("refund return of %s: %w", rr.Reservation, err)
	}
	r, err := s.reservation(ctx, rr.Reservation)
	if err != nil {
		return res, err
	}
	var txs []*store.Transaction
	for _, k := range r.Transactions {
		t, err := s.cfg.Store.Transaction(ctx, k)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return res, fmt.Errorf("refund return of %s: %w", rr.Reservation, err)
		}
		txs = append(txs, t)
	}
	plan, err := PlanReturn(r, txs, rr.Units, rr.Extra, rr.Reason)
	if err != nil {
		return res, err
	}
	res.Currency, res.Invoice = r.Currency, r.Invoice
	// The whole return is one decision: approved, refused or sent whole,
	// never some of its refunds sent and the rest waiting.
	if held, held1, err := s.refundGate(ctx, approvalReturn, r.ReservationNumber, r.Currency, returnNote(plan, rr.Reason), plan.Total, rr); held1 || err != nil {
		held.Invoice = r.Invoice
		return held, err
	}
	var done []string
	total := decimal.Zero
	for i, pt := range plan.Parts {
		amount := pt.Amount
		one, err := s.Refund(ctx, RefundRequest{Transaction: pt.Capture.Key, Amount: &amount, Reason: rr.Reason,
			Confirm: rr.Confirm, Lines: pt.Lines})
		if err != nil || !one.OK() {
			if len(done) > 0 {
				one.Message = strings.TrimSpace(fmt.Sprintf("refund %d of %d: %s (already done: %s)", i+1, len(plan.Parts), one.Message, strings.Join(done, "; ")))
			}
			return one, err
		}
		total = total.Add(amount)
		done = append(done, fmt.Sprintf("%s %s against capture %s (key %s)", amount.StringFixed(2), r.Currency, pt.Capture.InvoiceNumber, one.Key))
		res = one
	}
	res.Target, res.Amount = rr.Reservation, total
	if len(done) > 1 {
		res.Message = fmt.Sprintf("%d refunds: %s", len(done), strings.Join(done, "; "))
	}
	return res, nil
}

// returnNote is a return's lines for an approval request: what came back.
func returnNote(p ReturnPlan, reason Reason) string {
	var parts []string
	for _, pt := range p.Parts {
		for _, l := range pt.Lines {
			parts = append(parts, fmt.Sprintf("%s=%d", l.ArticleNumber, l.Quantity))
		}
	}
	note := "return " + strings.Join(parts, " ") + ", reason " + reason.String()
	if p.Extra.IsPositive() {
		note += ", extra " + p.Extra.StringFixed(2)
	}
	return note
}
