package forms

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// refundedByAmount is twoCaptures after a refund of 70.00 by amount on the
// first capture (74.45): 4.45 is left on it, less than a shoe.
func refundedByAmount() (*store.Reservation, []*store.Transaction) {
	r, txs := twoCaptures()
	c1 := txs[0]
	rf := &store.Transaction{Key: "RF01RF01RF01RF01RF01RF01RF01RF01", Kind: store.KindRefund, Invoice: r.Invoice, Currency: "EUR",
		Amount: dec("70.00"), Original: c1.Key, Status: store.Status{Code: api.StatusSuccess, Time: testNow.Add(-24 * 60 * 60 * 1e9)}}
	c1.Refunded, c1.Refunds = dec("70.00"), []string{rf.Key}
	return r, append(txs, rf)
}

// TestReturnAfterRefundByAmountOffersTheNextStep: three shoes come back
// after the first capture was refunded 70.00 by amount; they do not all
// fit by line. The form shows the earlier refund and offers a refund by
// amount of what is left on that capture, filled in and not sent — before,
// it only refused ("do not fit … refunded by amount before").
func TestReturnAfterRefundByAmountOffersTheNextStep(t *testing.T) {
	r, txs := refundedByAmount()
	input := append(clearField(1), typeText("3")...)
	h := runForm(t, NewReturn(r, txs, ops.ModeSandbox), input...)
	v := strings.Join(strings.Fields(plainView(h.f)), " ")
	for _, want := range []string{
		"Refunded before: 70.00 EUR by amount on the capture with invoice 40001234",
		"do not fit",
		"Next step: ctrl+r opens a refund by amount of 4.45 EUR, all that is still refundable on the capture with invoice 40001234 (filled in, not sent)",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("return form lacks %q:\n%s", want, plainView(h.f))
		}
	}

	h = runForm(t, NewReturn(r, txs, ops.ModeSandbox), append(input, press("ctrl+r"))...)
	if len(h.submit) != 0 {
		t.Fatalf("the next step sent %v", h.submit)
	}
	k, ok := h.f.(*kit)
	if !ok || k.stage != stageEdit {
		t.Fatalf("not a form at its fields: %T", h.f)
	}
	rs, ok := k.spec.(*refundSpec)
	if !ok || rs.amount != "4.45" || rs.capture() == nil || rs.capture().Key != txs[0].Key {
		t.Fatalf("next step is %T %+v", k.spec, k.spec)
	}
	if !strings.Contains(plainView(h.f), "Captured 74.45 EUR · refunded 70.00 · left 4.45") {
		t.Fatalf("refund form:\n%s", plainView(h.f))
	}
	// It goes on as any refund: the confirmation, then Send.
	h = runForm(t, NewReturn(r, txs, ops.ModeSandbox), append(input, press("ctrl+r"), press("enter"), press("enter"), press("enter"), press("enter"))...)
	if !strings.Contains(plainView(h.f), "Refund 4.45 EUR to the customer for invoice T-20260305-1200") || len(h.submit) != 0 {
		t.Fatalf("confirm of the next step (sent %v):\n%s", h.submit, plainView(h.f))
	}
}

// TestRefundNeedsAnAmountOrAll: an empty refund amount is an error naming
// the field, never "everything left"; "all" says it explicitly.
func TestRefundNeedsAnAmountOrAll(t *testing.T) {
	enters := func(n int) []tea.Msg {
		var out []tea.Msg
		for i := 0; i < n; i++ {
			out = append(out, press("enter"))
		}
		return out
	}
	refund := func() Form { return NewRefund([]*store.Transaction{capture()}, ops.ModeSandbox) }
	gift := func() Form { return NewGiftCardRefund(giftPayment(api.ProviderA), true, ops.ModeSandbox) }
	tests := []struct {
		name  string
		form  func() Form
		input []tea.Msg
		stage stage
	}{
		// refund: Capture, Amount, Reason, Reason text; gift card: Amount,
		// Reason, Reason text.
		{"refund-empty", refund, enters(4), stageEdit},
		{"refund-all", refund, msgs(one(press("tab")), typeText("all"), enters(3)), stageConfirm},
		{"giftcard-empty", gift, enters(3), stageEdit},
		{"giftcard-all", gift, msgs(typeText("ALL"), enters(3)), stageConfirm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := runForm(t, tt.form(), tt.input...)
			k := h.f.(*kit)
			if k.stage != tt.stage {
				t.Fatalf("stage %d, want %d:\n%s", k.stage, tt.stage, plainView(h.f))
			}
			v := plainView(h.f)
			if tt.stage == stageEdit && !strings.Contains(v, "✗ Amount: enter an amount or 'all'") {
				t.Fatalf("no error naming the field:\n%s", v)
			}
			if tt.stage == stageConfirm && !strings.Contains(v, "Refund 10.00 EUR") && !strings.Contains(v, "Refund 49.95 EUR") {
				t.Fatalf("all is not everything left:\n%s", v)
			}
		})
	}
}
