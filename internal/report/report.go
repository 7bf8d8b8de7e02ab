package report

import (
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/store"
)

// By is what a report's rows group by.
type By string

const (
	ByDay      By = "day"
	ByOperator By = "operator"
	ByService  By = "service"
)

// ParseBy reads --by.
func ParseBy(s string) (By, bool) {
	switch By(s) {
	case ByDay, ByOperator, ByService:
		return By(s), true
	}
	return "", false
}

// Figures are the sums of one row, in one currency.
type Figures struct {
	Reserved  decimal.Decimal
	Captured  decimal.Decimal
	Cancelled decimal.Decimal
	Refunded  decimal.Decimal
	// RefundedBy splits Refunded by the reason given ("" when none was:
	// refunds made elsewhere, or before reasons were asked).
	RefundedBy    map[string]decimal.Decimal
	GiftCardPaid  decimal.Decimal
	GiftCardRefnd decimal.Decimal
	Captures      int
	Refunds       int
	// Settled and Fees are what the gateway paid out and kept, by the
	// statements reconciled (paydesk reconcile): on the day of the payout.
	Settled decimal.Decimal
	Fees    decimal.Decimal
}

func (f *Figures) add(g Figures) {
	f.Reserved = f.Reserved.Add(g.Reserved)
	f.Captured = f.Captured.Add(g.Captured)
	f.Cancelled = f.Cancelled.Add(g.Cancelled)
	f.Refunded = f.Refunded.Add(g.Refunded)
	f.GiftCardPaid = f.GiftCardPaid.Add(g.GiftCardPaid)
	f.GiftCardRefnd = f.GiftCardRefnd.Add(g.GiftCardRefnd)
	f.Captures += g.Captures
	f.Refunds += g.Refunds
	f.Settled = f.Settled.Add(g.Settled)
	f.Fees = f.Fees.Add(g.Fees)
	for r, a := range g.RefundedBy {
		if f.RefundedBy == nil {
			f.RefundedBy = map[string]decimal.Decimal{}
		}
		f.RefundedBy[r] = f.RefundedBy[r].Add(a)
	}
}

// Row is one group's figures in one currency.
type Row struct {
	Group    string // the day (YYYY-MM-DD), the operator or the service
	Currency string
	Figures
}

// Report is the rows, sorted by group and currency, and their totals per
// currency.
type Report struct {
	By       By
	From, To time.Time // the days the report covers, inclusive
	Rows     []Row
	Totals   []Row // Group "total", one per currency
}

// Input is what a report sums: the store's values, as read.
type Input struct {
	Summaries    []store.Summary
	Reservations map[string]*store.Reservation // the cancelled and closed ones, by key: their cancelled lines
	Transactions []*store.Transaction
	Ops          map[uint64]*store.PendingOp // by ID: who sent it
	Reasons      map[uint64]string           // a refund operation's reason, by operation ID (its audit entry)
	Settlements  []Settlement                // the payouts of the statements reconciled
}

// Settlement is one payout of a statement reconciled: its reference, the
// day it was paid out, what it paid out (gross) and the fees kept.
type Settlement struct {
	Reference string
	Currency  string
	Day       string // YYYY-MM-DD, as the statement gives it
	Gross     decimal.Decimal
	Fees      decimal.Decimal
}

// NeedsReservation reports whether Build reads the reservation of s in
// full (Input.Reservations): only a cancelled remainder has no figure in
// the summary.
func NeedsReservation(s store.Summary) bool {
	return s.State == store.StateCancelled || s.State == store.StateClosed
}

// Build sums in from..to (days in loc, inclusive) by by. A reservation
// counts on the day it was made, a capture, refund or gift card
// transaction on the day it succeeded, a cancel on the day the gateway
// confirmed it.
func Build(in Input, by By, from, to time.Time, loc *time.Location) Report {
	day := func(t time.Time) string { return t.In(loc).Format(time.DateOnly) }
	lo, hi := day(from), day(to)
	within := func(t time.Time) bool { d := day(t); return !t.IsZero() && d >= lo && d <= hi }
	rows := map[[2]string]*Figures{}
	at := func(group, currency string) *Figures {
		k := [2]string{group, currency}
		if rows[k] == nil {
			rows[k] = &Figures{}
		}
		return rows[k]
	}
	operatorOf := func(opID uint64, fallback string) string {
		if op := in.Ops[opID]; op != nil && op.Operator != "" {
			return op.Operator
		}
		return fallback
	}
	group := func(t time.Time, operator, service string) string {
		switch by {
		case ByOperator:
			return operator
		case ByService:
			return service
		}
		return day(t)
	}
	for _, s := range in.Summaries {
		if within(s.Created) && !s.LinesUnknown && s.State != store.StateDeclined && s.State != store.StateAwaitingCustomer {
			f := at(group(s.Created, "-", "deferredkp"), s.Currency)
			f.Reserved = f.Reserved.Add(s.Amount)
		}
		if !NeedsReservation(s) {
			continue
		}
		r := in.Reservations[s.Key]
		if r == nil {
			continue
		}
		when, who := time.Time{}, "-"
		for _, rq := range r.Requests {
			if strings.EqualFold(rq.Action, "CancelReservation") && rq.Status.IsSuccess() {
				when, who = rq.Status.Time, operatorOf(rq.OpID, "-")
			}
		}
		if !within(when) {
			continue
		}
		c := decimal.Zero
		for _, l := range r.Lines {
			c = c.Add(l.CancelledAmount())
		}
		f := at(group(when, who, "deferredkp"), r.Currency)
		f.Cancelled = f.Cancelled.Add(c)
	}
	for _, t := range in.Transactions {
		if !t.Status.IsSuccess() {
			continue
		}
		when := t.Status.Time
		if when.IsZero() {
			when = t.Created
		}
		if !within(when) {
			continue
		}
		f := at(group(when, operatorOf(t.OpID, "-"), t.ServiceCode), t.Currency)
		switch t.Kind {
		case store.KindCapture:
			f.Captured = f.Captured.Add(t.Amount)
			f.Captures++
		case store.KindRefund:
			f.Refunded = f.Refunded.Add(t.Amount)
			f.Refunds++
			reason := in.Reasons[t.OpID]
			if f.RefundedBy == nil {
				f.RefundedBy = map[string]decimal.Decimal{}
			}
			f.RefundedBy[reason] = f.RefundedBy[reason].Add(t.Amount)
		case store.KindGiftCardPay, store.KindGiftCardRemainder:
			f.GiftCardPaid = f.GiftCardPaid.Add(t.Amount)
		case store.KindGiftCardRefund:
			f.GiftCardRefnd = f.GiftCardRefnd.Add(t.Amount)
		}
	}
	for _, st := range in.Settlements {
		if st.Day < lo || st.Day > hi {
			continue
		}
		// A payout has a day but no operator or service of its own.
		g := st.Day
		if by != ByDay {
			g = "-"
		}
		f := at(g, st.Currency)
		f.Settled = f.Settled.Add(st.Gross)
		f.Fees = f.Fees.Add(st.Fees)
	}
	rep := Report{By: by, From: from, To: to}
	totals := map[string]*Figures{}
	for k, f := range rows {
		rep.Rows = append(rep.Rows, Row{Group: k[0], Currency: k[1], Figures: *f})
		if totals[k[1]] == nil {
			totals[k[1]] = &Figures{}
		}
		totals[k[1]].add(*f)
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		if rep.Rows[i].Group != rep.Rows[j].Group {
			return rep.Rows[i].Group < rep.Rows[j].Group
		}
		return rep.Rows[i].Currency < rep.Rows[j].Currency
	})
	for cur, f := range totals {
		rep.Totals = append(rep.Totals, Row{Group: "total", Currency: cur, Figures: *f})
	}
	sort.Slice(rep.Totals, func(i, j int) bool { return rep.Totals[i].Currency < rep.Totals[j].Currency })
	return rep
}
