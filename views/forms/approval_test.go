package forms

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"paydesk/internal/ops"
)

// TestResultAwaitingApproval: a refund kept for approval is neither done
// nor failed in the form's result.
func TestResultAwaitingApproval(t *testing.T) {
	r := ops.Result{Action: "Refund", Target: "K1", Amount: decimal.RequireFromString("150"), Currency: "EUR", Approval: 4,
		Message: "above 100.00: kept as approval request 4, not sent"}
	got := resultView(&r, nil)
	if !strings.Contains(got, "Awaiting approval (request 4)") || !strings.Contains(got, "nothing was sent.") || strings.Contains(got, "Done") ||
		!strings.Contains(got, "kept as approval request 4") {
		t.Fatalf("result view:\n%s", got)
	}
}
