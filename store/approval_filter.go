package store

import (
	"time"

	"paydesk/internal/query"
)

// ApprovalFilter is what the approvals page's filter takes: state: is the
// request's state at the console's time (pending, approved, denied,
// expired), operator: who asked or decided.
var ApprovalFilter = query.List{Name: "approval", Fields: []query.Field{query.State, query.Amount, query.Created, query.Operator},
	States: []string{string(ApprovalPending), string(ApprovalApproved), string(ApprovalDenied), string(ApprovalExpired)}}

// KeepApproval reports whether a four-eyes request passes w (checked
// against ApprovalFilter) at now: words in its kind, target, note, who
// asked and decided, the denial's reason and what the send came to.
func KeepApproval(a *Approval, w *query.Query, now time.Time) bool {
	if w.State != "" && string(a.StateAt(now)) != w.State {
		return false
	}
	if w.Amount != nil && !w.Amount.Contains(a.Amount) {
		return false
	}
	if !inCreated(w.Created, a.Created) {
		return false
	}
	if len(w.Operator) > 0 && !foldedHasAll(foldFields(a.Requester, a.RequestedBy, a.Decider), w.Operator) {
		return false
	}
	return len(w.Words) == 0 || foldedHasAll(foldFields(a.Kind, a.Target, a.Note, a.Requester, a.RequestedBy, a.Decider, a.Reason, a.Result), w.Words)
}
