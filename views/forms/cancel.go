package forms

import (
	"fmt"

	"paydesk/internal/ops"
	"paydesk/store"
)

// cancelSpec has no fields: what is cancelled follows from the ledger
// (the whole reservation, or the remainder after partial shipments), so the
// form opens on its confirm step.
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
	r := s.res
	left := r.Capturable()
	if r.CapturedAmount.IsPositive() {
		c.summary = []string{fmt.Sprintf("Cancels what was not shipped: %s %s released", amount.StringFixed(2), r.Currency)}
		c.plain = []string{
			fmt.Sprintf("Cancel what was not shipped of reservation %s for %s (invoice %s): %s %s is released, the customer is not charged for it.",
				Clean(r.ReservationNumber), who(r.CustomerName), Clean(r.Invoice), amount.StringFixed(2), r.Currency),
			"Not shipped, so cancelled: " + units(r.Lines, func(i int) int { return left[i] }) + ".",
			fmt.Sprintf("What was shipped stays captured (%s %s); refund it separately if it comes back.", r.CapturedAmount.StringFixed(2), r.Currency),
			"Nothing stays open: the reservation is closed after this.",
		}
	} else {
		c.summary = []string{fmt.Sprintf("Cancels the whole reservation: %s %s released", amount.StringFixed(2), r.Currency)}
		c.plain = []string{
			fmt.Sprintf("Cancel the whole reservation %s for %s (invoice %s): %s %s is released, nothing is charged.",
				Clean(r.ReservationNumber), who(r.CustomerName), Clean(r.Invoice), amount.StringFixed(2), r.Currency),
			"Cancelled: " + units(r.Lines, func(i int) int { return left[i] }) + ".",
			"Nothing stays open: the reservation is closed after this.",
		}
	}
	c.sending = fmt.Sprintf("POST /json/DataRequest  deferredkp CancelReservation\nInvoice %s · Currency %s\nReservationNumber = %s\nReleases %s %s",
		Clean(r.Invoice), r.Currency, Clean(r.ReservationNumber), amount.StringFixed(2), r.Currency)
	c.intent = ops.CancelRequest{Reservation: s.res.ReservationNumber}
	return c
}
