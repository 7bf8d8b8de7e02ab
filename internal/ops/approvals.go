package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// Four-eyes: a refund (a capture's, a gift card payment's, a return's)
// above Config.ApprovalOver is not sent; it is kept as an approval request
// (store/approvals.go) that another user allowed to approve decides. An
// approval sends it through the usual path (journal, send, settle, audit;
// an unknown outcome stays unknown, never retried), as the approver.

// DefaultApprovalTTL is how long a request waits when the config names no
// time: over a weekend.
const DefaultApprovalTTL = 72 * time.Hour

// ApprovalStore keeps approval requests; *store.DB is one. A Store without
// it cannot take requests: a refund that needs one is refused.
type ApprovalStore interface {
	RequestApproval(ctx context.Context, a store.Approval) (*store.Approval, error)
	DecideApproval(ctx context.Context, id uint64, d store.Decision) (*store.Approval, error)
	ApprovalSent(ctx context.Context, id, opID uint64, result string) error
	Approval(ctx context.Context, id uint64) (*store.Approval, error)
	Approvals(ctx context.Context) ([]*store.Approval, error)
}

// ErrNoApprovals: the cache given to the Service keeps no approval
// requests.
var ErrNoApprovals = errors.New("this cache keeps no approval requests")

// The kinds of request, and the request each keeps.
const (
	approvalRefund         = "refund"          // RefundRequest
	approvalGiftCardRefund = "giftcard-refund" // GiftCardRefundRequest
	approvalReturn         = "return"          // ReturnRequest
)

type approvedKey struct{}

// approved is the request an operation runs for, in its context.
type approved struct {
	id        uint64
	requester string
}

func approvedFrom(ctx context.Context) (approved, bool) {
	a, ok := ctx.Value(approvedKey{}).(approved)
	return a, ok
}

func (s *Service) approvals() (ApprovalStore, error) {
	as, ok := s.cfg.Store.(ApprovalStore)
	if !ok {
		return nil, ErrNoApprovals
	}
	return as, nil
}

// refundGate decides what becomes of a refund of amount: sent (nil, false),
// refused (an error), or kept as an approval request (the request's result,
// true). Nothing is journaled or sent by it.
func (s *Service) refundGate(ctx context.Context, kind, target, currency, note string, amount decimal.Decimal, req any) (Result, bool, error) {
	p := s.Principal(ctx)
	pol := s.cfg.Policy
	res := Result{Action: api.ActionRefund, Target: target, Currency: currency, Amount: amount}
	if err := pol.Check(p, access.Refund); err != nil {
		return res, false, fmt.Errorf("refund %s: %w", target, err)
	}
	if _, ok := approvedFrom(ctx); !ok && s.cfg.ApprovalOver.IsPositive() && amount.GreaterThan(s.cfg.ApprovalOver) {
		return s.requestApproval(ctx, p, kind, target, currency, note, amount, req)
	}
	if err := pol.CheckRefund(p, amount); err != nil {
		return res, false, fmt.Errorf("refund %s: %w", target, err)
	}
	return res, false, nil
}

func (s *Service) requestApproval(ctx context.Context, p access.Principal, kind, target, currency, note string, amount decimal.Decimal, req any) (Result, bool, error) {
	res := Result{Action: api.ActionRefund, Target: target, Currency: currency, Amount: amount}
	as, err := s.approvals()
	if err != nil {
		return res, false, fmt.Errorf("refund %s above %s needs approval: %w", target, s.cfg.ApprovalOver.StringFixed(2), err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return res, false, fmt.Errorf("refund %s: keep the request: %w", target, err)
	}
	now := s.cfg.Now()
	ttl := s.cfg.ApprovalTTL
	if ttl <= 0 {
		ttl = DefaultApprovalTTL
	}
	a, err := as.RequestApproval(ctx, store.Approval{Created: now, Expires: now.Add(ttl), Requester: p.User, RequesterRole: string(p.Role),
		RequestedBy: p.String(), Kind: kind, Target: target, Amount: amount, Currency: currency, Note: note, Request: body})
	if err != nil {
		return res, false, fmt.Errorf("refund %s: %w", target, err)
	}
	res.Approval = a.ID
	res.Message = fmt.Sprintf("above %s: kept as approval request %d, not sent; %s may approve it until %s (paydesk approve %d)",
		s.cfg.ApprovalOver.StringFixed(2), a.ID, ApproverRoles(), a.Expires.UTC().Format("2006-01-02 15:04 UTC"), a.ID)
	return res, true, nil
}

// ApproverRoles names the roles that may approve a request ("finance or
// admin").
func ApproverRoles() string {
	var names []string
	for _, r := range access.Who(access.Approve) {
		names = append(names, string(r))
	}
	return strings.Join(names, " or ")
}

// Approvals lists the approval requests, newest first.
func (s *Service) Approvals(ctx context.Context) ([]*store.Approval, error) {
	if err := s.Check(ctx, access.Read); err != nil {
		return nil, err
	}
	as, err := s.approvals()
	if err != nil {
		return nil, err
	}
	return as.Approvals(ctx)
}

// Approval returns request id.
func (s *Service) Approval(ctx context.Context, id uint64) (*store.Approval, error) {
	if err := s.Check(ctx, access.Read); err != nil {
		return nil, err
	}
	as, err := s.approvals()
	if err != nil {
		return nil, err
	}
	return as.Approval(ctx, id)
}

// Approve approves request id and sends it, as the approver, through the
// usual path. Refused: a principal who may not approve, the requester
// themself, a request decided or expired, an amount above the approver's
// own refund limit (before the decision is written).
func (s *Service) Approve(ctx context.Context, id uint64) (Result, error) {
	return s.decide(ctx, id, true, "")
}

// Deny denies request id with a reason; nothing is sent.
func (s *Service) Deny(ctx context.Context, id uint64, reason string) error {
	_, err := s.decide(ctx, id, false, reason)
	return err
}

func (s *Service) decide(ctx context.Context, id uint64, approve bool, reason string) (Result, error) {
	verb := "deny"
	if approve {
		verb = "approve"
	}
	res := Result{Action: api.ActionRefund, Approval: id}
	p := s.Principal(ctx)
	if err := s.cfg.Policy.Check(p, access.Approve); err != nil {
		return res, fmt.Errorf("%s request %d: %w", verb, id, err)
	}
	as, err := s.approvals()
	if err != nil {
		return res, fmt.Errorf("%s request %d: %w", verb, id, err)
	}
	a, err := as.Approval(ctx, id)
	if err != nil {
		return res, fmt.Errorf("%s request %d: %w", verb, id, err)
	}
	res.Target, res.Amount, res.Currency = a.Target, a.Amount, a.Currency
	if approve {
		// The approver sends it: their own limit holds (checked before the
		// decision, so a refusal leaves the request pending for another).
		if err := s.cfg.Policy.CheckRefund(p, a.Amount); err != nil {
			return res, fmt.Errorf("approve request %d: %w", id, err)
		}
	}
	a, err = as.DecideApproval(ctx, id, store.Decision{Decider: p.User, DecidedBy: p.String(), Approve: approve, Reason: reason, Time: s.cfg.Now()})
	if err != nil {
		return res, err
	}
	if !approve {
		res.Message = fmt.Sprintf("request %d denied; nothing was sent", id)
		return res, nil
	}
	out, sendErr := s.sendApproved(context.WithValue(ctx, approvedKey{}, approved{id: id, requester: a.RequestedBy}), a)
	out.Approval = id
	text := auditText(out, sendErr)
	if out.OpID == 0 && sendErr != nil {
		text = "not sent: " + oneLine(sendErr.Error())
	}
	if err := as.ApprovalSent(ctx, id, out.OpID, text); err != nil && out.Warning == "" {
		out.Warning = err.Error()
	}
	return out, sendErr
}

// sendApproved runs the request kept in a.
func (s *Service) sendApproved(ctx context.Context, a *store.Approval) (Result, error) {
	res := Result{Action: api.ActionRefund, Target: a.Target, Amount: a.Amount, Currency: a.Currency}
	var intent Intent
	switch a.Kind {
	case approvalRefund:
		var r RefundRequest
		if err := json.Unmarshal(a.Request, &r); err != nil {
			return res, fmt.Errorf("request %d: read the refund: %w", a.ID, err)
		}
		intent = r
	case approvalGiftCardRefund:
		var r GiftCardRefundRequest
		if err := json.Unmarshal(a.Request, &r); err != nil {
			return res, fmt.Errorf("request %d: read the gift card refund: %w", a.ID, err)
		}
		intent = r
	case approvalReturn:
		var r ReturnRequest
		if err := json.Unmarshal(a.Request, &r); err != nil {
			return res, fmt.Errorf("request %d: read the return: %w", a.ID, err)
		}
		intent = r
	default:
		return res, fmt.Errorf("request %d: unknown kind %q", a.ID, a.Kind)
	}
	return intent.Run(ctx, s)
}

// approvalNote is what the send's audit entry adds: the request it
// carries out and who asked.
func approvalNote(ctx context.Context) string {
	a, ok := approvedFrom(ctx)
	if !ok {
		return ""
	}
	return fmt.Sprintf("approval request %d by %s", a.id, a.requester)
}

// ApproveRequest approves a request (the console's intent).
type ApproveRequest struct{ ID uint64 }

// Run approves and sends.
func (r ApproveRequest) Run(ctx context.Context, s *Service) (Result, error) {
	return s.Approve(ctx, r.ID)
}

// Describe says what is approved.
func (r ApproveRequest) Describe() string { return fmt.Sprintf("approve request %d and send it", r.ID) }

// DenyRequest denies a request (the console's intent).
type DenyRequest struct {
	ID     uint64
	Reason string
}

// Run denies.
func (r DenyRequest) Run(ctx context.Context, s *Service) (Result, error) {
	err := s.Deny(ctx, r.ID, r.Reason)
	res := Result{Action: "deny", Approval: r.ID, Message: fmt.Sprintf("request %d denied; nothing was sent", r.ID)}
	if err != nil {
		res.Message = ""
	}
	return res, err
}

// Describe says what is denied.
func (r DenyRequest) Describe() string { return fmt.Sprintf("deny request %d", r.ID) }
