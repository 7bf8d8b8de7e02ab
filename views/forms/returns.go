package forms

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// returnSpec refunds a return by article line: the units that came back,
// an optional extra amount (return shipping) and a reason; the amount
// follows from the captures that shipped the units.
type returnSpec struct {
	res     *store.Reservation
	txs     []*store.Transaction
	shipped []ops.Shipped
	units   []string // per line, as typed ("" for a line with nothing to return)
	extra   string
	reason  string
	text    string
	fs      []*field
	mode    ops.Mode
}

// NewReturn is the refund-a-return form of a reservation; txs are its
// transactions (captures and refunds).
func NewReturn(r *store.Reservation, txs []*store.Transaction, mode ops.Mode) Form {
	s := &returnSpec{res: r, txs: txs, shipped: ops.ShippedBy(r, txs), units: make([]string, len(r.Lines)), reason: ops.ReasonReturn, mode: mode}
	for i, l := range r.Lines {
		left := s.left(l.ArticleNumber)
		if left == 0 {
			continue // nothing shipped that is not refunded yet: not asked
		}
		s.units[i] = "0"
		s.fs = append(s.fs, &field{key: api.PArticleQuantity + "/" + l.ArticleNumber,
			title: fmt.Sprintf("%s · %s: units returned", Clean(l.ArticleNumber), trunc(Clean(l.Title), 36)),
			hint:  fmt.Sprintf("0–%d (shipped and not yet refunded) at %s", left, l.Price.StringFixed(2)), value: &s.units[i],
			units: true, maxUnits: left})
	}
	s.fs = append(s.fs,
		&field{key: api.FieldAmountCredit, title: "Extra amount (" + r.Currency + ")", hint: "optional, on top of the goods: return shipping, a goodwill amount", value: &s.extra},
		&field{key: "Reason", title: "Reason", hint: "why the money goes back (kept in the audit log)", value: &s.reason,
			options: []option{{"return", ops.ReasonReturn}, {"defect", ops.ReasonDefect}, {"goodwill", ops.ReasonGoodwill},
				{"duplicate", ops.ReasonDuplicate}, {"other", ops.ReasonOther}}},
		&field{key: "ReasonText", title: "Reason text", hint: "required for \"other\"; optional otherwise", value: &s.text},
	)
	return newKit("return", s, mode)
}

func (s *returnSpec) left(article string) int {
	n := 0
	for _, sh := range s.shipped {
		n += sh.Left(article)
	}
	return n
}

func (s *returnSpec) title() string {
	return "Refund a return · reservation " + Clean(s.res.ReservationNumber) + " · invoice " + Clean(s.res.Invoice)
}

// header shows per line what was shipped and what came back, and the
// captures a refund can go against.
func (s *returnSpec) header() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-28s %9s %5s %5s %5s\n", "Article", "Title", "Price", "Shipd", "Rfnd", "Left")
	for _, l := range s.res.Lines {
		fmt.Fprintf(&b, "%-10s %-28s %9s %5d %5d %5d\n", trunc(Clean(l.ArticleNumber), 10), trunc(Clean(l.Title), 28), l.Price.StringFixed(2),
			l.Captured, l.Refunded, s.left(l.ArticleNumber))
	}
	if e := s.earlier(); e != "" {
		b.WriteString(e + "\n")
	}
	if len(s.shipped) == 0 {
		b.WriteString(mutedStyle.Render("Nothing of this reservation was captured with known lines: refund a capture by amount instead."))
	} else {
		b.WriteString(mutedStyle.Render(fmt.Sprintf("%d capture(s) shipped it; each returned unit is refunded from the capture that shipped it.", len(s.shipped))))
	}
	return b.String()
}

func (s *returnSpec) fields() []*field { return s.fs }

// earlier lists the refunds made before against this reservation's
// captures: a refund by amount leaves units that can no longer be paid
// back in full, and the operator sees why.
func (s *returnSpec) earlier() string {
	invoice := map[string]string{}
	for _, t := range s.txs {
		if t != nil && t.Kind == store.KindCapture {
			invoice[t.Key] = t.InvoiceNumber
		}
	}
	var parts []string
	for _, t := range s.txs {
		if t == nil || t.Kind != store.KindRefund || !t.Status.IsSuccess() {
			continue
		}
		how := "by amount"
		if len(t.Lines) > 0 {
			var u []string
			for _, l := range t.Lines {
				u = append(u, fmt.Sprintf("%d × %s", l.Quantity, Clean(l.ArticleNumber)))
			}
			how = "by line (" + strings.Join(u, ", ") + ")"
		}
		on := "its capture"
		if n := invoice[t.Original]; n != "" {
			on = "the capture with invoice " + Clean(n)
		}
		parts = append(parts, fmt.Sprintf("  %s %s %s on %s", t.Amount.StringFixed(2), t.Currency, how, on))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Refunded before:\n" + strings.Join(parts, "\n")
}

// byAmount is the next step of a return whose units do not fit in what is
// left to refund of the captures that shipped them (a refund by amount
// came first): a refund by amount of all that is still refundable on the
// capture with the most room among those that shipped the units, filled
// in, not sent.
func (s *returnSpec) byAmount(unitsBy map[string]int, reason ops.Reason) *altStep {
	price := map[string]decimal.Decimal{}
	for _, l := range s.res.Lines {
		price[l.ArticleNumber] = l.Price
	}
	// The capture that shipped returned units it has too little money
	// left for; failing that, the one with the most room.
	var best, short *store.Transaction
	for _, sh := range s.shipped {
		c := sh.Capture
		shipped, tight := false, false
		for a, n := range unitsBy {
			if n <= 0 || sh.Left(a) == 0 {
				continue
			}
			shipped = true
			if c.Refundable().LessThan(price[a].Mul(decimal.NewFromInt(int64(min(n, sh.Left(a)))))) {
				tight = true
			}
		}
		if !shipped || !c.Refundable().IsPositive() {
			continue
		}
		if best == nil || c.Refundable().GreaterThan(best.Refundable()) {
			best = c
		}
		if tight && (short == nil || c.Refundable().GreaterThan(short.Refundable())) {
			short = c
		}
	}
	if short != nil {
		best = short
	}
	if best == nil {
		return nil
	}
	amount, mode := best.Refundable().StringFixed(2), s.mode
	return &altStep{key: "ctrl+r",
		label: fmt.Sprintf("ctrl+r opens a refund by amount of %s %s, all that is still refundable on the capture with invoice %s (filled in, not sent).",
			amount, best.Currency, Clean(best.InvoiceNumber)),
		open: func() *kit { return newRefund([]*store.Transaction{best}, mode, amount, reason) }}
}

func (s *returnSpec) check() check {
	c := check{errs: map[string]string{}, invoice: s.res.Invoice}
	unitsBy := map[string]int{}
	for i, l := range s.res.Lines {
		if s.units[i] == "" {
			continue
		}
		v := strings.TrimSpace(s.units[i])
		n, err := strconv.Atoi(v)
		if err != nil {
			c.errs[api.PArticleQuantity+"/"+l.ArticleNumber] = "must be a whole number of units (0 when none came back)"
			continue
		}
		unitsBy[l.ArticleNumber] = n
	}
	extra := decimal.Zero
	if e, perr := parseAmount(s.extra); perr != "" {
		c.errs[api.FieldAmountCredit] = perr
	} else if e != nil {
		extra = *e
	}
	reason := ops.Reason{Code: s.reason, Text: strings.TrimSpace(s.text)}
	plan, err := ops.PlanReturn(s.res, s.txs, unitsBy, extra, reason)
	if err != nil {
		if ve, ok := asValidation(err); ok {
			for _, fe := range ve.Fields {
				if fe.Field == api.FieldAmountCredit && (fe.Group != "" || strings.Contains(fe.Rule, "left to refund")) {
					c.alt = s.byAmount(unitsBy, reason)
				}
			}
			known := map[string]bool{}
			for _, f := range s.fs {
				known[f.key] = true
			}
			for _, fe := range ve.Fields {
				k := fieldKey(fe)
				switch {
				case fe.Field == "Reason" && s.reason == ops.ReasonOther:
					k = "ReasonText"
				case fe.Field == api.PArticleQuantity && fe.Group == "":
					// "choose the returned units": a hint while nothing is chosen
					c.summary = append(c.summary, mutedStyle.Render("Type the units that came back; the amount follows from the captures that shipped them."))
					continue
				}
				if !known[k] {
					c.general = append(c.general, fe.Rule) // no field of its own: said under the fields
					continue
				}
				if _, dup := c.errs[k]; !dup {
					c.errs[k] = fe.Rule
				}
			}
		} else {
			c.general = append(c.general, err.Error())
		}
		return c
	}
	if len(c.errs) > 0 {
		return c
	}
	r := s.res
	cur := r.Currency
	c.summary = []string{titleStyle.Render(fmt.Sprintf("Refund %s %s", plan.Total.StringFixed(2), cur)) +
		fmt.Sprintf(" · %d refund(s), one per capture that shipped the units", len(plan.Parts))}
	for _, pt := range plan.Parts {
		c.summary = append(c.summary, "  "+partText(pt, cur))
	}
	returned := units(r.Lines, func(i int) int { return unitsBy[r.Lines[i].ArticleNumber] })
	c.plain = []string{
		fmt.Sprintf("Refund %s %s to %s for invoice %s, reason: %s.", plan.Total.StringFixed(2), cur, who(r.CustomerName), Clean(r.Invoice), Clean(reason.String())),
		"Returned: " + returned + ".",
	}
	if len(plan.Parts) > 1 {
		c.plain = append(c.plain, fmt.Sprintf("This sends %d refunds, one against each capture that shipped the units:", len(plan.Parts)))
	} else {
		c.plain = append(c.plain, "This sends one refund, against the capture that shipped the units:")
	}
	var sending []string
	for i, pt := range plan.Parts {
		c.plain = append(c.plain, fmt.Sprintf("  %d. %s; afterwards %s %s stays refundable on it.", i+1, partText(pt, cur),
			pt.Capture.Refundable().Sub(pt.Amount).StringFixed(2), cur))
		amt := pt.Amount
		op, _ := ops.PlanRefund(pt.Capture, &amt, reason)
		sending = append(sending, fmt.Sprintf("Refund %d of %d:\n%s", i+1, len(plan.Parts), sendingText(op.Request(), false)))
	}
	c.sending = strings.Join(sending, "\n") + "\nReason (audit log only): " + Clean(reason.String())
	c.intent = ops.ReturnRequest{Reservation: r.ReservationNumber, Units: unitsBy, Extra: extra, Reason: reason}
	c.refund, c.refundCurrency = plan.Total, cur
	return c
}

func partText(pt ops.ReturnPart, cur string) string {
	var u []string
	for _, l := range pt.Lines {
		u = append(u, fmt.Sprintf("%d × %s", l.Quantity, Clean(l.ArticleNumber)))
	}
	t := fmt.Sprintf("%s %s against the capture with invoice %s (%s", pt.Amount.StringFixed(2), cur, Clean(pt.Capture.InvoiceNumber), strings.Join(u, ", "))
	if pt.Extra.IsPositive() {
		t += " + " + pt.Extra.StringFixed(2) + " extra"
	}
	return t + ")"
}
