package ui

import (
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/report"
	"paydesk/views"
)

// openMoney opens the Money page and sums the ledger for it.
func (a *App) openMoney() tea.Cmd {
	a.openPage(views.NewMoney(a.vctx))
	return a.loadMoney()
}

// loadMoney sums the last views.MoneyDays days, as paydesk report does.
func (a *App) loadMoney() tea.Cmd {
	src, ok := a.cfg.Store.(report.Source)
	now, loc := a.cfg.Now(), a.cfg.Location
	if loc == nil {
		loc = time.Local
	}
	return func() tea.Msg {
		if !ok {
			return views.MoneyMsg{Err: errors.New("this cache cannot be summed")}
		}
		rep, err := report.Load(a.opsCtx(), src, report.ByDay, now.AddDate(0, 0, -(views.MoneyDays-1)), now, loc)
		return views.MoneyMsg{Report: rep, Err: err}
	}
}
