package views

import (
	"cmp"
	"strings"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/fold"
	"paydesk/store"
	"paydesk/ui/theme"
)

// TransactionRow is a transaction prepared for the list.
type TransactionRow struct {
	Tx *store.Transaction

	key, kind, service, invoice, customer, number, amount, status, link string
	hay                                                                 string
	cents, created                                                      int64
}

// NewTransactionRow prepares a transaction for the list.
func NewTransactionRow(t *store.Transaction) *TransactionRow {
	r := &TransactionRow{Tx: t, key: clean(t.Key), kind: kindText(t.Kind), service: clean(t.ServiceCode),
		invoice: clean(t.Invoice), customer: clean(t.CustomerName), number: clean(t.ReservationNumber), amount: money(t.Amount),
		status: clean(t.Status.Text()), cents: t.Amount.Shift(2).IntPart(), created: t.Created.UnixNano()}
	if t.Kind.IsRefund() {
		r.amount = "-" + r.amount
	}
	r.link = linkText(t)
	r.hay = fold.String(strings.Join([]string{r.key, r.invoice, r.number, r.service, r.kind, clean(t.TransactionType), clean(t.CustomerName), clean(t.InvoiceNumber), clean(t.Original), clean(t.Group)}, "\x00"))
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

func compareTransactions(a, b *TransactionRow, col int) int {
	var c int
	switch col {
	case tcKey:
		c = strings.Compare(a.key, b.key)
	case tcKind:
		c = strings.Compare(a.kind, b.kind)
	case tcService:
		c = strings.Compare(a.service, b.service)
	case tcInvoice:
		c = strings.Compare(a.invoice, b.invoice)
	case tcCustomer:
		c = strings.Compare(fold.String(a.customer), fold.String(b.customer))
	case tcAmount:
		c = cmp.Compare(a.cents, b.cents)
	case tcStatus:
		c = cmp.Compare(a.Tx.Status.Code, b.Tx.Status.Code)
	}
	if c == 0 {
		c = cmp.Compare(a.created, b.created)
	}
	return c
}

// Transactions is the transactions tab: captures, refunds and gift card
// payments, linked to what they belong to.
type Transactions struct {
	listTab[*TransactionRow]
	wide int // the widest invoice seen
}

// NewTransactions makes the transactions tab, newest first.
func NewTransactions(ctx *Context) *Transactions {
	spec := rowSpec[*TransactionRow]{
		key:      func(r *TransactionRow) string { return r.Tx.Key },
		haystack: func(r *TransactionRow) string { return r.hay },
		compare:  compareTransactions,
		sortable: []int{tcTime, tcKind, tcInvoice, tcCustomer, tcAmount, tcStatus},
	}
	return &Transactions{listTab: listTab[*TransactionRow]{ctx: ctx, list: newList(ctx, transactionColumns, spec, tcTime, true)}}
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
	if m, ok := msg.(TransactionRowsMsg); ok {
		// Invoices are shown whole (see Reservations.fitIdentifiers).
		for _, r := range m.Rows {
			if w := width(r.invoice); w > s.wide {
				s.wide = min(w, 40)
				s.list.table.FitColumn(tcInvoice, s.wide)
			}
		}
		return s.list.takeRows(m.Full, m.Rows, m.Err, &s.err)
	}
	key, cmd, ok := s.keyLeft(msg)
	if !ok {
		return cmd
	}
	k := s.ctx.Keys
	switch {
	case keyIs(key, k.GiftCardPay):
		return send(GiftCardPayIntent{})
	case keyIs(key, k.ExportCSV), keyIs(key, k.ExportJSON):
		return send(s.export(exportFormat(key, k)))
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
	if s.err != nil {
		return s.page(info, s.readError())
	}
	if s.list.len() == 0 {
		msg := "\n  " + t.Accent.Render("No transactions yet.") +
			"\n  " + t.Muted.Render("Captures, refunds and gift card payments show up here.") +
			"\n  " + t.Muted.Render("Capture from the Reservations tab (1, then c), or press p for a gift card payment.")
		if !s.list.loaded {
			msg = "\n  " + t.Muted.Render("Loading the cache…")
		} else if len(s.list.rows) > 0 {
			msg = "\n  " + t.Muted.Render("No transaction matches the filter — press esc to clear it.")
		}
		return s.page(info, msg)
	}
	body := s.list.table.View(func(i int, out []Cell) {
		r := s.list.at(i)
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

func (s *Transactions) export(format string) ExportIntent {
	rows := s.list.visible()
	return ExportIntent{Name: "transactions", Format: format, Table: ExportTable{
		Columns: []string{"key", "kind", "transaction_type", "service", "invoice", "currency", "amount", "refunded", "status", "reservation_number", "invoice_number", "original", "group", "created"},
		Len:     len(rows),
		Row: func(i int) []string {
			t := rows[i].Tx
			return []string{t.Key, string(t.Kind), t.TransactionType, t.ServiceCode, t.Invoice, t.Currency, money(t.Amount), money(t.Refunded),
				itoa(t.Status.Code), t.ReservationNumber, t.InvoiceNumber, t.Original, t.Group, t.Created.UTC().Format(timeFormatExport)}
		}}}
}
