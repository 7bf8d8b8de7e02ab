package forms

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// WithApproval tells a form that a refund above over is kept as an
// approval request for approvers (the roles that may approve, "finance or
// admin") instead of being sent: its confirm step says so before anything
// happens, and its button reads "Request approval". The server decides
// (internal/ops' refundGate); this only keeps the operator from being
// surprised by the answer. Forms that refund nothing ignore it.
func WithApproval(f Form, over decimal.Decimal, approvers string) Form {
	if k, ok := f.(*kit); ok {
		k.approvalOver, k.approvers = over, approvers
	}
	return f
}

// approvalNote is the confirm step's line for a refund that will wait
// for approval; "" when it will be sent.
func (k *kit) approvalNote() string {
	c := k.last
	if !k.approvalOver.IsPositive() || !c.refund.GreaterThan(k.approvalOver) {
		return ""
	}
	who := k.approvers
	if who == "" {
		who = "a second person"
	}
	return fmt.Sprintf("Above %s %s this is kept as an approval request: nothing is sent until %s approves it "+
		"(you cannot approve your own).", k.approvalOver.StringFixed(2), c.refundCurrency, who)
}
