package forms

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
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

// TestResultNoteOnePartALine: the server's note of a request — its parts
// joined by "; " — shows one part a line, with no control picture where
// the line breaks (the note was made inert whole, so the break showed
// as "␊" and the rest ran off the dialog).
func TestResultNoteOnePartALine(t *testing.T) {
	r := ops.Result{Action: "Refund", Target: "K1", Amount: decimal.RequireFromString("150"), Currency: "EUR", Approval: 1,
		Message: "above 100.00: kept as approval request 1, not sent; finance or admin may approve it until 2026-11-29 13:47 UTC (paydesk approve 1)"}
	got := resultView(&r, nil)
	if strings.Contains(got, "␊") {
		t.Fatalf("a control picture in the note:\n%s", got)
	}
	for _, want := range []string{"Note             above 100.00: kept as approval request 1, not sent\n",
		"                 finance or admin may approve it until 2026-11-29 13:47 UTC (paydesk approve 1)\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("result view has no line %q:\n%s", want, got)
		}
	}
}

// TestConfirmSaysARefundWaitsForApproval: with four-eyes on, the confirm
// step of a refund (and of a gift card refund) above the threshold says
// it is kept as a request and for whom, and its button reads "Request
// approval"; at or below it, and with four-eyes off, it is the usual Send.
func TestConfirmSaysARefundWaitsForApproval(t *testing.T) {
	enters := func(n int) []tea.Msg {
		var out []tea.Msg
		for range n {
			out = append(out, press("enter"))
		}
		return out
	}
	refund := func(over string) Form {
		f := NewRefund([]*store.Transaction{capture()}, ops.ModeSandbox)
		if over != "" {
			f = WithApproval(f, decimal.RequireFromString(over), "finance or admin")
		}
		return f
	}
	gift := func(over string) Form {
		return WithApproval(NewGiftCardRefund(giftPayment(api.ProviderA), true, ops.ModeSandbox), decimal.RequireFromString(over), "finance or admin")
	}
	// refund: Capture, Amount, Reason, Reason text; gift card: Amount, Reason, Reason text.
	refundOf := func(amount string) []tea.Msg { return msgs(one(press("tab")), typeText(amount), enters(3)) }
	tests := []struct {
		name  string
		form  Form
		input []tea.Msg
		waits bool
	}{
		{"above", refund("30"), refundOf("49.95"), true},
		{"at the threshold", refund("30"), refundOf("30"), false},
		{"below", refund("30"), refundOf("12.50"), false},
		{"four-eyes off", refund(""), refundOf("49.95"), false},
		{"gift card above", gift("5"), msgs(typeText("10"), enters(3)), true},
		{"gift card below", gift("50"), msgs(typeText("10"), enters(3)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := runForm(t, tt.form, tt.input...)
			if k := h.f.(*kit); k.stage != stageConfirm {
				t.Fatalf("stage %d, want the confirm step:\n%s", k.stage, plainView(h.f))
			}
			v := plainView(h.f)
			said := strings.Contains(v, "this is kept as an approval request: nothing is sent until finance or admin approves")
			button := strings.Contains(v, "[ Request approval ]")
			if said != tt.waits || button != tt.waits || strings.Contains(v, "[ Send ]") == tt.waits {
				t.Fatalf("waits %v: note %v, button %v:\n%s", tt.waits, said, button, v)
			}
		})
	}
}
