package forms

import (
	"strings"
	"testing"
	"time"

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
