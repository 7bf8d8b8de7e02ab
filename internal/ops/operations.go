package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// CaptureRequest asks to capture a shipment.
type CaptureRequest struct {
	Reservation string         // key or reservation number
	Quantities  map[string]int // article number → units; nil: everything remaining
	// LateConfirmed is the operator's second confirmation for a capture past
	// the 14-day shipment window.
	LateConfirmed bool
	// Amount is a full capture by amount, typed by the operator, for a
	// reservation whose lines paydesk does not know (seen only in a push:
	// its order never arrived). The gateway checks it against what it
	// reserved. Refused when the lines are known.
	Amount *decimal.Decimal
	// Note is kept with the operation in the audit log beside the lines
	// (a batch's id, rows, parcels and tracking numbers).
	Note string
	// Parcels are kept on the capture's transaction (from a manifest).
	Parcels []store.Parcel
}

// Capture announces a shipment (deferred Pay): full when it takes all that
// remains, else partial with one article group per shipped line.
func (s *Service) Capture(ctx context.Context, cr CaptureRequest) (Result, error) {
	if err := s.Check(ctx, access.Capture); err != nil {
		return Result{Action: api.ActionPay, Service: api.ServiceDeferred, Target: cr.Reservation}, fmt.Errorf("capture %s: %w", cr.Reservation, err)
	}
	r, err := s.reservation(ctx, cr.Reservation)
	if err != nil {
		return Result{Action: api.ActionPay, Service: api.ServiceDeferred, Target: cr.Reservation}, err
	}
	var plan CapturePlan
	if cr.Amount != nil {
		plan, err = PlanCaptureByAmount(r, *cr.Amount, s.cfg.Now())
	} else {
		plan, err = PlanCapture(r, cr.Quantities, s.cfg.Now())
	}
	if err != nil {
		return Result{Action: api.ActionPay, Service: api.ServiceDeferred, Target: r.ReservationNumber}, err
	}
	if plan.PastWindow && !cr.LateConfirmed {
		return Result{Action: api.ActionPay, Service: api.ServiceDeferred, Target: r.ReservationNumber}, fmt.Errorf(
			"capture %s: %w: the reservation is %d days past the 14-day shipment window; the provider may revoke the payout",
			r.ReservationNumber, ErrConfirmRequired, -plan.DaysLeft)
	}
	reason := captureNote(plan)
	if note := strings.TrimSpace(cr.Note); note != "" {
		reason += "; " + note
	}
	return s.submit(ctx, submission{op: plan.Op(r.Currency), audit: "capture", target: r.ReservationNumber,
		reservationKey: r.Key, amount: plan.Amount, currency: r.Currency, reason: reason, parcels: cr.Parcels})
}

func captureNote(p CapturePlan) string {
	switch {
	case p.ByAmount:
		return "full, by amount (lines not known to paydesk)"
	case p.Full:
		return "full"
	}
	parts := make([]string, 0, len(p.Lines))
	for _, l := range p.Lines {
		parts = append(parts, fmt.Sprintf("%s=%d", l.ArticleNumber, l.Quantity))
	}
	note := "partial " + strings.Join(parts, " ")
	if p.PastWindow {
		note += " (past the 14-day window, confirmed)"
	}
	return note
}

// CancelRequest asks to cancel a reservation, or what remains of it.
type CancelRequest struct {
	Reservation string
	// Confirm is the invoice number typed by the operator; required against
	// a live gateway.
	Confirm string
}

// Cancel cancels the whole reservation, or the remainder after partial
// shipments.
func (s *Service) Cancel(ctx context.Context, cr CancelRequest) (Result, error) {
	r, err := s.reservation(ctx, cr.Reservation)
	if err != nil {
		return Result{Action: api.ActionCancelReservation, Target: cr.Reservation}, err
	}
	// What remains after a shipment is the warehouse's to cancel; a whole
	// reservation is the customer's business.
	act := access.Cancel
	if r.CapturedAmount.IsPositive() {
		act = access.CancelRest
	}
	if err := s.Check(ctx, act); err != nil {
		return Result{Action: api.ActionCancelReservation, Target: r.ReservationNumber}, fmt.Errorf("cancel %s: %w", r.ReservationNumber, err)
	}
	amount, err := PlanCancel(r)
	if err != nil {
		return Result{Action: api.ActionCancelReservation, Target: r.ReservationNumber}, err
	}
	if err := s.liveConfirm("cancel "+r.ReservationNumber, r.Invoice, cr.Confirm); err != nil {
		return Result{Action: api.ActionCancelReservation, Target: r.ReservationNumber}, err
	}
	what := "whole"
	if r.CapturedAmount.IsPositive() {
		what = "remainder"
	}
	op := api.CancelReservation{Currency: r.Currency, Invoice: r.Invoice, ReservationNumber: r.ReservationNumber}
	return s.submit(ctx, submission{op: op, audit: "cancel", target: r.ReservationNumber, reservationKey: r.Key,
		amount: amount, currency: r.Currency, reason: what})
}

// UpdateRequest asks to change a reservation.
type UpdateRequest struct {
	Reservation string
	Change      UpdateChange
}

// Update changes articles and addresses; it refuses to raise the amount
// before anything is sent. A 690 (risk check) leaves the reservation as it
// was and comes back as an *OperationError wrapping *api.RejectedError.
func (s *Service) Update(ctx context.Context, ur UpdateRequest) (Result, error) {
	if err := s.Check(ctx, access.Update); err != nil {
		return Result{Action: api.ActionUpdateReservation, Target: ur.Reservation}, fmt.Errorf("update %s: %w", ur.Reservation, err)
	}
	r, err := s.reservation(ctx, ur.Reservation)
	if err != nil {
		return Result{Action: api.ActionUpdateReservation, Target: ur.Reservation}, err
	}
	op, err := PlanUpdate(r, ur.Change)
	if err != nil {
		return Result{Action: api.ActionUpdateReservation, Target: r.ReservationNumber}, err
	}
	amount := r.Amount()
	if len(op.Articles) > 0 {
		amount = api.ArticlesTotal(op.Articles)
	}
	return s.submit(ctx, submission{op: op, audit: "update", target: r.ReservationNumber, reservationKey: r.Key,
		amount: amount, currency: r.Currency, reason: updateNote(ur.Change)})
}

func updateNote(ch UpdateChange) string {
	var parts []string
	if len(ch.Articles) > 0 {
		parts = append(parts, fmt.Sprintf("%d lines", len(ch.Articles)))
	}
	if !ch.Billing.IsZero() {
		parts = append(parts, "billing address")
	}
	if !ch.Shipping.IsZero() {
		parts = append(parts, "shipping address")
	}
	return strings.Join(parts, ", ")
}

// RefundRequest asks to refund a deferred-invoice capture.
type RefundRequest struct {
	Transaction string           // the capture's key
	Amount      *decimal.Decimal // nil: all that is left
	Reason      Reason
	Confirm     string // the invoice number, against a live gateway
	// Lines are the returned units this refund pays back (a refund by
	// line); kept in the journal and on the refund, never sent.
	Lines []api.CaptureLine
}

// Refund refunds a capture in full or in part, never above what is left.
func (s *Service) Refund(ctx context.Context, rr RefundRequest) (Result, error) {
	if err := s.Check(ctx, access.Refund); err != nil {
		return Result{Action: api.ActionRefund, Target: rr.Transaction}, fmt.Errorf("refund %s: %w", rr.Transaction, err)
	}
	t, err := s.transaction(ctx, rr.Transaction)
	if err != nil {
		return Result{Action: api.ActionRefund, Target: rr.Transaction}, err
	}
	op, err := PlanRefund(t, rr.Amount, rr.Reason)
	if err != nil {
		return Result{Action: api.ActionRefund, Target: t.Key}, err
	}
	if err := s.liveConfirm("refund "+t.Key, t.Invoice, rr.Confirm); err != nil {
		return Result{Action: api.ActionRefund, Target: t.Key}, err
	}
	keep := rr
	keep.Transaction, keep.Amount = t.Key, &op.Amount
	if res, held, err := s.refundGate(ctx, approvalRefund, t.Key, t.Currency, "reason "+rr.Reason.String(), op.Amount, keep); held || err != nil {
		return res, err
	}
	return s.submit(ctx, submission{op: op, audit: "refund", target: t.Key, reservationKey: t.ReservationKey,
		amount: op.Amount, currency: t.Currency, reason: rr.Reason.String(), lines: rr.Lines})
}

// GiftCardPayRequest asks to pay with a gift card.
type GiftCardPayRequest struct {
	ServiceCode string
	Card        api.Card
	Amount      decimal.Decimal
	Invoice     string // "" makes one up
	Currency    string // "" is the service's currency
	LastName    string
	Email       string
	// GroupTransaction pays (part of) the remainder of an earlier partial
	// payment (PayRemainder).
	GroupTransaction string
}

// GiftCardPay pays with a gift card. When the balance is short the result
// is partial (S003) and carries the redirect and the remainder.
func (s *Service) GiftCardPay(ctx context.Context, gr GiftCardPayRequest) (Result, error) {
	if err := s.Check(ctx, access.Payment); err != nil {
		return Result{Action: api.ActionPay, Target: gr.Invoice}, fmt.Errorf("gift card payment: %w", err)
	}
	if gr.Currency == "" {
		gr.Currency = s.cfg.Currency
	}
	if gr.Invoice == "" {
		gr.Invoice = "GC-" + s.cfg.Now().UTC().Format("20060102-150405.000")
	}
	op := api.GiftCardPay{ServiceCode: gr.ServiceCode, Currency: gr.Currency, Invoice: gr.Invoice, Amount: gr.Amount,
		Card: gr.Card, LastName: gr.LastName, Email: gr.Email, GroupTransaction: gr.GroupTransaction}
	target := gr.Invoice
	audit := "giftcard-pay"
	if gr.GroupTransaction != "" {
		target = gr.GroupTransaction
		audit = "giftcard-pay-remainder"
	}
	return s.submit(ctx, submission{op: op, audit: audit, target: target, amount: gr.Amount, currency: gr.Currency,
		reason: gr.ServiceCode + " card " + MaskCard(gr.Card.Number)})
}

// GiftCardRefundRequest asks to refund a gift card payment.
type GiftCardRefundRequest struct {
	Transaction string
	Change      GiftCardRefundChange
	Confirm     string // the invoice, against a live gateway
}

// GiftCardRefund refunds a gift card payment, checking the partial refund
// conditions before sending.
func (s *Service) GiftCardRefund(ctx context.Context, gr GiftCardRefundRequest) (Result, error) {
	if err := s.Check(ctx, access.Refund); err != nil {
		return Result{Action: api.ActionRefund, Target: gr.Transaction}, fmt.Errorf("gift card refund %s: %w", gr.Transaction, err)
	}
	t, err := s.transaction(ctx, gr.Transaction)
	if err != nil {
		return Result{Action: api.ActionRefund, Target: gr.Transaction}, err
	}
	op, err := PlanGiftCardRefund(t, gr.Change, s.cfg.Merchant.PartialRefundsFor(t.Provider))
	if err != nil {
		return Result{Action: api.ActionRefund, Target: t.Key}, err
	}
	if err := s.liveConfirm("gift card refund "+t.Key, t.Invoice, gr.Confirm); err != nil {
		return Result{Action: api.ActionRefund, Target: t.Key}, err
	}
	keep := gr
	keep.Transaction = t.Key
	if res, held, err := s.refundGate(ctx, approvalGiftCardRefund, t.Key, t.Currency, "gift card, reason "+gr.Change.Reason.String(), op.Amount, keep); held || err != nil {
		return res, err
	}
	return s.submit(ctx, submission{op: op, audit: "giftcard-refund", target: t.Key, amount: op.Amount,
		currency: t.Currency, reason: gr.Change.Reason.String()})
}

// MaskCard shows the last four digits of a card number.
func MaskCard(n string) string {
	if len(n) <= 4 {
		return n
	}
	return strings.Repeat("•", 4) + n[len(n)-4:]
}

// Resolve closes an operation whose outcome is unknown by hand, with the
// operator's note (what the gateway's back office showed).
func (s *Service) Resolve(ctx context.Context, id uint64, note string) error {
	if err := s.Check(ctx, access.Resolve); err != nil {
		return fmt.Errorf("resolve operation %d: %w", id, err)
	}
	op, err := s.cfg.Store.Op(ctx, id)
	if err != nil {
		return fmt.Errorf("resolve operation %d: %w", id, err)
	}
	if !op.State.IsOpen() {
		return fmt.Errorf("resolve operation %d: %w: it is %s", id, ErrNotPossible, op.State)
	}
	if strings.TrimSpace(note) == "" {
		return fmt.Errorf("resolve operation %d: a note is required (what did the gateway's back office show?)", id)
	}
	if err := s.cfg.Store.ResolveOp(ctx, id, note); err != nil {
		return fmt.Errorf("resolve operation %d: %w", id, err)
	}
	return s.audit(ctx, store.AuditEntry{Action: "resolve", Target: op.Target, Amount: op.Amount, Currency: op.Currency,
		Result: "resolved by hand (" + string(op.State) + " " + op.Action + ")", Reason: note, OpID: id})
}

// liveConfirm is the guard against a live gateway: the operator types the
// invoice number (as k9s asks for a name before a delete).
func (s *Service) liveConfirm(what, invoice, typed string) error {
	if !s.cfg.Mode.IsLive() {
		return nil
	}
	if strings.TrimSpace(typed) != invoice {
		return fmt.Errorf("%s: %w: against a live gateway type the invoice number %q to confirm", what, ErrConfirmRequired, invoice)
	}
	return nil
}

func (s *Service) reservation(ctx context.Context, ref string) (*store.Reservation, error) {
	if strings.TrimSpace(ref) == "" {
		return nil, errors.New("no reservation given")
	}
	// The store's error names the reference and what it was looked up as.
	return s.cfg.Store.Reservation(ctx, ref)
}

func (s *Service) transaction(ctx context.Context, key string) (*store.Transaction, error) {
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("no transaction given")
	}
	// The store's error names the reference and what it was looked up as.
	return s.cfg.Store.ResolveTransaction(ctx, key)
}
