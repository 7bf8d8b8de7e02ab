package reconcile

import (
	"sort"
	"time"

	"github.com/shopspring/decimal"
)

// Outcome is what became of a statement line or a booked transaction.
type Outcome string

const (
	// Matched: the line is a capture or refund paydesk booked, same amount.
	Matched Outcome = "matched"
	// Unsettled: paydesk booked it, it was due on the statements read, and
	// no line paid it out.
	Unsettled Outcome = "unsettled"
	// Unknown: the statement paid out something paydesk never booked.
	Unknown Outcome = "unknown"
	// Differs: the line names a booked transaction, with another amount or
	// currency.
	Differs Outcome = "differs"
)

// Booked is a successful capture, refund or gift card transaction paydesk
// holds, as the statements should show it.
type Booked struct {
	Key      string
	Invoice  string
	Kind     string // as paydesk names it: capture, refund, …
	Currency string
	Amount   decimal.Decimal // signed: a refund is negative
	At       time.Time       // when it succeeded
}

// Match is one statement line and what it matched.
type Match struct {
	Outcome Outcome
	Line    Line
	Booked  *Booked // nil for Unknown
	// ByInvoice: matched by invoice and amount, the line naming no key
	// paydesk knows.
	ByInvoice bool
	// Twice: the line names a transaction an earlier line paid out.
	Twice bool
}

// Payout is a payout reference's totals.
type Payout struct {
	Reference string
	Date      time.Time
	Currency  string
	Lines     int
	Gross     decimal.Decimal
	Fees      decimal.Decimal
	Net       decimal.Decimal
}

// Result is a reconciliation.
type Result struct {
	Lines     []Match  // every statement line, in the order read
	Unsettled []Booked // due on the statements read and not on them
	Payouts   []Payout // by reference
	Counts    map[Outcome]int
	Fees      map[string]decimal.Decimal // by currency
	From, To  time.Time                  // the statements' first and last settlement day
}

// Options tune Reconcile.
type Options struct {
	// SettleDays is how many days after its success a transaction must be
	// paid out: one made within the statements' days and due by their last
	// is unsettled when no line pays it.
	SettleDays int
}

// Reconcile matches the statements' lines to what paydesk booked: by
// transaction key, else by invoice and amount (each booked transaction
// paid out once). It changes nothing; the caller reports and records it.
func Reconcile(lines []Line, booked []Booked, o Options) Result {
	res := Result{Counts: map[Outcome]int{}, Fees: map[string]decimal.Decimal{}, Lines: make([]Match, 0, len(lines))}
	byKey := make(map[string]int, len(booked))
	type invAmount struct {
		invoice, currency, amount string
	}
	byInvoice := map[invAmount][]int{}
	for i, b := range booked {
		byKey[b.Key] = i
		k := invAmount{b.Invoice, b.Currency, b.Amount.StringFixed(2)}
		byInvoice[k] = append(byInvoice[k], i)
	}
	used := make([]bool, len(booked))
	payouts := map[string]*Payout{}
	var order []string
	for _, l := range lines {
		m := Match{Line: l, Outcome: Unknown}
		if i, ok := byKey[l.Key]; ok && l.Key != "" {
			b := booked[i]
			m.Booked = &b
			switch {
			case used[i]:
				m.Outcome, m.Twice = Differs, true
			case b.Currency != l.Currency || !b.Amount.Equal(l.Gross):
				m.Outcome = Differs
			default:
				m.Outcome = Matched
			}
			used[i] = true
		} else if l.Invoice != "" {
			for _, i := range byInvoice[invAmount{l.Invoice, l.Currency, l.Gross.StringFixed(2)}] {
				if !used[i] {
					b := booked[i]
					m.Booked, m.Outcome, m.ByInvoice, used[i] = &b, Matched, true, true
					break
				}
			}
		}
		res.Lines = append(res.Lines, m)
		res.Counts[m.Outcome]++
		res.Fees[l.Currency] = res.Fees[l.Currency].Add(l.Fee)
		if res.From.IsZero() || l.Date.Before(res.From) {
			res.From = l.Date
		}
		if l.Date.After(res.To) {
			res.To = l.Date
		}
		ref := l.Payout + "\x00" + l.Currency
		p := payouts[ref]
		if p == nil {
			p = &Payout{Reference: l.Payout, Date: l.Date, Currency: l.Currency}
			payouts[ref] = p
			order = append(order, ref)
		}
		p.Lines++
		p.Gross, p.Fees, p.Net = p.Gross.Add(l.Gross), p.Fees.Add(l.Fee), p.Net.Add(l.Net)
	}
	for _, ref := range order {
		res.Payouts = append(res.Payouts, *payouts[ref])
	}
	sort.SliceStable(res.Payouts, func(i, j int) bool { return res.Payouts[i].Reference < res.Payouts[j].Reference })
	if !res.From.IsZero() {
		last := res.To.AddDate(0, 0, -o.SettleDays)
		for i, b := range booked {
			if used[i] {
				continue
			}
			day := dayOf(b.At)
			if !day.Before(res.From) && !day.After(last) {
				res.Unsettled = append(res.Unsettled, b)
			}
		}
		sort.Slice(res.Unsettled, func(i, j int) bool {
			if !res.Unsettled[i].At.Equal(res.Unsettled[j].At) {
				return res.Unsettled[i].At.Before(res.Unsettled[j].At)
			}
			return res.Unsettled[i].Key < res.Unsettled[j].Key
		})
		res.Counts[Unsettled] = len(res.Unsettled)
	}
	return res
}

// dayOf is the calendar day of t in its own zone, as a UTC midnight (the
// statements' dates are plain days).
func dayOf(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
