package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Four-eyes approvals: a refund above the approval threshold is kept as a
// request instead of being sent; another user allowed to approve decides
// it. The store keeps the requests and enforces what must hold whoever
// asks, in the transaction that decides: a request is decided once, never
// by the user who made it, and never after it expired. The request, the
// decision and (ops) the send are each in the audit log, with who.

// Errors the approval rules return.
var (
	// ErrSelfApproval: nobody decides their own request.
	ErrSelfApproval = errors.New("nobody approves their own request")
	// ErrApprovalClosed: the request is decided or expired already.
	ErrApprovalClosed = errors.New("the request is no longer pending")
)

// maxApprovalText bounds the texts of a request (a reason typed by hand).
const maxApprovalText = 500

// RequestApproval stores a new pending request and its audit entry in one
// transaction, and returns it with its ID.
func (db *DB) RequestApproval(ctx context.Context, a Approval) (*Approval, error) {
	a.Created = nowOr(a.Created, db.now)
	a.State = ApprovalPending
	if strings.TrimSpace(a.Requester) == "" {
		return nil, errors.New("approval request: no requester")
	}
	if a.Kind == "" || len(a.Request) == 0 {
		return nil, errors.New("approval request: no operation to approve")
	}
	if len(a.Note) > maxApprovalText {
		return nil, fmt.Errorf("approval request: the note is longer than %d bytes", maxApprovalText)
	}
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		id, err := tx.NextApprovalID()
		if err != nil {
			return err
		}
		a.ID = id
		if err := tx.PutApproval(&a); err != nil {
			return err
		}
		c.Approvals = true
		_, err = appendAudit(tx, AuditEntry{Time: a.Created, Operator: nameOr(a.RequestedBy, a.Requester), Action: "approval-request",
			Target: a.Target, Amount: a.Amount, Currency: a.Currency,
			Result: fmt.Sprintf("request %d: %s, waiting for approval until %s", a.ID, a.Kind, a.Expires.UTC().Format(time.RFC3339)),
			Reason: a.Note}, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("approval request: %w", err)
	}
	return &a, nil
}

func nameOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Decision is an approver's verdict on a request.
type Decision struct {
	// Decider is the user deciding (compared with the requester);
	// DecidedBy names them for the audit log.
	Decider, DecidedBy string
	Approve            bool
	Reason             string // required for a denial
	Time               time.Time
}

// DecideApproval approves or denies request id. It refuses the requester
// (ErrSelfApproval), a request decided or expired (ErrApprovalClosed), a
// denial without a reason; the decision and its audit entry are one
// transaction, so two approvers at once decide it once.
func (db *DB) DecideApproval(ctx context.Context, id uint64, d Decision) (*Approval, error) {
	d.Time = nowOr(d.Time, db.now)
	d.Reason = strings.TrimSpace(d.Reason)
	if !d.Approve && d.Reason == "" {
		return nil, fmt.Errorf("deny request %d: a reason is required", id)
	}
	if len(d.Reason) > maxApprovalText {
		return nil, fmt.Errorf("decide request %d: the reason is longer than %d bytes", id, maxApprovalText)
	}
	verb := "deny"
	if d.Approve {
		verb = "approve"
	}
	var out *Approval
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		a, err := tx.Approval(id)
		if err != nil {
			return err
		}
		if a == nil {
			return fmt.Errorf("request %d: %w", id, ErrNotFound)
		}
		if st := a.StateAt(d.Time); st != ApprovalPending {
			return fmt.Errorf("request %d is %s: %w", id, st, ErrApprovalClosed)
		}
		if strings.EqualFold(a.Requester, d.Decider) {
			return fmt.Errorf("request %d was made by %s: %w", id, a.Requester, ErrSelfApproval)
		}
		a.Decider, a.Decided, a.Reason = d.Decider, d.Time, d.Reason
		a.State = ApprovalDenied
		result := fmt.Sprintf("request %d denied (requested by %s)", id, a.Requester)
		if d.Approve {
			a.State = ApprovalApproved
			result = fmt.Sprintf("request %d approved (requested by %s); sending", id, a.Requester)
		}
		if err := tx.PutApproval(a); err != nil {
			return err
		}
		c.Approvals = true
		out = a
		_, err = appendAudit(tx, AuditEntry{Time: d.Time, Operator: nameOr(d.DecidedBy, d.Decider), Action: "approval-" + verb,
			Target: a.Target, Amount: a.Amount, Currency: a.Currency, Result: result, Reason: d.Reason}, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s request %d: %w", verb, id, err)
	}
	return out, nil
}

// ApprovalSent records the send of an approved request: its journal entry
// and what it came to.
func (db *DB) ApprovalSent(ctx context.Context, id, opID uint64, result string) error {
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		a, err := tx.Approval(id)
		if err != nil {
			return err
		}
		if a == nil {
			return fmt.Errorf("request %d: %w", id, ErrNotFound)
		}
		a.OpID, a.Result = opID, result
		c.Approvals = true
		return tx.PutApproval(a)
	})
	if err != nil {
		return fmt.Errorf("approval request %d: record the send: %w", id, err)
	}
	return nil
}

// Approval returns request id (ErrNotFound when there is none).
func (db *DB) Approval(ctx context.Context, id uint64) (*Approval, error) {
	var a *Approval
	err := db.read(ctx, func(tx RepoTx) (err error) {
		a, err = tx.Approval(id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("approval request %d: %w", id, err)
	}
	if a == nil {
		return nil, fmt.Errorf("approval request %d: %w", id, ErrNotFound)
	}
	return a, nil
}

// Approvals lists the requests, newest first.
func (db *DB) Approvals(ctx context.Context) ([]*Approval, error) {
	var out []*Approval
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.Approvals()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load approval requests: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
