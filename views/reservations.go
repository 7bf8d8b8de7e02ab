package views

import (
	"cmp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/ui/keys"
	"paydesk/ui/theme"
)

// ReservationRow is one reservation as the list draws and searches it,
// prepared once when it is loaded (outside Update) so drawing and filtering
// do no formatting and no cleaning.
type ReservationRow struct {
	Summary store.Summary

	invoice, customer, country, number string
	amount, captured, remaining        string
	hay                                string // lower-case search text
	cents                              int64  // amount in cents, for sorting
	created                            int64
}

// NewReservationRow prepares a summary for the list.
func NewReservationRow(s store.Summary) *ReservationRow {
	r := &ReservationRow{Summary: s,
		invoice: clean(s.Invoice), customer: clean(s.Customer), country: clean(s.Country), number: clean(s.ReservationNumber),
		amount: money(s.Amount), captured: money(s.Captured), remaining: money(s.Remaining),
		cents: s.Amount.Shift(2).IntPart(), created: s.Created.UnixNano()}
	r.hay = strings.ToLower(r.invoice + "\x00" + r.customer + "\x00" + r.number + "\x00" + clean(s.Key) + "\x00" + clean(s.Articles))
	return r
}

// NewReservationRows prepares many summaries.
func NewReservationRows(ss []store.Summary) []*ReservationRow {
	out := make([]*ReservationRow, len(ss))
	for i := range ss {
		out[i] = NewReservationRow(ss[i])
	}
	return out
}

// Reservation list columns.
const (
	rcInvoice = iota
	rcNumber
	rcCustomer
	rcCountry
	rcAmount
	rcCaptured
	rcRemaining
	rcState
	rcAge
	rcLeft
)

var reservationColumns = []Column{
	rcInvoice:   {Title: "INVOICE", Width: 13},
	rcNumber:    {Title: "RESERVATION", Width: 12, Drop: 5},
	rcCustomer:  {Title: "CUSTOMER", Width: 12, Flex: true},
	rcCountry:   {Title: "CC", Width: 2, Drop: 3},
	rcAmount:    {Title: "AMOUNT", Width: 9, Right: true},
	rcCaptured:  {Title: "CAPTURED", Width: 9, Right: true},
	rcRemaining: {Title: "REMAINING", Width: 9, Right: true},
	rcState:     {Title: "STATE", Width: 15},
	rcAge:       {Title: "AGE", Width: 4, Right: true, Drop: 4},
	rcLeft:      {Title: "LEFT", Width: 6, Right: true},
}

var stateRank = map[store.State]int{
	store.StateAwaitingCustomer: 0, store.StateReserved: 1, store.StatePartlyCaptured: 2,
	store.StateCaptured: 3, store.StateClosed: 4, store.StateCancelled: 5, store.StateDeclined: 6,
}

func compareReservations(a, b *ReservationRow, col int) int {
	var c int
	switch col {
	case rcInvoice:
		c = strings.Compare(a.invoice, b.invoice)
	case rcNumber:
		c = strings.Compare(a.number, b.number)
	case rcCustomer:
		c = strings.Compare(a.hayCustomer(), b.hayCustomer())
	case rcAmount:
		c = cmp.Compare(a.cents, b.cents)
	case rcState:
		c = cmp.Compare(stateRank[a.Summary.State], stateRank[b.Summary.State])
	case rcAge, rcLeft:
		c = cmp.Compare(a.created, b.created)
	}
	if c == 0 {
		c = cmp.Compare(a.created, b.created)
	}
	return c
}

func (r *ReservationRow) hayCustomer() string {
	i := strings.IndexByte(r.hay, 0)
	j := strings.IndexByte(r.hay[i+1:], 0)
	return r.hay[i+1 : i+1+j]
}

// Reservations is the reservations tab.
type Reservations struct {
	ctx    *Context
	list   *list[*ReservationRow]
	width  int
	height int
	err    error
}

// NewReservations makes the reservations tab, newest first.
func NewReservations(ctx *Context) *Reservations {
	spec := rowSpec[*ReservationRow]{
		key:      func(r *ReservationRow) string { return r.Summary.Key },
		haystack: func(r *ReservationRow) string { return r.hay },
		compare:  compareReservations,
		sortable: []int{rcAge, rcInvoice, rcCustomer, rcAmount, rcState, rcLeft},
	}
	return &Reservations{ctx: ctx, list: newList(ctx, reservationColumns, spec, rcAge, true)}
}

// Title names the tab.
func (s *Reservations) Title() string { return "Reservations" }

// SetSize sets the screen size.
func (s *Reservations) SetSize(w, h int) {
	s.width, s.height = w, h
	s.list.table.SetSize(w, h-1)
}

// Capturing is true while the filter prompt is open.
func (s *Reservations) Capturing() bool { return s.list.prompt }

// Actions are the tab's keys.
func (s *Reservations) Actions() []Action {
	k := s.ctx.Keys
	return []Action{{Key: k.Open}, {Key: k.Filter}, {Key: k.Sort}, {Key: k.Reverse},
		{Key: k.NewReservation, Changes: true}, {Key: k.Capture, Changes: true}, {Key: k.Cancel, Changes: true},
		{Key: k.Update, Changes: true}, {Key: k.GiftCardPay, Changes: true},
		{Key: k.ExportCSV}, {Key: k.ExportJSON}}
}

// Update handles rows, keys and the wheel.
func (s *Reservations) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ReservationRowsMsg:
		if msg.Err != nil {
			s.err = msg.Err
			return nil
		}
		s.err = nil
		if msg.Full {
			return s.list.setRows(msg.Rows)
		}
		return s.list.upsert(msg.Rows)
	}
	cmd, done := s.list.update(msg)
	if done {
		return cmd
	}
	key, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := s.ctx.Keys
	sel, has := s.list.selected()
	switch {
	case keyIs(key, k.NewReservation):
		return send(NewReservationIntent{})
	case keyIs(key, k.GiftCardPay):
		return send(GiftCardPayIntent{})
	case keyIs(key, k.ExportCSV), keyIs(key, k.ExportJSON):
		return send(s.export(exportFormat(key, k)))
	}
	if !has {
		return nil
	}
	switch {
	case keyIs(key, k.Open):
		return send(OpenReservation{Key: sel.Summary.Key})
	case keyIs(key, k.Capture):
		return send(CaptureIntent{ReservationKey: sel.Summary.Key})
	case keyIs(key, k.Cancel):
		return send(CancelIntent{ReservationKey: sel.Summary.Key})
	case keyIs(key, k.Update):
		return send(UpdateIntent{ReservationKey: sel.Summary.Key})
	}
	return nil
}

// View draws the tab.
func (s *Reservations) View() string {
	info := s.list.infoLine(s.width, "reservations", reservationColumns[s.list.sortCol].Title, "")
	if s.err != nil {
		return info + "\n" + padLines(s.ctx.Theme.Failed.Render("Could not read the cache: "+clean(s.err.Error())), s.height-1)
	}
	if s.list.len() == 0 {
		return info + "\n" + padLines(s.empty(), s.height-1)
	}
	now := s.ctx.Now()
	body := s.list.table.View(func(i int, out []Cell) {
		r := s.list.at(i)
		st := r.Summary.State
		out[rcInvoice] = Cell{Text: r.invoice}
		out[rcNumber] = Cell{Text: r.number, Paint: theme.PaintMuted}
		out[rcCustomer] = Cell{Text: r.customer}
		out[rcCountry] = Cell{Text: r.country}
		out[rcAmount] = Cell{Text: r.amount}
		out[rcCaptured] = Cell{Text: r.captured}
		out[rcRemaining] = Cell{Text: r.remaining}
		if r.Summary.OutcomeUnknown {
			out[rcState] = Cell{Text: "⚠ unknown", Paint: theme.PaintWarning}
		} else {
			out[rcState] = Cell{Text: listStateText(st), Paint: statePaint(st)}
		}
		out[rcAge] = Cell{Text: age(r.Summary.Created, now), Paint: theme.PaintMuted}
		out[rcLeft] = daysLeftCell(r.Summary, now)
	})
	return info + "\n" + padLines(body, s.height-1)
}

func listStateText(s store.State) string {
	if s == store.StateAwaitingCustomer {
		return "customer step"
	}
	return stateText(s)
}

func (s *Reservations) empty() string {
	t := s.ctx.Theme
	if !s.list.loaded {
		return "\n  " + t.Muted.Render("Loading the cache…")
	}
	if s.list.query != "" || len(s.list.rows) > 0 {
		return "\n  " + t.Muted.Render("No reservation matches the filter — press esc to clear it.")
	}
	hint := "press n to create a test reservation, or run paydesk --demo"
	if s.ctx.ReadOnly {
		hint = "this console is read-only; run paydesk --demo to fill a sandbox"
	}
	return "\n  " + t.Accent.Render("No reservations yet.") +
		"\n  " + t.Muted.Render(strings.ToUpper(hint[:1])+hint[1:]+".") +
		"\n\n  " + t.Muted.Render("Pushes from the gateway show up here and in the Pushes tab (3) as they arrive.")
}

func (s *Reservations) export(format string) ExportIntent {
	rows := s.list.visible()
	now := s.ctx.Now()
	return ExportIntent{Name: "reservations", Format: format, Table: ExportTable{
		Columns: []string{"key", "reservation_number", "invoice", "customer", "country", "currency", "amount", "captured", "remaining", "state", "created", "days_left"},
		Len:     len(rows),
		Row: func(i int) []string {
			s := rows[i].Summary
			return []string{s.Key, s.ReservationNumber, s.Invoice, s.Customer, s.Country, s.Currency,
				money(s.Amount), money(s.Captured), money(s.Remaining), string(s.State), s.Created.UTC().Format(timeFormatExport), itoa(s.DaysLeft(now))}
		}}}
}

func keyIs(msg tea.KeyPressMsg, b key.Binding) bool { return key.Matches(msg, b) }

// exportFormat is "json" for the JSON export key, else "csv".
func exportFormat(msg tea.KeyPressMsg, k *keys.KeyMap) string {
	if key.Matches(msg, k.ExportJSON) {
		return "json"
	}
	return "csv"
}
