package domain

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// ApprovalsTx is the engine contract of approval requests (RepoTx embeds
// it): ApprovalState says nothing here, the rules read Approval whole.
type ApprovalsTx interface {
	// NextApprovalID returns a new request ID, greater than every one
	// before; the request is stored by PutApproval.
	NextApprovalID() (uint64, error)
	// Approval returns the request with that ID, nil when there is none.
	Approval(id uint64) (*Approval, error)
	// PutApproval stores a under a.ID, replacing it.
	PutApproval(a *Approval) error
	// Approvals returns every request, ascending by ID.
	Approvals() ([]*Approval, error)
}

// ApprovalState is where a request is.
type ApprovalState string

// Approval is a request to send an operation that needs a second person.
type Approval struct {
	ID      uint64
	Created time.Time
	Expires time.Time
	// Requester is who asked (the user name), RequesterRole their role;
	// RequestedBy names them for the audit log (with the key over SSH).
	Requester     string
	RequesterRole string
	RequestedBy   string
	// Kind names the operation (refund, giftcard-refund, return); Request
	// is the operation's request as ops wrote it, run again on approval.
	Kind     string
	Target   string
	Amount   decimal.Decimal
	Currency string
	// Note says in words what will be sent (reason, lines).
	Note    string
	Request json.RawMessage

	State ApprovalState
	// Decider and Decided say who decided when; Reason is a denial's.
	Decider string
	Decided time.Time
	Reason  string
	// OpID is the journal entry of the send once approved, Result what it
	// came to (settled, failed, outcome unknown).
	OpID   uint64
	Result string
}

// StateAt is the request's state at now: pending past its expiry reads as
// expired.
func (a *Approval) StateAt(now time.Time) ApprovalState {
	if a.State == ApprovalPending && !a.Expires.IsZero() && !now.Before(a.Expires) {
		return ApprovalExpired
	}
	return a.State
}

// The states of a request. Expired is not stored: a pending request whose
// Expires has passed reads as expired (Approval.StateAt).
const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved" // decided; the send is in OpID/Result
	ApprovalDenied   ApprovalState = "denied"
	ApprovalExpired  ApprovalState = "expired"
)
