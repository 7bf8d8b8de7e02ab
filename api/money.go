package api

import (
	"fmt"
	"strconv"
	"strings"

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
func WireString(d decimal.Decimal) string {
	e := d.Exponent()
	if e < -2 || e > 0 || d.NumDigits() > 17 {
		return d.Round(2).String()
	}
	// Fast path for the common case of at most two decimals: decimal's own
	// String goes through math/big and allocates several times per amount.
	c := d.CoefficientInt64()
	var buf [24]byte
	b := buf[:0]
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	scale := int(-e)
	pow := int64(1)
	for i := 0; i < scale; i++ {
		pow *= 10
	}
	whole, frac := c/pow, c%pow
	for scale > 0 && frac%10 == 0 {
		frac /= 10
		scale--
	}
	b = strconv.AppendInt(b, whole, 10)
	if scale > 0 {
		b = append(b, '.')
		if scale == 2 && frac < 10 {
			b = append(b, '0')
		}
		b = strconv.AppendInt(b, frac, 10)
	}
	return string(b)
}

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

// ParsePlainDecimal reads a decimal as people and spreadsheets write it: an
// optional sign, digits, and a decimal point or comma. Exponents ("1e2"),
// thousands separators, spaces inside and "NaN" are refused, so a typo never
// becomes a different amount.
func ParsePlainDecimal(s string) (decimal.Decimal, error) {
	t := strings.TrimSpace(s)
	body := strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")
	digits, seps := 0, 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || c == ',':
			seps++
		default:
			return decimal.Zero, fmt.Errorf("%q is not a plain decimal number (digits with one decimal point)", truncate(s, 40))
		}
	}
	if digits == 0 || seps > 1 {
		return decimal.Zero, fmt.Errorf("%q is not a plain decimal number (digits with one decimal point)", truncate(s, 40))
	}
	return decimal.NewFromString(strings.Replace(t, ",", ".", 1))
}
