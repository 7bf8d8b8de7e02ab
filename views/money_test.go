package views

import (
	"errors"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/shopspring/decimal"

	"paydesk/internal/report"
)

// TestGoldenMoney pins the Money page at 90×24: three days in euros and
// one in Swedish kronor; the chart draws the euros (the most captured),
// the biggest day full width, a refund under its day.
func TestGoldenMoney(t *testing.T) {
	ctx := NewContext(func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) })
	d := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	row := func(day, cur, reserved, captured, cancelled, refunded string) report.Row {
		return report.Row{Group: day, Currency: cur, Figures: report.Figures{Reserved: d(reserved), Captured: d(captured),
			Cancelled: d(cancelled), Refunded: d(refunded)}}
	}
	rep := report.Report{By: report.ByDay, Rows: []report.Row{
		row("2026-11-23", "EUR", "1200.00", "640.50", "0", "0"),
		row("2026-11-24", "EUR", "300.00", "1281.00", "64.90", "20.00"),
		row("2026-11-24", "SEK", "900.00", "450.00", "0", "0"),
		row("2026-11-25", "EUR", "0", "0", "0", "149.95"),
	}, Totals: []report.Row{
		row("total", "EUR", "1500.00", "1921.50", "64.90", "169.95"),
		row("total", "SEK", "900.00", "450.00", "0", "0"),
	}}
	// The statements reconciled paid out some of the euros.
	rep.Totals[0].Settled, rep.Totals[0].Fees = d("1751.55"), d("1.25")
	m := NewMoney(ctx)
	m.SetSize(90, 24)
	t.Run("loading", func(t *testing.T) { golden.RequireEqual(t, asciiView(m.View())) })
	m.Update(MoneyMsg{Report: rep})
	t.Run("days", func(t *testing.T) { golden.RequireEqual(t, asciiView(m.View())) })
	m.Update(MoneyMsg{Err: errors.New("cache is closed")})
	t.Run("error", func(t *testing.T) { golden.RequireEqual(t, asciiView(m.View())) })
}
