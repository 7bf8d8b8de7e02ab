package forms

import (
	"strings"
	"testing"

	"paydesk/internal/ops"
)

// The cancel form has no fields: a stray key at its confirmation does not
// promise "esc goes back to the fields".
func TestCancelConfirmNamesNoFields(t *testing.T) {
	f := sized(NewCancel(reservation(), ops.ModeSandbox))
	f, out := drive(f, press("z"))
	if len(out) != 0 {
		t.Fatalf("a stray key sent %v", out)
	}
	v := f.View()
	if strings.Contains(v, "back to the fields") || !strings.Contains(v, "esc closes the form") {
		t.Fatalf("the cancel confirmation says:\n%s", v)
	}
}

// A wrong live invoice number is cleared, named, and the right one then
// sends.
func TestWrongLiveInvoiceIsCleared(t *testing.T) {
	f := sized(NewCancel(reservation(), ops.ModeLive))
	f, out := drive(f, append(typeText("T-WRONG"), press("enter"))...)
	if len(out) != 0 {
		t.Fatalf("a wrong invoice sent %v", out)
	}
	v := f.View()
	if !strings.Contains(v, `"T-WRONG" is not the invoice number`) || strings.Contains(v, "> T-WRONG") {
		t.Fatalf("after a wrong invoice:\n%s", v)
	}
	f, out = drive(f, append(typeText("T-20260305-1200"), press("enter"))...)
	if len(out) != 1 || out[0].(SubmitMsg).Intent.(ops.CancelRequest).Confirm != "T-20260305-1200" {
		t.Fatalf("the right invoice after a wrong one: %v\n%s", out, f.View())
	}
}
