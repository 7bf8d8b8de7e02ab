package api

import (
	"fmt"
	"strings"
)

// Merchant is the merchant account's configuration at the gateway: what
// the operator switches on for the merchant. It is the one place these
// settings live: the sandbox acts on them, and the client side (validation,
// forms, operations) reads the same value so that it allows exactly what
// the gateway will accept. Field names are the config file's keys (TOML).
type Merchant struct {
	// Autocapture captures every approved reservation in full at once (the
	// document: switched on by the operator on request, with the invoice
	// provider's approval).
	Autocapture bool `toml:"autocapture" json:",omitempty"`
	// PartialRefunds lists the voucher providers that have configured the
	// merchant's cards for partial gift card refunds. The document allows
	// it for provider B only, and not by default, so the one useful value
	// is ["B"].
	PartialRefunds []Provider `toml:"partial-refunds" json:",omitempty"`
	// GiftCardCodes are the gift card service codes the merchant offers;
	// empty means DefaultGiftCardCodes.
	GiftCardCodes []string `toml:"gift-card-codes" json:",omitempty"`
}

// Rules are the validation rules these settings imply.
func (m Merchant) Rules() Rules {
	if len(m.GiftCardCodes) == 0 {
		return Rules{}
	}
	return Rules{GiftCardCodes: append([]string(nil), m.GiftCardCodes...)}
}

// Codes are the gift card codes offered.
func (m Merchant) Codes() []string {
	if len(m.GiftCardCodes) == 0 {
		return append([]string(nil), DefaultGiftCardCodes...)
	}
	return append([]string(nil), m.GiftCardCodes...)
}

// PartialRefundsFor reports whether provider p allows partial refunds of
// the merchant's cards.
func (m Merchant) PartialRefundsFor(p Provider) bool {
	for _, q := range m.PartialRefunds {
		if q == p {
			return true
		}
	}
	return false
}

// Validate checks the settings: known providers (and only B for partial
// refunds, as the document says), gift card codes that are service codes
// and not the deferred-invoice service, at most three custom cards.
func (m Merchant) Validate() error {
	for _, p := range m.PartialRefunds {
		switch p {
		case ProviderB:
		case ProviderA, ProviderC:
			return fmt.Errorf("partial-refunds: only voucher provider B offers partial refunds, not %s", p)
		default:
			return fmt.Errorf("partial-refunds: unknown provider %q (A, B or C)", truncate(string(p), 20))
		}
	}
	seen := map[string]bool{}
	custom := 0
	for _, c := range m.GiftCardCodes {
		lc := strings.ToLower(c)
		switch {
		case c == "" || strings.IndexFunc(c, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0:
			return fmt.Errorf("gift-card-codes: %q is not a service code (letters, digits, - and _)", truncate(c, 40))
		case lc == ServiceDeferred:
			return fmt.Errorf("gift-card-codes: %s is the deferred-invoice service", ServiceDeferred)
		case seen[lc]:
			return fmt.Errorf("gift-card-codes: %s is listed twice", c)
		}
		seen[lc] = true
		if IsCustomCardCode(lc) {
			custom++
		}
	}
	if custom > 3 {
		return fmt.Errorf("gift-card-codes: at most 3 custom cards (customgiftcard, customgiftcard2, customgiftcard3), %d given", custom)
	}
	return nil
}

// ParseProviders reads a comma-separated provider list ("B", "b, c") as a
// flag or an environment variable gives it; "true" is B, the one provider
// that offers partial refunds, and "", "false" or "none" is none.
func ParseProviders(s string) ([]Provider, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "false", "none":
		return nil, nil
	case "true":
		return []Provider{ProviderB}, nil
	}
	var out []Provider
	for _, f := range strings.Split(s, ",") {
		switch p := Provider(strings.ToUpper(strings.TrimSpace(f))); p {
		case ProviderA, ProviderB, ProviderC:
			out = append(out, p)
		default:
			return nil, fmt.Errorf("unknown voucher provider %q (A, B or C)", truncate(f, 20))
		}
	}
	return out, nil
}

// ParseCodes reads a comma-separated list of gift card service codes.
func ParseCodes(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// MerchantKeys are the names of the merchant settings as config keys and
// flags: autocapture (true/false), partial-refunds (providers, e.g. B;
// "true" means B), gift-card-codes (comma-separated service codes).
var MerchantKeys = []string{"autocapture", "partial-refunds", "gift-card-codes"}

// ParseMerchant builds the settings from text values by key, as flags, the
// environment or a key = value config file give them (value returns "" for
// a key that is not set), and validates them.
func ParseMerchant(value func(key string) string) (Merchant, error) {
	var m Merchant
	if v := strings.TrimSpace(value("autocapture")); v != "" {
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			m.Autocapture = true
		case "false", "no", "off", "0":
		default:
			return Merchant{}, fmt.Errorf("autocapture %q: want true or false", truncate(v, 20))
		}
	}
	ps, err := ParseProviders(value("partial-refunds"))
	if err != nil {
		return Merchant{}, fmt.Errorf("partial-refunds: %w", err)
	}
	m.PartialRefunds = ps
	m.GiftCardCodes = ParseCodes(value("gift-card-codes"))
	if err := m.Validate(); err != nil {
		return Merchant{}, err
	}
	return m, nil
}
