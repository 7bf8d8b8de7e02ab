package forms

import (
	"fmt"

	"paydesk/internal/ops"
	"paydesk/store"
)

// cancelSpec has no fields: what is cancelled follows from the ledger
// (the whole reservation, or the remainder after partial shipments).
type cancelSpec struct{ res *store.Reservation }

// NewCancel is the cancel form: whole reservation or remainder.
func NewCancel(r *store.Reservation, mode ops.Mode) Form {
	return newKit("cancel", &cancelSpec{res: r}, mode)
}

func (s *cancelSpec) title() string {
	return "Cancel reservation " + Clean(s.res.ReservationNumber) + " · invoice " + Clean(s.res.Invoice)
}
func (s *cancelSpec) header() string   { return lineTable(s.res) }
func (s *cancelSpec) fields() []*field { return nil }

func (s *cancelSpec) check() check {
	c := check{errs: map[string]string{}, invoice: s.res.Invoice}
	amount, err := ops.PlanCancel(s.res)
	if err != nil {
		c.general = append(c.general, err.Error())
		return c
	}
	what := "the WHOLE reservation"
	if s.res.CapturedAmount.IsPositive() {
		what = "the REMAINDER (what was not shipped)"
	}
	c.summary = []string{fmt.Sprintf("Cancels %s: %s %s released", what, amount.StringFixed(2), s.res.Currency)}
	c.sending = fmt.Sprintf("POST /json/DataRequest  deferredkp CancelReservation\nInvoice %s · Currency %s\nReservationNumber = %s\nReleases %s %s (%s)",
		Clean(s.res.Invoice), s.res.Currency, Clean(s.res.ReservationNumber), amount.StringFixed(2), s.res.Currency, what)
	c.intent = ops.CancelRequest{Reservation: s.res.ReservationNumber}
	return c
}
