package ops

import (
	"context"

	"paydesk/store"
)

// ActionResend is the audit log's action for a push resend asked of the
// embedded sandbox (the console's R).
const ActionResend = "resend pushes"

// AuditResend records in the audit log that the operator asked the
// embedded sandbox to send the pushes of key again, and what it answered
// (sendErr nil: it took the request). A resend moves no money, but its
// repeats land in the push log: the entry says who caused them.
func (s *Service) AuditResend(ctx context.Context, key string, sendErr error) error {
	result := "asked the sandbox"
	if sendErr != nil {
		result = "failed: " + sendErr.Error()
	}
	// The sandbox was asked already: its trace is written even when the
	// caller gave up waiting.
	return s.audit(context.WithoutCancel(ctx), store.AuditEntry{Action: ActionResend, Target: key, Result: result})
}
