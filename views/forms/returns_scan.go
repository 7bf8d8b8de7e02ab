package forms

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

// Scan mode at the warehouse door: the articles of a returned parcel are
// scanned one by one (ctrl+s), each code + enter one unit of its line,
// never more than came to the customer and is not refunded yet. What is
// counted is the form's own units fields, so the return is refunded by
// line as typed would be — and above the approval threshold it becomes
// one approval request (ops.Service.RefundReturn) for finance to approve.

func (s *returnSpec) scan(code string) (string, verdict) {
	code = Clean(code)
	// The capture form's matching: article number, or an EAN read with
	// leading zeros.
	i := (&captureSpec{res: s.res}).lineFor(code)
	if i < 0 {
		return fmt.Sprintf("%s is not an article of this reservation", code), verdictUnknown
	}
	l := s.res.Lines[i]
	left := s.left(l.ArticleNumber)
	n, err := strconv.Atoi(strings.TrimSpace(s.units[i]))
	if err != nil || n < 0 {
		n = 0
	}
	if n >= left {
		return fmt.Sprintf("%s: all %d shipped and not refunded already counted: nothing counted", Clean(l.ArticleNumber), left), verdictOver
	}
	n++
	s.units[i] = strconv.Itoa(n)
	return fmt.Sprintf("%s · %s: %d of %d back", Clean(l.ArticleNumber), trunc(Clean(l.Title), 32), n, left), verdictCounted
}

func (s *returnSpec) scanLines() []string {
	var out []string
	units := 0
	total := decimal.Zero
	for i, l := range s.res.Lines {
		left := s.left(l.ArticleNumber)
		n, _ := strconv.Atoi(strings.TrimSpace(s.units[i]))
		mark := " "
		switch {
		case left == 0:
			mark = "-"
		case n == left:
			mark = "✓"
		}
		out = append(out, fmt.Sprintf("%s %-10s %-32s %3d of %d", mark, trunc(Clean(l.ArticleNumber), 10), trunc(Clean(l.Title), 32), n, left))
		units += n
		total = total.Add(l.Price.Mul(decimal.NewFromInt(int64(n))))
	}
	return append(out, titleStyle.Render(fmt.Sprintf("Back %d unit(s) · %s %s", units, total.StringFixed(2), s.res.Currency)))
}
