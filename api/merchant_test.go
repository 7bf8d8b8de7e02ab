package api

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"
)

func TestMerchantSettings(t *testing.T) {
	for _, c := range []struct {
		name string
		m    Merchant
		ok   bool
	}{
		{"zero", Merchant{}, true},
		{"B partial refunds", Merchant{PartialRefunds: []Provider{ProviderB}}, true},
		{"A partial refunds", Merchant{PartialRefunds: []Provider{ProviderA}}, false},
		{"unknown provider", Merchant{PartialRefunds: []Provider{"Z"}}, false},
		{"codes", Merchant{GiftCardCodes: []string{"fashioncheque", "customgiftcard", "customgiftcard2"}}, true},
		{"deferredkp is no gift card", Merchant{GiftCardCodes: []string{"deferredkp"}}, false},
		{"twice", Merchant{GiftCardCodes: []string{"a", "A"}}, false},
		{"four custom cards", Merchant{GiftCardCodes: []string{"customgiftcard", "customgiftcard2", "customgiftcard3", "customgiftcard4"}}, false},
		{"not a code", Merchant{GiftCardCodes: []string{"gift card"}}, false},
	} {
		if err := c.m.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate = %v, want ok=%v", c.name, err, c.ok)
		}
	}
	for in, want := range map[string]string{"": "", "true": "B", "b, c": "BC", "none": "", "B": "B"} {
		ps, err := ParseProviders(in)
		got := ""
		for _, p := range ps {
			got += string(p)
		}
		if err != nil || got != want {
			t.Errorf("ParseProviders(%q) = %v %v, want %s", in, ps, err, want)
		}
	}
	if _, err := ParseProviders("B,X"); err == nil {
		t.Error("ParseProviders accepted X")
	}

	// The client validates with the same setting the gateway acts on.
	m := Merchant{GiftCardCodes: ParseCodes("fashioncheque, customgiftcard")}
	pay := GiftCardPay{ServiceCode: "vouchera", Currency: "EUR", Invoice: "I", Amount: decimal.NewFromInt(1),
		Card: Card{Provider: ProviderA, Number: "1", PIN: "2"}}
	var ve *ValidationError
	if err := pay.Validate(m.Rules()); !errors.As(err, &ve) || !ve.Has(FieldService) {
		t.Errorf("vouchera not offered, yet: %v", err)
	}
	pay.ServiceCode = "FashionCheque"
	if err := pay.Validate(m.Rules()); err != nil {
		t.Errorf("fashioncheque offered, yet: %v", err)
	}
	if !(Merchant{}).Rules().IsGiftCardCode("voucherb") || len((Merchant{}).Codes()) != len(DefaultGiftCardCodes) {
		t.Error("the zero Merchant does not offer the default codes")
	}
}

func TestParseMerchant(t *testing.T) {
	kv := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	m, err := ParseMerchant(kv(map[string]string{"autocapture": "true", "partial-refunds": "B", "gift-card-codes": "fashioncheque, customgiftcard"}))
	if err != nil || !m.Autocapture || !m.PartialRefundsFor(ProviderB) || len(m.GiftCardCodes) != 2 {
		t.Fatalf("%+v %v", m, err)
	}
	if m, err := ParseMerchant(kv(nil)); err != nil || m.Autocapture || m.PartialRefunds != nil || m.GiftCardCodes != nil {
		t.Fatalf("defaults: %+v %v", m, err)
	}
	for _, bad := range []map[string]string{{"autocapture": "maybe"}, {"partial-refunds": "A"}, {"gift-card-codes": "deferredkp"}} {
		if _, err := ParseMerchant(kv(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
