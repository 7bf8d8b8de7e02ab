package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// submission is one operation on its way: the typed request and what the
// journal and the audit log say about it.
type submission struct {
	op             api.Operation
	audit          string // audit action: capture, cancel, update, refund, giftcard-pay, …
	target         string
	reservationKey string
	amount         decimal.Decimal
	currency       string
	reason         string
	lines          []api.CaptureLine // a refund by line: the units it pays back
	parcels        []store.Parcel    // a capture: what it shipped
}

// submit is the one path every operation takes: validate → refuse a twin →
// journal → send → settle → audit. Nothing is retried.
func (s *Service) submit(ctx context.Context, sub submission) (Result, error) {
	req := sub.op.Request()
	svc := req.Service()
	res := Result{Action: svc.Action, Service: svc.Name, Target: sub.target, Invoice: req.Invoice,
		Currency: sub.currency, Amount: sub.amount}
	if res.Currency == "" {
		res.Currency = req.Currency
	}
	if err := sub.op.Validate(s.cfg.Gateway.Rules()); err != nil {
		return res, err
	}
	if s.cfg.PushURL != "" && req.PushURL == "" {
		req.PushURL = s.cfg.PushURL
	}

	twin := svc.Action + "\x00" + sub.target
	if err := s.claim(ctx, twin, svc.Action, sub.target); err != nil {
		return res, err
	}
	defer s.release(twin)

	if note := approvalNote(ctx); note != "" {
		sub.reason = strings.TrimPrefix(sub.reason+"; "+note, "; ")
	}
	now := s.cfg.Now()
	// The audit entry is written with the journal entry, before sending:
	// an operation cut short after it left (the process killed, the disk
	// full) is in the audit log all the same. Settling completes it.
	id, err := s.cfg.Store.BeginOp(ctx, store.PendingOp{Created: now, Updated: now, Operator: s.cfg.Operator,
		Action: svc.Action, Service: svc.Name, Target: sub.target, ReservationKey: sub.reservationKey,
		Invoice: req.Invoice, Currency: res.Currency, Amount: sub.amount, Request: req, Lines: sub.lines, Parcels: sub.parcels, State: store.OpPending,
		Audit: &store.AuditEntry{Time: now, Operator: s.cfg.Operator, Action: sub.audit, Target: sub.target, Amount: sub.amount,
			Currency: res.Currency, Reason: sub.reason}})
	if busy := (*store.BusyError)(nil); errors.As(err, &busy) {
		// Another process (another operator's console, a batch) holds it.
		return res, fmt.Errorf("%s %s: %w (%s)", svc.Action, sub.target, ErrAlreadyOpen, busy.Op.Holder())
	}
	if err != nil {
		// Nothing was sent: without a journal entry paydesk does not send.
		return res, fmt.Errorf("%s %s: journal the operation before sending: %w", svc.Action, sub.target, err)
	}
	res.OpID = id

	resp, sendErr := s.cfg.Gateway.Do(ctx, req)
	// Once sent, what came back (or that nothing did) is journaled even
	// when ctx ended meanwhile (an operator's Ctrl-C, a closed console):
	// an operation the gateway may have done is never left pending.
	rec := context.WithoutCancel(ctx)
	res, settleErr := s.settle(rec, res, resp, sendErr)
	if err := s.auditResult(rec, sub, res, sendErr); err != nil {
		res.Warning = err.Error()
	}
	if settleErr != nil {
		return res, settleErr
	}
	if sendErr != nil {
		return res, &OperationError{Result: res, Err: sendErr}
	}
	return res, nil
}

// claim refuses a second identical operation while one is open: in this
// process (a double key press) or in the journal (an earlier run whose
// outcome is unknown).
func (s *Service) claim(ctx context.Context, twin, action, target string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inFlight[twin] {
		return fmt.Errorf("%s %s: %w (being sent now)", action, target, ErrAlreadyOpen)
	}
	open, err := s.cfg.Store.Ops(ctx, store.OpPending, store.OpSent, store.OpOutcomeUnknown)
	if err != nil {
		return fmt.Errorf("%s %s: read the operation journal: %w", action, target, err)
	}
	for _, o := range open {
		if o.Action == action && o.Target == target {
			return fmt.Errorf("%s %s: %w (%s)", action, target, ErrAlreadyOpen, o.Holder())
		}
	}
	s.inFlight[twin] = true
	return nil
}

func (s *Service) release(twin string) {
	s.mu.Lock()
	delete(s.inFlight, twin)
	s.mu.Unlock()
}

// settle records what came back. An answer is applied to the cache; a
// request that never left or that the gateway refused unread fails; any
// other failure after sending leaves the outcome unknown.
func (s *Service) settle(ctx context.Context, res Result, resp *api.Response, sendErr error) (Result, error) {
	st := s.cfg.Store
	if resp != nil {
		fillFromResponse(&res, resp)
		op, err := st.ApplyResponse(ctx, res.OpID, resp)
		if err != nil {
			// The gateway acted on it (or refused it) but the cache does
			// not know: for paydesk the outcome is unknown until the push
			// settles the journal entry or the operator resolves it, and
			// the reason says what really happened (a full disk, not a
			// failure at the gateway).
			res.State = store.OpOutcomeUnknown
			answer := res.StatusText() + keyText(res.Key)
			if answer == "" {
				answer = "an answer"
			}
			res.Message = fmt.Sprintf("the gateway answered %s, but the cache could not record it: %v", answer, err)
			if merr := st.MarkOutcomeUnknown(ctx, res.OpID, res.Message); merr != nil {
				res.Message += fmt.Sprintf(" (nor mark the journal entry: %v)", merr)
			}
			return res, &OperationError{Result: res, Err: errors.New(res.Message)}
		}
		if op != nil {
			res.State = op.State
		} else {
			res.State = stateOf(resp.Status.Code.Code)
		}
		if sendErr != nil {
			res.Message = sendErr.Error()
		}
		return res, nil
	}
	var notSent *api.NotSentError
	switch {
	case sendErr == nil:
		// A client that answers neither: treat as unknown, never as done.
		sendErr = errors.New("no answer")
		fallthrough
	case !errors.As(sendErr, &notSent) && !errors.Is(sendErr, api.ErrAccessDenied) && !errors.Is(sendErr, api.ErrBadRequest):
		res.State = store.OpOutcomeUnknown
		res.Message = sendErr.Error()
		if err := st.MarkOutcomeUnknown(ctx, res.OpID, sendErr.Error()); err != nil {
			return res, fmt.Errorf("%s %s: mark outcome unknown: %w", res.Action, res.Target, err)
		}
	default:
		res.State = store.OpFailed
		res.Message = sendErr.Error()
		if err := st.FailOp(ctx, res.OpID, sendErr.Error()); err != nil {
			return res, fmt.Errorf("%s %s: mark failed: %w", res.Action, res.Target, err)
		}
	}
	return res, nil
}

func stateOf(code int) store.OpState {
	switch {
	case code == api.StatusSuccess:
		return store.OpSettled
	case api.IsPending(code):
		return store.OpSent
	}
	return store.OpFailed
}

func fillFromResponse(res *Result, resp *api.Response) {
	res.Key = resp.Key
	res.Status = resp.Status.Code.Code
	res.SubCode = resp.Status.SubCodeString()
	res.InvoiceNumber = resp.Param(api.PInvoiceNumber)
	if resp.AmountDebit != nil {
		res.Amount = resp.AmountDebit.Dec()
	} else if resp.AmountCredit != nil {
		res.Amount = resp.AmountCredit.Dec()
	}
	if ra := resp.RequiredAction; ra != nil {
		res.RedirectURL = ra.RedirectURL
		if d := ra.PayRemainderDetails; d != nil {
			res.Remainder = d.RemainderAmount.Dec()
			res.GroupTransaction = d.GroupTransaction
		}
	}
	if res.GroupTransaction == "" {
		res.GroupTransaction = resp.Related(api.RelationPartialPayment)
	}
	res.Errors = resp.RequestErrors.All()
}

// auditText is the audit log's result column.
func auditText(res Result, sendErr error) string {
	switch res.State {
	case store.OpOutcomeUnknown:
		return "outcome unknown: " + oneLine(res.Message)
	case store.OpFailed:
		if res.Status != 0 {
			return "failed: " + res.StatusText() + keyText(res.Key)
		}
		return "failed: " + oneLine(res.Message)
	}
	t := res.StatusText()
	if res.InvoiceNumber != "" {
		t += " invoice " + res.InvoiceNumber
	}
	if res.Remainder.IsPositive() {
		t += " remainder " + res.Remainder.StringFixed(2)
	}
	return t + keyText(res.Key)
}

func keyText(k string) string {
	if k == "" {
		return ""
	}
	return " key " + k
}

func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// auditResult completes the operation's audit entry, written when it was
// journaled, with what came back.
func (s *Service) auditResult(ctx context.Context, _ submission, res Result, sendErr error) error {
	if err := s.cfg.Store.CompleteAudit(ctx, res.OpID, auditText(res, sendErr)); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// audit appends to the audit log. A failing audit write must not hide the
// operation's own outcome, so callers report it beside it, not instead.
func (s *Service) audit(ctx context.Context, e store.AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = s.cfg.Now()
	}
	e.Operator = s.cfg.Operator
	if _, err := s.cfg.Store.AppendAudit(ctx, e); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}
