package views

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/store"
	"paydesk/ui/theme"
)

// money writes an amount with two decimals (more only when it has them: the
// text is always exact).
func money(d decimal.Decimal) string {
	if d.Exponent() >= -2 {
		return d.StringFixed(2)
	}
	return d.String()
}

// moneyCur is money with the currency code.
func moneyCur(d decimal.Decimal, cur string) string {
	if cur == "" {
		return money(d)
	}
	return money(d) + " " + clean(cur)
}

// age is a compact "how long ago": 45s, 12m, 5h, 3d, 6w.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "–"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	case d < 14*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24)) + "d"
	case d < 365*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24/7)) + "w"
	}
	return strconv.Itoa(int(d.Hours()/24/365)) + "y"
}

// ageChanges is the first instant after now at which age(t, ·) reads
// otherwise (or an earlier one, never a later).
func ageChanges(t, now time.Time) time.Time {
	d := now.Sub(t)
	if d < 0 {
		return t.Add(time.Second)
	}
	step := 365 * 24 * time.Hour
	switch {
	case d < time.Minute:
		step = time.Second
	case d < time.Hour:
		step = time.Minute
	case d < 48*time.Hour:
		step = time.Hour
	case d < 14*24*time.Hour:
		step = 24 * time.Hour
	case d < 365*24*time.Hour:
		// Weeks, up to the first year.
		return t.Add(min((d/(7*24*time.Hour)+1)*7*24*time.Hour, 365*24*time.Hour))
	}
	return t.Add((d/step + 1) * step)
}

// stamp is a timestamp for lists and details.
func (c *Context) stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.In(c.loc()).Format("2006-01-02 15:04:05")
}

// shortStamp is a timestamp for narrow columns: the time today, else the date.
func (c *Context) shortStamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	t = t.In(c.loc())
	now := c.Now().In(c.loc())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("01-02 15:04")
}

// windowOpen reports whether the 14-day shipment window matters for a state.
func windowOpen(s store.State) bool {
	return s == store.StateReserved || s == store.StatePartlyCaptured
}

// daysLeftCell shows the days left in the shipment window, coloured from
// three days before the end.
func daysLeftCell(s store.Summary, now time.Time) Cell {
	if !windowOpen(s.State) {
		return Cell{Text: "–", Paint: theme.PaintMuted}
	}
	d := s.DaysLeft(now)
	switch {
	case d < 0:
		return Cell{Text: fmt.Sprintf("%d late", -d), Paint: theme.PaintFailed}
	case d <= 3:
		return Cell{Text: strconv.Itoa(d), Paint: theme.PaintWarning}
	}
	return Cell{Text: strconv.Itoa(d)}
}

// stateText and statePaint name and colour a reservation state.
func stateText(s store.State) string { return s.Words() }

func statePaint(s store.State) string {
	switch s {
	case store.StateAwaitingCustomer:
		return theme.PaintPending
	case store.StateReserved:
		return theme.PaintAccent
	case store.StatePartlyCaptured:
		return theme.PaintPending
	case store.StateCaptured:
		return theme.PaintOK
	case store.StateCancelled, store.StateClosed:
		return theme.PaintMuted
	case store.StateDeclined:
		return theme.PaintFailed
	}
	return ""
}

// statusPaint colours a gateway status code.
func statusPaint(code int) string {
	switch {
	case code == 0:
		return theme.PaintMuted
	case code == 190:
		return theme.PaintOK
	case code >= 790 && code <= 799:
		return theme.PaintPending
	}
	return theme.PaintFailed
}

// kindText names a transaction kind.
func kindText(k store.Kind) string {
	switch k {
	case store.KindCapture:
		return "capture"
	case store.KindRefund:
		return "refund"
	case store.KindGiftCardPay:
		return "giftcard pay"
	case store.KindGiftCardRemainder:
		return "giftcard rest"
	case store.KindGiftCardRefund:
		return "giftcard refund"
	}
	return "unknown"
}

// shortKey shortens a 32-character transaction key for lists.
func shortKey(k string) string {
	if len(k) > 12 {
		return k[:8] + "…" + k[len(k)-3:]
	}
	return k
}

// countText is "12 of 40 reservations", "40 reservations" or "1
// reservation" (noun is the plural).
func countText(shown, total int, noun string) string {
	if shown == total {
		if total == 1 {
			return "1 " + singular(noun)
		}
		return thousands(total) + " " + noun
	}
	return thousands(shown) + " of " + thousands(total) + " " + noun
}

// plural is "1 reservation", "2 reservations" (noun is the plural).
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + singular(noun)
	}
	return thousands(n) + " " + noun
}

// singular is the singular of the lists' nouns: reservations, transactions,
// pushes, entries.
func singular(plural string) string {
	switch {
	case strings.HasSuffix(plural, "ies"):
		return strings.TrimSuffix(plural, "ies") + "y"
	case strings.HasSuffix(plural, "shes"):
		return strings.TrimSuffix(plural, "es")
	}
	return strings.TrimSuffix(plural, "s")
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// spread puts left and right on one line of the given width.
func spread(left, right string, w int) string {
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > w {
		if rw >= w {
			return ansi.Truncate(right, w, "…")
		}
		left = ansi.Truncate(left, w-rw-1, "…")
		lw = ansi.StringWidth(left)
	}
	return left + strings.Repeat(" ", max(w-lw-rw, 1)) + right
}

// padLines pads s with empty lines to h lines (and cuts it there).
func padLines(s string, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
