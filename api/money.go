package api

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// Amount is money as the gateway carries it: a JSON number rounded to two
// decimals and written in its shortest form (25, 12.5, 19.99). It wraps
// decimal.Decimal instead of flipping decimal's package-level switch, so no
// global state decides how money is encoded.
type Amount struct{ decimal.Decimal }

// NewAmount wraps d.
func NewAmount(d decimal.Decimal) *Amount { return &Amount{d} }

// MustAmount parses s; for constants in tests and examples only.
func MustAmount(s string) *Amount { return &Amount{decimal.RequireFromString(s)} }

// Dec returns the decimal value, zero for a nil amount.
func (a *Amount) Dec() decimal.Decimal {
	if a == nil {
		return decimal.Zero
	}
	return a.Decimal
}

// WireString is the amount as it goes on the wire: rounded half away from
// zero to cents, trailing zeros dropped.
func WireString(d decimal.Decimal) string { return d.Round(2).String() }

// MarshalJSON writes a bare JSON number.
func (a Amount) MarshalJSON() ([]byte, error) { return []byte(WireString(a.Decimal)), nil }

// UnmarshalJSON reads a JSON number or, liberally, a quoted one.
func (a *Amount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return fmt.Errorf("amount %q: not a decimal number", truncate(string(b), 32))
	}
	a.Decimal = d
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
