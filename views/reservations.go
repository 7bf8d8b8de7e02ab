package views

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/ui/keys"
	"paydesk/ui/theme"
)

// ReservationRow is one reservation of the list. It keeps only what
// sorting needs beside the summary: loading 100,000 of them must be cheap
// (the first frame waits for it), and text is cleaned and formatted for
// the visible rows only, or for the search block in the background.
type ReservationRow struct {
	Summary store.Summary
}

// NewReservationRow prepares a summary for the list.
func NewReservationRow(s store.Summary) *ReservationRow { return &ReservationRow{Summary: s} }

// NewReservationRows prepares many summaries.
func NewReservationRows(ss []store.Summary) []*ReservationRow {
	rows := make([]ReservationRow, len(ss)) // one allocation, not 100,000
	out := make([]*ReservationRow, len(ss))
	for i := range ss {
		rows[i].Summary = ss[i]
		out[i] = &rows[i]
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
	rcNumber:    {Title: "RESERVATION", Width: 12, Flex: true, Drop: 5},
	rcCustomer:  {Title: "CUSTOMER", Width: 12, Flex: true},
	rcCountry:   {Title: "CC", Width: 2, Drop: 3},
	rcAmount:    {Title: "AMOUNT", Width: 9, Right: true},
	rcCaptured:  {Title: "CAPTURED", Width: 9, Right: true},
	rcRemaining: {Title: "REMAINING", Width: 9, Right: true},
	rcState:     {Title: "STATE", Width: 15},
	rcAge:       {Title: "AGE", Width: 4, Right: true, Drop: 4},
	rcLeft:      {Title: "LEFT", Width: 6, Right: true},
}

// Reservations is the reservations tab. Its list reads the rows near the
// screen from the store (ReservationSourceMsg), sorted and filtered there;
// rows handed over whole (ReservationRowsMsg with Full) are paged the same
// way from memory.
type Reservations struct {
	ctx      *Context
	list     *resList
	mem      *memSource // the rows when they were handed over whole
	width    int
	height   int
	err      error
	stateIdx int  // index into reservationStates: the state filter (v)
	wide     int  // the widest invoice seen
	bulk     bool // the bulk menu is open (b, with marks)
	markCol  bool // the invoice column is widened for the mark column
	// title names a saved view's tab ("" the reservations tab).
	title string
	// textUntil is when the clock alone changes what View drew last (its
	// AGE and LEFT columns); zero: not known, the console draws every
	// second.
	textUntil time.Time
}

// TextUntil is the first instant at which the clock alone changes what
// View drew last; zero when that is not known.
func (s *Reservations) TextUntil() time.Time { return s.textUntil }

// reservationSortable are the columns s cycles through.
var reservationSortable = []int{rcAge, rcInvoice, rcCustomer, rcAmount, rcState, rcLeft}

// reservationStates are the state filter's steps, cycled with v; "unknown"
// is an operation whose outcome is unknown.
var reservationStates = []store.State{"", store.StateAwaitingCustomer, store.StateReserved, store.StatePartlyCaptured,
	store.StateCaptured, store.StateClosed, store.StateCancelled, store.StateDeclined, store.StateOutcomeUnknown}

func stateFilterText(s store.State) string {
	if s == store.StateOutcomeUnknown {
		return "outcome unknown"
	}
	return listStateText(s)
}

// NewReservations makes the reservations tab, newest first.
func NewReservations(ctx *Context) *Reservations {
	return &Reservations{ctx: ctx, list: newResList(ctx)}
}

// SetSize sets the screen size.
func (s *Reservations) SetSize(w, h int) {
	s.width, s.height = w, h
	s.list.table.SetSize(w, h-1)
}

// Capturing is true while the filter prompt is open.
func (s *Reservations) Capturing() bool { return s.list.prompt || s.bulk }

func (s *Reservations) page(info, body string) string {
	return info + "\n" + padLines(body, s.height-1)
}

// fitIdentifiers widens the invoice column to the widest invoice seen:
// the operator reads invoices (two cut to the same prefix look alike), so
// they are shown whole and the customer's name gives way. The reservation
// number (a UUID at some providers) stays a flexible column, whole on the
// detail page and found by the filter.
func (s *Reservations) fitIdentifiers(invoice string) {
	if w := width(invoice); w > s.wide && s.wide < 40 {
		s.wide = min(w, 40)
		s.list.table.FitColumn(rcInvoice, s.wide+2*btoi(s.markCol))
	}
}

// NewReservationView makes the tab of a saved view: the reservations that
// filter (in the filter language) keeps, and what "/" adds to it.
func NewReservationView(ctx *Context, name, filter string) *Reservations {
	s := NewReservations(ctx)
	s.title, s.list.viewFilter = name, filter
	return s
}

// Title names the tab.
func (s *Reservations) Title() string {
	if s.title != "" {
		return s.title
	}
	return "Reservations"
}

// Actions are the tab's keys.
func (s *Reservations) Actions() []Action {
	k := s.ctx.Keys
	return []Action{{Key: k.Open}, {Key: k.Filter}, {Key: k.FilterState}, {Key: k.Sort}, {Key: k.Reverse},
		{Key: k.NewReservation, Changes: true}, {Key: k.Capture, Changes: true}, {Key: k.Cancel, Changes: true},
		{Key: k.Update, Changes: true}, {Key: ReturnKey(k.Refund), Changes: true}, {Key: k.GiftCardPay, Changes: true},
		{Key: k.ExportCSV}, {Key: k.ExportJSON}, {Key: k.Mark}, {Key: k.MarkRange}, {Key: k.MarkAll}, {Key: k.Bulk}}
}

// Answered says the list has had its first answer from its source: its
// first rows, or the error reading them.
func (s *Reservations) Answered() bool { return s.list.loaded || s.list.err != nil || s.err != nil }

// Update handles rows, keys and the wheel.
func (s *Reservations) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case ReservationSourceMsg:
		s.err = nil
		s.mem = nil
		return s.list.setSource(resPages{m.Source}, false)
	case ReservationRowsMsg:
		s.err = m.Err
		switch {
		case m.Err != nil:
			return nil
		case m.Full:
			// Rows handed over whole: paged from memory.
			mem := &memSource{all: make([]store.Summary, len(m.Rows))}
			for i, r := range m.Rows {
				mem.all[i] = r.Summary
			}
			s.mem = mem
			return s.list.setSource(resPages{mem}, true)
		}
		if s.mem != nil {
			s.mem.upsert(m.Rows, m.Removed)
		}
		by := make(map[string]*ReservationRow, len(m.Rows))
		for _, r := range m.Rows {
			by[r.Summary.Key] = r
		}
		return s.list.changed(func(r *store.PageRow) {
			if n, ok := by[r.Summary.Key]; ok {
				r.Summary = n.Summary
			}
		})
	case exportRowsMsg:
		if m.tab != s {
			return nil
		}
		if m.err != nil {
			s.err = m.err
			return nil
		}
		return send(s.export(m.format, m.rows))
	}
	if key, ok := msg.(tea.KeyPressMsg); ok && s.bulk {
		return s.bulkKey(key)
	}
	cmd, done := s.list.update(msg)
	if p, ok := msg.(pagedPageMsg[store.PageRow]); ok && p.l == s.list {
		for _, r := range s.list.rows {
			s.fitIdentifiers(r.Summary.Invoice)
		}
	}
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
	case keyIs(key, k.Bulk) && s.list.marks.count() > 0:
		s.bulk = true
		return nil
	case keyIs(key, k.NewReservation):
		return send(NewReservationIntent{})
	case keyIs(key, k.GiftCardPay):
		return send(GiftCardPayIntent{})
	case keyIs(key, k.FilterState):
		s.stateIdx = (s.stateIdx + 1) % len(reservationStates)
		s.list.state = reservationStates[s.stateIdx]
		return s.list.restart()
	case keyIs(key, k.ExportCSV), keyIs(key, k.ExportJSON):
		return s.exportCmd(exportFormat(key, k))
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
	case keyIs(key, k.Refund):
		return send(ReturnIntent{ReservationKey: sel.Summary.Key})
	}
	return nil
}

// View draws the tab.
func (s *Reservations) View() string {
	extra := ""
	if st := reservationStates[s.stateIdx]; st != "" {
		extra = "state: " + stateFilterText(st) + " (v)"
	}
	if m := s.list.marksText(); m != "" {
		extra = joinNonEmpty(m+" (b: bulk)", extra)
	}
	info := s.list.infoLine(s.width, "reservations", reservationColumns[s.list.sortCol].Title, extra)
	if s.bulk {
		info = s.bulkMenu()
	}
	s.textUntil = time.Time{}
	if s.err == nil {
		s.err = s.list.err
	}
	if s.err != nil {
		return s.page(info, s.ctx.Theme.Failed.Render(loadErrorText(s.err)))
	}
	if s.list.len() == 0 {
		return s.page(info, s.empty())
	}
	now := s.ctx.Now()
	// The ages change each at its own step; the days left at midnight.
	until := newTextUntil(now)
	until.note(nextMidnight(now))
	marking := s.list.marks.count() > 0
	if marking != s.markCol && s.wide > 0 {
		// The mark column takes two cells of the invoice's: it widens.
		s.markCol = marking
		s.list.table.FitColumn(rcInvoice, s.wide+2*btoi(marking))
	}
	body := s.list.table.View(func(i int, out []Cell) {
		r, ok := s.list.at(i)
		if !ok {
			// Not read yet (the window follows the screen).
			out[rcInvoice] = Cell{Text: "…", Paint: theme.PaintMuted}
			return
		}
		sum := &r.Summary
		st := sum.State
		out[rcInvoice] = Cell{Text: clean(sum.Invoice)}
		if marking {
			// The mark column: the first two cells of the invoice, while
			// anything is marked.
			mark := "  "
			if s.list.marked(i) {
				mark = "* "
			}
			out[rcInvoice] = Cell{Text: mark + clean(sum.Invoice)}
		}
		out[rcNumber] = Cell{Text: clean(sum.ReservationNumber), Paint: theme.PaintMuted}
		out[rcCustomer] = Cell{Text: clean(sum.Customer)}
		out[rcCountry] = Cell{Text: clean(sum.Country)}
		out[rcAmount] = Cell{Text: money(sum.Amount)}
		out[rcCaptured] = Cell{Text: money(sum.Captured)}
		out[rcRemaining] = Cell{Text: money(sum.Remaining)}
		if sum.LinesUnknown {
			// Only a push was seen: what it reserved is not known here.
			out[rcAmount] = Cell{Text: "?", Paint: theme.PaintMuted}
			if sum.State == store.StateReserved || sum.State == store.StatePartlyCaptured {
				out[rcRemaining] = Cell{Text: "?", Paint: theme.PaintMuted}
			}
		}
		if r.Summary.OutcomeUnknown {
			out[rcState] = Cell{Text: "⚠ unknown", Paint: theme.PaintWarning}
		} else {
			out[rcState] = Cell{Text: listStateText(st), Paint: statePaint(st)}
		}
		out[rcAge] = Cell{Text: age(r.Summary.Created, now), Paint: theme.PaintMuted}
		out[rcLeft] = daysLeftCell(r.Summary, now)
		if !r.Summary.Created.IsZero() {
			until.note(ageChanges(r.Summary.Created, now))
		}
	})
	s.textUntil = until.at
	return s.page(info, body)
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
	if s.list.query != "" || s.list.state != "" || s.list.all > 0 {
		return "\n  " + t.Muted.Render("No reservation matches the filter — press esc to clear it.")
	}
	hint := emptyHint(s.ctx)
	if s.ctx.ReadOnly {
		hint = "this console is read-only (--read-only, or a database role that may only read): what others store shows here as it arrives"
	}
	return "\n  " + t.Accent.Render("No reservations yet.") +
		"\n  " + t.Muted.Render(strings.ToUpper(hint[:1])+hint[1:]+".") +
		"\n\n  " + t.Muted.Render("Pushes from the gateway show up here and in the Pushes tab (3) as they arrive.") + s.intakeHint()
}

// emptyHint says what fills an empty console: --demo fills only the
// embedded sandbox (it is refused against a gateway), a test gateway takes
// test reservations, a live one only what arrives. Not "run paydesk
// --demo": under `go run .` there is no paydesk to run; the flag is what
// the user needs, however they started it.
func emptyHint(ctx *Context) string {
	switch {
	case ctx.Live:
		return "reservations appear here as the gateway's pushes arrive (and as the webshop's orders come in)"
	case ctx.CanResend:
		return "press n to create a test reservation, or quit and start again with --demo"
	}
	return "press n to create a test reservation"
}

// intakeHint tells where a webshop's orders go, when the console has an
// order intake.
func (s *Reservations) intakeHint() string {
	if s.ctx.IntakeURL == "" {
		return ""
	}
	t := s.ctx.Theme
	return "\n  " + t.Muted.Render("Orders from a webshop: the shop posts the Reserve envelope it sent the gateway (signed) to") +
		"\n    " + clean(s.ctx.IntakeURL) + "\n  " + t.Muted.Render("or run paydesk import FILE.")
}

// exportRowsMsg carries every row that passes the filter, read for an
// export.
type exportRowsMsg struct {
	tab    *Reservations
	format string
	rows   []store.Summary
	err    error
}

// exportCmd reads every row that passes the filter (in a command: a big
// list takes a while), then asks for the export.
func (s *Reservations) exportCmd(format string) tea.Cmd {
	if s.list.src == nil {
		return send(s.export(format, nil))
	}
	q, err := s.list.wholeQuestion()
	if err != nil {
		return Status(LevelWarn, "nothing exported: "+FilterErrorText(err))
	}
	src := s.list.src
	run := func() tea.Msg {
		rows, err := everything(src, pageRowPos, q)
		sums := make([]store.Summary, len(rows))
		for i := range rows {
			sums[i] = rows[i].Summary
		}
		return exportRowsMsg{tab: s, format: format, rows: sums, err: err}
	}
	if s.list.sync {
		return s.Update(run())
	}
	return run
}

func (s *Reservations) export(format string, rows []store.Summary) ExportIntent {
	now := s.ctx.Now()
	return ExportIntent{Name: "reservations", Format: format, Table: ExportTable{
		Columns: []string{"key", "reservation_number", "invoice", "customer", "country", "currency", "amount", "captured", "remaining", "state", "created", "days_left"},
		Len:     len(rows),
		Row: func(i int) []string {
			s := rows[i]
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

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " · " + b
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
