package forms

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// refundSpec: pick a capture, all or an amount, and a reason.
type refundSpec struct {
	captures []*store.Transaction
	pick     string
	amount   string
	reason   string
	text     string
	fs       []*field
}

// NewRefund is the refund form over a reservation's captures (or one
// capture). Captures with nothing left to refund are not offered.
func NewRefund(captures []*store.Transaction, mode ops.Mode) Form {
	return newRefund(captures, mode, "", ops.Reason{Code: ops.ReasonReturn})
}

// newRefund is the refund form with its amount and reason filled in (the
// next step of a return that does not fit by line); nothing is sent until
// the operator confirms.
func newRefund(captures []*store.Transaction, mode ops.Mode, amount string, reason ops.Reason) *kit {
	s := &refundSpec{reason: reason.Code, text: reason.Text, amount: amount}
	var opts []option
	for _, t := range captures {
		if t.Kind != store.KindCapture || !t.Refundable().IsPositive() {
			continue
		}
		s.captures = append(s.captures, t)
		opts = append(opts, option{label: fmt.Sprintf("%s · invoice %s · %s of %s left", t.Key[:min(12, len(t.Key))]+"…",
			Clean(t.InvoiceNumber), t.Refundable().StringFixed(2), t.Amount.StringFixed(2)), value: t.Key})
	}
	if len(s.captures) > 0 {
		s.pick = s.captures[0].Key
		s.fs = append(s.fs, &field{key: api.FieldOriginalKey, title: "Capture", hint: "the capture to refund", value: &s.pick, options: opts})
	}
	s.fs = append(s.fs,
		&field{key: api.FieldAmountCredit, title: "Amount", hint: "an amount such as 12.50, or " + allWord + " for everything left", value: &s.amount},
		&field{key: "Reason", title: "Reason", hint: "why the money goes back (kept in the audit log)", value: &s.reason,
			options: []option{{"return", ops.ReasonReturn}, {"defect", ops.ReasonDefect}, {"goodwill", ops.ReasonGoodwill},
				{"duplicate", ops.ReasonDuplicate}, {"other", ops.ReasonOther}}},
		&field{key: "ReasonText", title: "Reason text", hint: "required for \"other\"; optional otherwise", value: &s.text},
	)
	return newKit("refund", s, mode)
}

func (s *refundSpec) capture() *store.Transaction {
	for _, t := range s.captures {
		if t.Key == s.pick {
			return t
		}
	}
	return nil
}

func (s *refundSpec) title() string {
	if t := s.capture(); t != nil && t.ReservationNumber != "" {
		return "Refund · reservation " + Clean(t.ReservationNumber)
	}
	return "Refund a capture"
}

func (s *refundSpec) header() string {
	t := s.capture()
	if t == nil {
		return ""
	}
	return fmt.Sprintf("Capture %s · invoice number %s\nCaptured %s %s · refunded %s · left %s",
		t.Key, Clean(t.InvoiceNumber), t.Amount.StringFixed(2), t.Currency, t.Refunded.StringFixed(2), t.Refundable().StringFixed(2))
}

func (s *refundSpec) fields() []*field { return s.fs }

// allWord is what a refund's amount field takes for everything left: a
// refund never takes the most by itself, an empty amount is an error.
const allWord = "all"

// emptyRefund is the rule an empty refund amount breaks.
const emptyRefund = "Amount: enter an amount or '" + allWord + "'"

// refundAmount reads a refund's amount field: an amount, or "all" (nil:
// everything left); empty is an error naming the field.
func refundAmount(v string) (*decimal.Decimal, string) {
	switch v = strings.TrimSpace(v); {
	case v == "":
		return nil, emptyRefund
	case strings.EqualFold(v, allWord):
		return nil, ""
	}
	return parseAmount(v)
}

// parseAmount reads an optional amount field: "" is nil.
func parseAmount(v string) (*decimal.Decimal, string) {
	if strings.TrimSpace(v) == "" {
		return nil, ""
	}
	// Plain decimals only, as on the command line: "1e2" is a typo, not 100.
	d, err := api.ParsePlainDecimal(v)
	if err != nil {
		return nil, "must be an amount such as 12.50"
	}
	return &d, ""
}

func (s *refundSpec) check() check {
	c := check{errs: map[string]string{}}
	t := s.capture()
	if t == nil {
		c.general = append(c.general, "no capture with anything left to refund")
		return c
	}
	c.invoice = t.Invoice
	amount, perr := refundAmount(s.amount)
	if perr != "" {
		c.errs[api.FieldAmountCredit] = perr
	}
	reason := ops.Reason{Code: s.reason, Text: strings.TrimSpace(s.text)}
	op, err := ops.PlanRefund(t, amount, reason)
	if err == nil && perr != "" {
		return c
	}
	if err != nil {
		if ve, ok := asValidation(err); ok {
			for _, fe := range ve.Fields {
				k := fe.Field
				if k == "Reason" && s.reason == ops.ReasonOther {
					k = "ReasonText"
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
	kind := "partial refund"
	if op.Amount.Equal(t.Refundable()) {
		kind = "refund of everything left"
	}
	c.summary = []string{titleStyle.Render(fmt.Sprintf("Refund %s %s", op.Amount.StringFixed(2), t.Currency)) + " · " + kind + " · reason " + Clean(reason.String())}
	after := t.Refundable().Sub(op.Amount)
	c.plain = []string{
		fmt.Sprintf("Refund %s %s to %s for invoice %s, reason: %s.", op.Amount.StringFixed(2), t.Currency, who(t.CustomerName), Clean(t.Invoice), Clean(reason.String())),
		fmt.Sprintf("Against the capture with the provider's invoice %s (captured %s %s, refunded so far %s).", Clean(t.InvoiceNumber),
			t.Amount.StringFixed(2), t.Currency, t.Refunded.StringFixed(2)),
		fmt.Sprintf("Stays refundable on that capture afterwards: %s %s.", after.StringFixed(2), t.Currency),
	}
	c.sending = sendingText(op.Request(), false) + "\nReason (audit log only): " + Clean(reason.String())
	c.intent = ops.RefundRequest{Transaction: t.Key, Amount: &op.Amount, Reason: reason}
	c.refund, c.refundCurrency = op.Amount, t.Currency
	return c
}
