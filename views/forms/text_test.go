package forms

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"paydesk/api"
	"paydesk/internal/ops"
)

// TestSendingTextMasksOnlyPINs: the confirm step hides card PINs and
// validation codes, and shows every other parameter as sent, including
// names that merely contain "pin" (ShippingSameAsBilling, ShippingCity).
func TestSendingTextMasksOnlyPINs(t *testing.T) {
	reserve := ops.TestReservation(time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC), "EUR")
	reserve.ShippingSameAsBilling = false
	reserve.Shipping = api.Address{FirstName: "Jan", LastName: "Jansen", Street: "Damrak", HouseNumber: "1",
		PostalCode: "1012 LG", City: "Amsterdam", Country: "NL", PhoneNumber: "0209876543"}
	card := func(p api.Provider) api.Request {
		return *api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "GC-1", Amount: dec("30"),
			Card: api.Card{Provider: p, Number: "6299440000000000015", PIN: "4711"}}.Request()
	}
	tests := []struct {
		name     string
		req      api.Request
		shown    []string
		notShown []string
	}{
		{"reserve shows shipping fields", *reserve.Request(),
			[]string{"ShippingSameAsBilling = false", "ShippingCity = Amsterdam", "ShippingPhoneNumber = 0209876543"}, []string{"••••"}},
		{"provider B PIN", card(api.ProviderB), []string{"VoucherBPIN = ••••", "VoucherBCardnumber = 6299440000000000015"}, []string{"4711"}},
		{"provider C validation code", card(api.ProviderC), []string{"VoucherCValidationCode = ••••"}, []string{"4711"}},
		{"custom card Pin", card(api.ProviderCustom), []string{"Pin = ••••", "CardNumber = 6299440000000000015"}, []string{"4711"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sendingText(&tt.req, false)
			for _, s := range tt.shown {
				if !strings.Contains(got, s) {
					t.Errorf("missing %q in:\n%s", s, got)
				}
			}
			for _, s := range tt.notShown {
				if strings.Contains(got, s) {
					t.Errorf("shows %q in:\n%s", s, got)
				}
			}
		})
	}
}

// TestGeneralErrorsWrapToTheFormWidth: an error not tied to a field (here:
// nothing left to refund, naming the payment's key) is wrapped to the
// form's width, so the host never has to cut it off. (The header's
// tables are the host's to cut; they are not checked here.)
func TestGeneralErrorsWrapToTheFormWidth(t *testing.T) {
	p := giftPayment(api.ProviderB)
	p.Refunded = p.Amount
	f := NewGiftCardRefund(p, true, ops.ModeSandbox)
	const width = 60
	f.SetSize(width, 30)
	f, _ = drive(f, f.Init())
	view := ansi.Strip(string(render(t, f)))
	if !strings.Contains(strings.ReplaceAll(view, "\n", " "), "nothing left to refund") {
		t.Fatalf("no error shown:\n%s", view)
	}
	if !strings.Contains(view, p.Key) {
		t.Fatalf("the key in the error is cut off:\n%s", view)
	}
	lines := strings.Split(view, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "✗ ") {
			continue
		}
		for _, el := range lines[i:min(i+2, len(lines))] {
			if w := ansi.StringWidth(el); w > width {
				t.Errorf("error line of width %d > %d: %q", w, width, el)
			}
		}
	}
}

// Amount fields take plain decimals only, as the command line does: an
// exponent is a typo, never a hundredfold amount.
func TestAmountFieldsRefuseExponents(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for ok
	}{
		{"12.50", ""}, {"12,50", ""}, {"", ""}, {"1e2", "must be an amount"}, {"1E2", "must be an amount"}, {"NaN", "must be an amount"},
	} {
		_, msg := parseAmount(tc.in)
		if (tc.want == "") != (msg == "") || (tc.want != "" && !strings.Contains(msg, tc.want)) {
			t.Errorf("parseAmount(%q) = %q, want %q", tc.in, msg, tc.want)
		}
	}
}
