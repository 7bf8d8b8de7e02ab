package views

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/internal/report"
)

// The Money page: the last days' reserved, captured, cancelled and
// refunded money as `paydesk report` sums it, and a bar per day of what
// was captured and refunded, so a day that is off shows at a glance.

// MoneyDays is how many days the page covers, today included.
const MoneyDays = 14

// MoneyMsg carries the report the console loaded for the Money page.
type MoneyMsg struct {
	Report report.Report
	Err    error
}

// MoneyLoadIntent asks the console to load the page's report.
type MoneyLoadIntent struct{}

func (MoneyLoadIntent) intent() {}

// Money is the page.
type Money struct {
	ctx    *Context
	w, h   int
	rep    report.Report
	err    error
	loaded bool
}

// NewMoney makes the page; the console loads its report.
func NewMoney(ctx *Context) *Money { return &Money{ctx: ctx} }

func (m *Money) Title() string { return "Money" }

func (m *Money) SetSize(w, h int) { m.w, m.h = w, h }

func (m *Money) Capturing() bool { return false }

func (m *Money) Actions() []Action { return nil }

func (m *Money) Update(msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(MoneyMsg); ok {
		m.rep, m.err, m.loaded = msg.Report, msg.Err, true
	}
	return nil
}

// View draws the table, then the chart of the currency with the most
// captured.
func (m *Money) View() string {
	t := m.ctx.Theme
	var b strings.Builder
	b.WriteString(t.Accent.Render(fmt.Sprintf("Money · the last %d days, by day", MoneyDays)) + "\n\n")
	switch {
	case m.err != nil:
		b.WriteString(t.Failed.Render("cannot sum the ledger: "+clean(m.err.Error())) + "\n")
		return m.clip(b.String())
	case !m.loaded:
		b.WriteString(t.Muted.Render("summing the ledger…") + "\n")
		return m.clip(b.String())
	case len(m.rep.Rows) == 0:
		b.WriteString(t.Muted.Render("nothing reserved, captured, cancelled or refunded in these days") + "\n")
		return m.clip(b.String())
	}
	cols := []string{"DAY", "CUR", "RESERVED", "CAPTURED", "CANCELLED", "REFUNDED", "GIFT CARDS"}
	widths := []int{10, 3, 11, 11, 11, 11, 11}
	cell := func(i int, s string) string {
		if i < 2 {
			return s + strings.Repeat(" ", max(0, widths[i]-ansi.StringWidth(s)))
		}
		return strings.Repeat(" ", max(0, widths[i]-ansi.StringWidth(s))) + s
	}
	line := func(cells []string) string {
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = cell(i, c)
		}
		return strings.Join(parts, "  ")
	}
	b.WriteString(t.Header.Render(line(cols)) + "\n")
	row := func(r report.Row) []string {
		return []string{clean(r.Group), clean(r.Currency), money(r.Reserved), money(r.Captured), money(r.Cancelled), money(r.Refunded),
			money(r.GiftCardPaid.Sub(r.GiftCardRefnd))}
	}
	for _, r := range m.rep.Rows {
		b.WriteString(line(row(r)) + "\n")
	}
	for _, r := range m.rep.Totals {
		b.WriteString(t.Accent.Render(line(row(r))) + "\n")
	}
	// What the statements reconciled say was paid out, per currency: the
	// table has no room for two more columns at 90 wide.
	for _, r := range m.rep.Totals {
		if r.Settled.IsZero() && r.Fees.IsZero() {
			continue
		}
		b.WriteString(t.Muted.Render(fmt.Sprintf("settled by the statements reconciled: %s %s, fees %s %s", money(r.Settled), clean(r.Currency), money(r.Fees), clean(r.Currency))) + "\n")
	}
	cur := m.chartCurrency()
	b.WriteString("\n" + t.Accent.Render("Captured and refunded per day ("+clean(cur)+")") + "\n")
	top := decimal.Zero
	for _, r := range m.rep.Rows {
		if r.Currency == cur {
			top = decimal.Max(top, r.Captured, r.Refunded)
		}
	}
	barW := max(10, min(m.w, 100)-30)
	bar := func(v decimal.Decimal) int {
		if top.IsZero() || v.IsZero() {
			return 0
		}
		return max(1, int(v.Mul(decimal.NewFromInt(int64(barW))).Div(top).IntPart()))
	}
	for _, r := range m.rep.Rows {
		if r.Currency != cur {
			continue
		}
		day := clean(r.Group)
		if len(day) == 10 {
			day = day[5:] // MM-DD
		}
		c, f := bar(r.Captured), bar(r.Refunded)
		b.WriteString(fmt.Sprintf("%s  %s %s\n", day, t.OK.Render(strings.Repeat("█", c))+strings.Repeat(" ", barW-c), money(r.Captured)))
		if f > 0 {
			b.WriteString(fmt.Sprintf("%s  %s %s\n", strings.Repeat(" ", len(day)), t.Failed.Render(strings.Repeat("▒", f))+strings.Repeat(" ", barW-f),
				"-"+money(r.Refunded)))
		}
	}
	b.WriteString(t.Muted.Render("█ captured  ▒ refunded · paydesk report has the same figures (--by operator, --by service, --csv)") + "\n")
	return m.clip(b.String())
}

// chartCurrency is the currency with the most captured in the days.
func (m *Money) chartCurrency() string {
	best, cur := decimal.NewFromInt(-1), ""
	for _, r := range m.rep.Totals {
		if r.Captured.GreaterThan(best) {
			best, cur = r.Captured, r.Currency
		}
	}
	return cur
}

// clip keeps the page within its height.
func (m *Money) clip(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if m.h > 0 && len(lines) > m.h {
		lines = lines[:m.h]
	}
	return strings.Join(lines, "\n")
}
