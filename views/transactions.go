package views

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/ui/theme"
)

// TransactionRow is a transaction prepared for the list.
type TransactionRow struct {
	Tx *store.Transaction

	key, kind, service, invoice, customer, number, amount, status, link string
	pos                                                                 []byte // its position in the store's list
}

// NewTransactionRow prepares a transaction for the list.
func NewTransactionRow(t *store.Transaction) *TransactionRow {
	r := &TransactionRow{Tx: t, key: clean(t.Key), kind: kindText(t.Kind), service: clean(t.ServiceCode),
		invoice: clean(t.Invoice), customer: clean(t.CustomerName), number: clean(t.ReservationNumber), amount: money(t.Amount),
		status: clean(t.Status.Text())}
	if t.Kind.IsRefund() {
		r.amount = "-" + r.amount
	}
	r.link = linkText(t)
	return r
}

// NewTransactionRows prepares many transactions.
func NewTransactionRows(ts []*store.Transaction) []*TransactionRow {
	out := make([]*TransactionRow, len(ts))
	for i, t := range ts {
		out[i] = NewTransactionRow(t)
	}
	return out
}

// linkText says how a transaction hangs together with others.
func linkText(t *store.Transaction) string {
	switch {
	case t.Kind.IsRefund() && t.Original != "":
		return "↩ refund of " + shortKey(clean(t.Original))
	case t.Group != "":
		return "part of " + shortKey(clean(t.Group))
	case len(t.Refunds) > 0:
		return "refunded " + money(t.Refunded) + " (" + itoa(len(t.Refunds)) + ")"
	case t.ReservationNumber != "":
		return "reservation " + clean(t.ReservationNumber)
	}
	return ""
}

const (
	tcTime = iota
	tcKey
	tcKind
	tcService
	tcInvoice
	tcCustomer
	tcAmount
	tcStatus
	tcLink
)

var transactionColumns = []Column{
	tcTime:     {Title: "TIME", Width: 11, Drop: 5},
	tcKey:      {Title: "KEY", Width: 12},
	tcKind:     {Title: "KIND", Width: 15},
	tcService:  {Title: "SERVICE", Width: 15, Drop: 6},
	tcInvoice:  {Title: "INVOICE", Width: 13},
	tcCustomer: {Title: "CUSTOMER", Width: 16, Drop: 4},
	tcAmount:   {Title: "AMOUNT", Width: 9, Right: true},
	tcStatus:   {Title: "STATUS", Width: 16},
	tcLink:     {Title: "LINKED", Width: 10, Flex: true},
}

// txSortOf maps a column to the store's order.
func txSortOf(col int) store.SortBy {
	switch col {
	case tcKind:
		return store.TxSortKind
	case tcInvoice:
		return store.TxSortInvoice
	case tcCustomer:
		return store.TxSortCustomer
	case tcAmount:
		return store.TxSortAmount
	case tcStatus:
		return store.TxSortStatus
	}
	return store.TxSortCreated
}

// TransactionSource answers the transaction list's queries: the store,
// which sorts and filters in its indexes, or transactions held in memory.
type TransactionSource interface {
	TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error)
	TransactionCount(ctx context.Context, q store.PageQuery) (int, error)
}

// TransactionSourceMsg gives the transactions tab its source: from then
// on it reads pages from it.
type TransactionSourceMsg struct{ Source TransactionSource }

// txPages is a TransactionSource as a paged list's source.
type txPages struct{ src TransactionSource }

func (s txPages) Page(ctx context.Context, q Query[TransactionRow]) (pageOf[TransactionRow], error) {
	if q.Keep != nil {
		return pageOf[TransactionRow]{}, errKeepInStore{"transaction"}
	}
	p, err := s.src.TransactionPage(ctx, q.PageQuery)
	rows := make([]TransactionRow, len(p.Rows))
	for i, r := range p.Rows {
		rows[i] = *NewTransactionRow(r.Tx)
		rows[i].pos = r.Pos
	}
	return pageOf[TransactionRow]{rows: rows, total: p.Total, more: p.More, less: p.Less}, err
}

func (s txPages) Count(ctx context.Context, q Query[TransactionRow]) (int, error) {
	if q.Keep != nil {
		return 0, errKeepInStore{"transaction"}
	}
	return s.src.TransactionCount(ctx, q.PageQuery)
}

// txMem is a source over transactions held in memory (rows handed over
// whole).
type txMem struct{ all []*store.Transaction }

func (m *txMem) TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error) {
	return store.PageTransactions(m.all, q), nil
}

func (m *txMem) TransactionCount(ctx context.Context, q store.PageQuery) (int, error) {
	return memCount(q, func(q store.PageQuery) int { return store.PageTransactions(m.all, q).Total }), nil
}

func (m *txMem) upsert(rows []*TransactionRow) {
	fresh := make([]*store.Transaction, len(rows))
	for i, r := range rows {
		fresh[i] = r.Tx
	}
	m.all = upsertBy(m.all, fresh, func(t *store.Transaction) string { return t.Key })
}

var txSpec = pagedSpec[TransactionRow]{
	key:      func(r *TransactionRow) string { return r.Tx.Key },
	pos:      func(r *TransactionRow) []byte { return r.pos },
	sortOf:   txSortOf,
	sortable: []int{tcTime, tcKind, tcInvoice, tcCustomer, tcAmount, tcStatus},
	filter:   store.TransactionFilter,
}

// Transactions is the transactions tab: captures, refunds and gift card
// payments, linked to what they belong to. Like the reservations, its
// list reads the rows near the screen from the store
// (TransactionSourceMsg); rows handed over whole (TransactionRowsMsg with
// Full) are paged the same way from memory.
type Transactions struct {
	ctx    *Context
	list   *pagedList[TransactionRow]
	mem    *txMem
	width  int
	height int
	err    error
	wide   int // the widest invoice seen
}

// NewTransactions makes the transactions tab, newest first.
func NewTransactions(ctx *Context) *Transactions {
	return &Transactions{ctx: ctx, list: newPagedList(ctx, transactionColumns, txSpec, tcTime)}
}

// SetSize sets the screen size.
func (s *Transactions) SetSize(w, h int) {
	s.width, s.height = w, h
	s.list.table.SetSize(w, h-1)
}

// Capturing is true while the filter prompt is open.
func (s *Transactions) Capturing() bool { return s.list.prompt }

func (s *Transactions) page(info, body string) string {
	return info + "\n" + padLines(body, s.height-1)
}

// Title names the tab.
func (s *Transactions) Title() string { return "Transactions" }

// Actions are the tab's keys.
func (s *Transactions) Actions() []Action {
	k := s.ctx.Keys
	return []Action{{Key: k.Open}, {Key: k.Filter}, {Key: k.Sort}, {Key: k.Reverse},
		{Key: k.Refund, Changes: true}, {Key: k.GiftCardPay, Changes: true}, {Key: k.ExportCSV}, {Key: k.ExportJSON}}
}

// Update handles rows, keys and the wheel.
func (s *Transactions) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case TransactionSourceMsg:
		s.err, s.mem = nil, nil
		return s.list.setSource(txPages{m.Source}, false)
	case TransactionRowsMsg:
		s.err = m.Err
		switch {
		case m.Err != nil:
			return nil
		case m.Full:
			mem := &txMem{all: make([]*store.Transaction, len(m.Rows))}
			for i, r := range m.Rows {
				mem.all[i] = r.Tx
			}
			s.mem = mem
			return s.list.setSource(txPages{mem}, true)
		}
		if s.mem != nil {
			s.mem.upsert(m.Rows)
		}
		by := make(map[string]*TransactionRow, len(m.Rows))
		for _, r := range m.Rows {
			by[r.Tx.Key] = r
		}
		return s.list.changed(func(r *TransactionRow) {
			if n, ok := by[r.Tx.Key]; ok {
				pos := r.pos // where the row is in the list read
				*r = *n
				r.pos = pos
			}
		})
	case exportTxMsg:
		if m.tab != s {
			return nil
		}
		if m.err != nil {
			s.err = m.err
			return nil
		}
		return send(s.export(m.format, m.rows))
	}
	cmd, done := s.list.update(msg)
	if p, ok := msg.(pagedPageMsg[TransactionRow]); ok && p.l == s.list {
		// Invoices are shown whole (see Reservations.fitIdentifiers).
		for _, r := range s.list.rows {
			if w := width(r.invoice); w > s.wide && s.wide < 40 {
				s.wide = min(w, 40)
				s.list.table.FitColumn(tcInvoice, s.wide)
			}
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
	switch {
	case keyIs(key, k.GiftCardPay):
		return send(GiftCardPayIntent{})
	case keyIs(key, k.ExportCSV), keyIs(key, k.ExportJSON):
		return s.exportCmd(exportFormat(key, k))
	}
	sel, has := s.list.selected()
	if !has {
		return nil
	}
	switch {
	case keyIs(key, k.Open):
		return send(OpenTransaction{Key: sel.Tx.Key})
	case keyIs(key, k.Refund):
		return send(RefundIntent{TransactionKey: sel.Tx.Key})
	}
	return nil
}

// View draws the tab.
func (s *Transactions) View() string {
	t := s.ctx.Theme
	info := s.list.infoLine(s.width, "transactions", transactionColumns[s.list.sortCol].Title, "")
	if s.err == nil {
		s.err = s.list.err
	}
	if s.err != nil {
		return s.page(info, t.Failed.Render(loadErrorText(s.err)))
	}
	if s.list.len() == 0 {
		msg := "\n  " + t.Accent.Render("No transactions yet.") +
			"\n  " + t.Muted.Render("Captures, refunds and gift card payments show up here.") +
			"\n  " + t.Muted.Render("Capture from the Reservations tab (1, then c), or press p for a gift card payment.")
		if !s.list.loaded {
			msg = "\n  " + t.Muted.Render("Loading the cache…")
		} else if s.list.query != "" || s.list.all > 0 {
			msg = "\n  " + t.Muted.Render("No transaction matches the filter — press esc to clear it.")
		}
		return s.page(info, msg)
	}
	body := s.list.table.View(func(i int, out []Cell) {
		r, ok := s.list.at(i)
		if !ok {
			// Not read yet (the window follows the screen).
			out[tcInvoice] = Cell{Text: "…", Paint: theme.PaintMuted}
			return
		}
		out[tcTime] = Cell{Text: s.ctx.shortStamp(r.Tx.Created), Paint: theme.PaintMuted}
		out[tcKey] = Cell{Text: shortKey(r.key)}
		kindPaint := ""
		if r.Tx.Kind.IsRefund() {
			kindPaint = theme.PaintAccent
		}
		out[tcKind] = Cell{Text: r.kind, Paint: kindPaint}
		out[tcService] = Cell{Text: r.service, Paint: theme.PaintMuted}
		out[tcInvoice] = Cell{Text: r.invoice}
		out[tcCustomer] = Cell{Text: r.customer}
		out[tcAmount] = Cell{Text: r.amount}
		out[tcStatus] = Cell{Text: r.status, Paint: statusPaint(r.Tx.Status.Code)}
		out[tcLink] = Cell{Text: r.link, Paint: theme.PaintMuted}
	})
	return s.page(info, body)
}

// exportTxMsg carries every row that passes the filter, for an export.
type exportTxMsg struct {
	tab    *Transactions
	format string
	rows   []TransactionRow
	err    error
}

// exportCmd reads every row that passes the filter (in a command), then
// asks for the export.
func (s *Transactions) exportCmd(format string) tea.Cmd {
	if s.list.src == nil {
		return send(s.export(format, nil))
	}
	q, err := s.list.wholeQuestion()
	if err != nil {
		return Status(LevelWarn, "nothing exported: "+FilterErrorText(err))
	}
	src := s.list.src
	run := func() tea.Msg {
		rows, err := everything(src, txSpec.pos, q)
		return exportTxMsg{tab: s, format: format, rows: rows, err: err}
	}
	if s.list.sync {
		return s.Update(run())
	}
	return run
}

func (s *Transactions) export(format string, rows []TransactionRow) ExportIntent {
	return ExportIntent{Name: "transactions", Format: format, Table: ExportTable{
		Columns: []string{"key", "kind", "transaction_type", "service", "invoice", "currency", "amount", "refunded", "status", "reservation_number", "invoice_number", "original", "group", "created"},
		Len:     len(rows),
		Row: func(i int) []string {
			t := rows[i].Tx
			return []string{t.Key, string(t.Kind), t.TransactionType, t.ServiceCode, t.Invoice, t.Currency, money(t.Amount), money(t.Refunded),
				itoa(t.Status.Code), t.ReservationNumber, t.InvoiceNumber, t.Original, t.Group, t.Created.UTC().Format(timeFormatExport)}
		}}}
}
