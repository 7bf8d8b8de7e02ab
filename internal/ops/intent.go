package ops

import (
	"context"
	"fmt"

	"paydesk/api"
	"paydesk/store"
)

// Intent is an operation a form asks for. The console runs it as a
// tea.Cmd (never inside Update); the command line calls the Service
// methods directly. Both end in the same Service method.
type Intent interface {
	Run(ctx context.Context, s *Service) (Result, error)
	// Describe says in one line what will be done, for confirmations.
	Describe() string
}

// Run captures.
func (c CaptureRequest) Run(ctx context.Context, s *Service) (Result, error) {
	return s.Capture(ctx, c)
}

// Describe says what the capture takes.
func (c CaptureRequest) Describe() string {
	if c.Quantities == nil {
		return "capture everything remaining of " + c.Reservation
	}
	return "capture part of " + c.Reservation
}

// Run cancels.
func (c CancelRequest) Run(ctx context.Context, s *Service) (Result, error) { return s.Cancel(ctx, c) }

// Describe says what is cancelled.
func (c CancelRequest) Describe() string { return "cancel " + c.Reservation }

// Run updates.
func (u UpdateRequest) Run(ctx context.Context, s *Service) (Result, error) { return s.Update(ctx, u) }

// Describe says what is updated.
func (u UpdateRequest) Describe() string { return "update " + u.Reservation }

// Run refunds.
func (r RefundRequest) Run(ctx context.Context, s *Service) (Result, error) { return s.Refund(ctx, r) }

// Describe says what is refunded.
func (r RefundRequest) Describe() string { return "refund " + r.Transaction }

// Run pays with a gift card.
func (g GiftCardPayRequest) Run(ctx context.Context, s *Service) (Result, error) {
	return s.GiftCardPay(ctx, g)
}

// Describe says what is paid.
func (g GiftCardPayRequest) Describe() string {
	return "pay " + g.Amount.StringFixed(2) + " with " + g.ServiceCode + " card " + MaskCard(g.Card.Number)
}

// Run refunds a gift card payment.
func (g GiftCardRefundRequest) Run(ctx context.Context, s *Service) (Result, error) {
	return s.GiftCardRefund(ctx, g)
}

// Describe says what is refunded.
func (g GiftCardRefundRequest) Describe() string { return "refund gift card payment " + g.Transaction }

// ReserveRequest sends a new test reservation.
type ReserveRequest struct{ Reserve api.Reserve }

// Run reserves.
func (r ReserveRequest) Run(ctx context.Context, s *Service) (Result, error) {
	return s.Reserve(ctx, r.Reserve)
}

// Describe says what is reserved.
func (r ReserveRequest) Describe() string { return "new test reservation " + r.Reserve.Invoice }

// CustomerStepRequest approves or declines a test reservation's customer
// step in the sandbox and waits briefly for the Reserve push.
type CustomerStepRequest struct {
	Reservation string // key
	Approve     bool
}

// Run presses the sandbox's button and waits for the push that carries
// the reservation number (or the decline).
func (c CustomerStepRequest) Run(ctx context.Context, s *Service) (Result, error) {
	res := Result{Action: "customer step", Target: c.Reservation}
	if err := s.CustomerStep(ctx, c.Reservation, c.Approve); err != nil {
		return res, err
	}
	r, ok, err := s.Waiter().Reservation(ctx, c.Reservation, DefaultWait)
	if err != nil {
		return res, err
	}
	if r != nil {
		res.Key, res.Status, res.SubCode = r.Key, r.Status.Code, r.Status.SubCode
		res.Invoice, res.Currency, res.Amount = r.Invoice, r.Currency, r.Amount()
	}
	switch {
	case !ok:
		res.State = store.OpSent
		res.Message = fmt.Sprintf("the customer step is done; the push has not arrived within %s (it settles by itself)", DefaultWait)
	case r.State() == store.StateDeclined:
		res.State = store.OpFailed
		res.Message = "declined by the customer step or the risk check (" + r.Status.Text() + ")"
	default:
		res.State = store.OpSettled
		res.Target = r.ReservationNumber
		res.Message = "reserved: reservation number " + r.ReservationNumber
	}
	return res, nil
}

// Describe says which button is pressed.
func (c CustomerStepRequest) Describe() string {
	if c.Approve {
		return "approve the customer step of " + c.Reservation
	}
	return "decline the customer step of " + c.Reservation
}

// ResolveRequest closes an unknown outcome by hand.
type ResolveRequest struct {
	OpID uint64
	Note string
}

// Run resolves.
func (r ResolveRequest) Run(ctx context.Context, s *Service) (Result, error) {
	err := s.Resolve(ctx, r.OpID, r.Note)
	res := Result{Action: "resolve", OpID: r.OpID, State: store.OpResolved, Message: "resolved by hand"}
	if err != nil {
		res.State = ""
	}
	return res, err
}

// Describe says what is resolved.
func (r ResolveRequest) Describe() string { return fmt.Sprintf("resolve operation %d", r.OpID) }

// AskRequest settles an open operation by asking the gateway what became
// of it (Service.Ask): a lookup, never the request sent again.
type AskRequest struct{ OpID uint64 }

// Run asks.
func (a AskRequest) Run(ctx context.Context, s *Service) (Result, error) { return s.Ask(ctx, a.OpID) }

// Describe says what is asked.
func (a AskRequest) Describe() string {
	return fmt.Sprintf("ask the gateway about operation %d", a.OpID)
}
