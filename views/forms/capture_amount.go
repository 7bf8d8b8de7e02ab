package forms

import (
	"fmt"
	"strings"
	"time"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// captureAmountSpec is the capture of a reservation whose lines paydesk
// does not know (its order never arrived): everything, at the amount the
// operator types, which the gateway checks against what it reserved.
type captureAmountSpec struct {
	res    *store.Reservation
	now    func() time.Time
	amount string
	late   string
	fs     []*field
}

// NewCaptureByAmount is the capture form of a push-only reservation.
func NewCaptureByAmount(r *store.Reservation, mode ops.Mode, now func() time.Time) Form {
	s := &captureAmountSpec{res: r, now: now, late: "no"}
	s.fs = []*field{{key: api.FieldAmountDebit, title: "Amount to capture",
		hint: "the order's total as the shop shows it, e.g. 54.90", value: &s.amount}}
	if r.DaysLeft(now()) < 0 {
		s.fs = append(s.fs, &field{key: "Late", title: "Past the 14-day window", hint: "the provider may revoke the payout",
			value: &s.late, options: []option{{"no, do not send", "no"}, {"yes, capture anyway", "yes"}}})
	}
	return newKit("capture", s, mode)
}

func (s *captureAmountSpec) title() string {
	return "Capture in full by amount · reservation " + Clean(s.res.ReservationNumber) + " · invoice " + Clean(s.res.Invoice)
}

func (s *captureAmountSpec) header() string {
	return "paydesk does not know this reservation's lines: its order never reached the intake or an import.\n" +
		"The amount you type is sent as a full capture; the gateway checks it against what it reserved."
}

func (s *captureAmountSpec) fields() []*field { return s.fs }

func (s *captureAmountSpec) check() check {
	c := check{errs: map[string]string{}, invoice: s.res.Invoice}
	v := strings.TrimSpace(s.amount)
	if v == "" {
		// Not an error yet: the form opens empty.
		c.summary = []string{"Type the amount to capture in full, as the shop's order shows it."}
		return c
	}
	amount, err := api.ParsePlainDecimal(v)
	if err != nil {
		c.errs[api.FieldAmountDebit] = err.Error()
		return c
	}
	plan, err := ops.PlanCaptureByAmount(s.res, amount, s.now())
	if err != nil {
		c.general = append(c.general, err.Error())
		return c
	}
	if plan.PastWindow && s.late != "yes" {
		c.errs["Late"] = fmt.Sprintf("%d days past the 14-day window: say yes to capture anyway", -plan.DaysLeft)
		return c
	}
	cur := s.res.Currency
	c.summary = []string{fmt.Sprintf("Captures %s %s in full — nothing of this reservation remains afterwards", amount.StringFixed(2), cur),
		"Warning: " + ops.ByAmountWarning}
	c.sending = fmt.Sprintf("POST /json/Transaction  deferredkp Pay (full capture, no article groups)\nInvoice %s · AmountDebit %s %s\nReservationNumber = %s",
		Clean(s.res.Invoice), api.WireString(amount), cur, Clean(s.res.ReservationNumber))
	c.intent = ops.CaptureRequest{Reservation: s.res.ReservationNumber, Amount: &amount, LateConfirmed: plan.PastWindow}
	return c
}
