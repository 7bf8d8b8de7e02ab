package views

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/store"
	"paydesk/ui/theme"
)

// ReservationDetail is the page of one reservation: its lines with the
// ledger, the totals, its transactions and its pushes in time order.
type ReservationDetail struct {
	ctx    *Context
	data   ReservationDetailMsg
	pane   pane
	width  int
	height int
}

// NewReservationDetail makes the page for the loaded data.
func NewReservationDetail(ctx *Context, data ReservationDetailMsg) *ReservationDetail {
	d := &ReservationDetail{ctx: ctx, data: data, pane: pane{ctx: ctx}}
	return d
}

// Key is the reservation's key ("" when it was not found).
func (d *ReservationDetail) Key() string {
	if d.data.Reservation == nil {
		return ""
	}
	return d.data.Reservation.Key
}

// Ref is what the page was opened for.
func (d *ReservationDetail) Ref() string { return d.data.Ref }

// Title names the page.
func (d *ReservationDetail) Title() string {
	if r := d.data.Reservation; r != nil {
		if r.ReservationNumber != "" {
			return "Reservation " + clean(r.ReservationNumber)
		}
		return "Reservation " + clean(r.Invoice)
	}
	return "Reservation"
}

// SetSize sets the page size.
func (d *ReservationDetail) SetSize(w, h int) {
	d.width, d.height = w, h
	d.pane.setHeight(h - 1)
	d.pane.width = w
	d.build()
}

// Capturing is always false: the page takes no text.
func (d *ReservationDetail) Capturing() bool { return false }

// Actions are the page's keys.
func (d *ReservationDetail) Actions() []Action {
	k := d.ctx.Keys
	acts := []Action{{Key: k.Back}, {Key: k.Capture, Changes: true}, {Key: k.Cancel, Changes: true}, {Key: k.Update, Changes: true},
		{Key: ReturnKey(k.Refund), Changes: true}}
	if d.unknownOp() != nil {
		acts = append(acts, Action{Key: k.Resolve, Changes: true})
	}
	// n means what it means on the list: a new test reservation.
	return append(acts, Action{Key: k.NewReservation, Changes: true})
}

// ReturnKey is the refund key on a reservation, named for what it does
// there: refund returned article lines.
func ReturnKey(b key.Binding) key.Binding {
	return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, "refund a return (by article line)"))
}

func (d *ReservationDetail) unknownOp() *store.PendingOp {
	for _, op := range d.data.Ops {
		if op.State == store.OpOutcomeUnknown {
			return op
		}
	}
	return nil
}

// Update takes fresh data and keys.
func (d *ReservationDetail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ReservationDetailMsg:
		if msg.Ref == d.data.Ref || (msg.Reservation != nil && msg.Reservation.Key == d.Key()) {
			d.data = msg
			d.build()
		}
		return nil
	case tea.KeyPressMsg:
		if d.pane.update(msg) {
			return nil
		}
		r := d.data.Reservation
		if r == nil {
			return nil
		}
		k := d.ctx.Keys
		switch {
		case keyIs(msg, k.Capture):
			return send(CaptureIntent{ReservationKey: r.Key})
		case keyIs(msg, k.Cancel):
			return send(CancelIntent{ReservationKey: r.Key})
		case keyIs(msg, k.Update):
			return send(UpdateIntent{ReservationKey: r.Key})
		case keyIs(msg, k.Refund):
			return send(ReturnIntent{ReservationKey: r.Key})
		case keyIs(msg, k.Resolve):
			if op := d.unknownOp(); op != nil {
				return send(ResolveIntent{OpID: op.ID})
			}
		case keyIs(msg, k.NewReservation):
			return send(NewReservationIntent{})
		}
	default:
		d.pane.update(msg)
	}
	return nil
}

// View draws the page.
func (d *ReservationDetail) View() string {
	t := d.ctx.Theme
	head := t.Accent.Render(d.Title())
	return spread(head, t.Muted.Render(d.pane.scrollHint()+"  esc back"), d.width) + "\n" + d.pane.view()
}

const (
	lcNumber = iota
	lcTitle
	lcPrice
	lcVat
	lcReserved
	lcCaptured
	lcCancelled
	lcRefunded
	lcLeft
	lcAmount
	lcCapturedAmt
	lcCancelledAmt
	lcRefundedAmt
	lcRemainingAmt
)

var lineColumns = []Column{
	lcNumber:       {Title: "ARTICLE", Width: 10},
	lcTitle:        {Title: "TITLE", Width: 12, Flex: true},
	lcPrice:        {Title: "PRICE", Width: 8, Right: true},
	lcVat:          {Title: "VAT%", Width: 5, Right: true, Drop: 5},
	lcReserved:     {Title: "RES", Width: 3, Right: true},
	lcCaptured:     {Title: "CAP", Width: 3, Right: true},
	lcCancelled:    {Title: "CNC", Width: 3, Right: true},
	lcRefunded:     {Title: "REF", Width: 3, Right: true},
	lcLeft:         {Title: "LEFT", Width: 4, Right: true},
	lcAmount:       {Title: "AMOUNT", Width: 9, Right: true},
	lcCapturedAmt:  {Title: "CAPTURED", Width: 9, Right: true, Drop: 2},
	lcCancelledAmt: {Title: "CANCELLED", Width: 9, Right: true, Drop: 4},
	lcRefundedAmt:  {Title: "REFUNDED", Width: 9, Right: true, Drop: 3},
	lcRemainingAmt: {Title: "REMAINING", Width: 9, Right: true},
}

func (d *ReservationDetail) build() {
	if d.width == 0 {
		return
	}
	t := d.ctx.Theme
	r := d.data.Reservation
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	if d.data.Err != nil || r == nil {
		msg := "not found in the cache"
		if d.data.Err != nil {
			msg = clean(d.data.Err.Error())
		}
		d.pane.setLines([]string{"", "  " + t.Failed.Render("Reservation "+clean(d.data.Ref)+": "+msg)})
		return
	}
	now := d.ctx.Now()
	st := r.State()
	label := func(s string) string { return t.Muted.Render(fmt.Sprintf("%-11s", s)) }
	stateLine := t.Paint(statePaint(st)).Apply(stateText(st))
	if r.OutcomeUnknown {
		stateLine += "  " + t.Warning.Render("⚠ an operation's outcome is unknown")
	}
	add("",
		label("State")+stateLine,
		label("Invoice")+clean(r.Invoice)+t.Muted.Render("   reservation number ")+orDash(clean(r.ReservationNumber)),
		label("Key")+clean(r.Key),
		label("Customer")+customerText(r),
	)
	window := ""
	if windowOpen(st) {
		dl := r.DaysLeft(now)
		switch {
		case dl < 0:
			window = "  " + t.Failed.Render(fmt.Sprintf("%d days past the 14-day shipment window", -dl))
		case dl <= 3:
			window = "  " + t.Warning.Render(fmt.Sprintf("%d days left in the 14-day shipment window", dl))
		default:
			window = "  " + t.Muted.Render(fmt.Sprintf("%d days left in the 14-day shipment window", dl))
		}
	}
	add(label("Reserved") + d.ctx.stamp(r.Created) + t.Muted.Render(" ("+age(r.Created, now)+" ago)") + window)
	cur := clean(r.Currency)
	if r.LinesKnown {
		add(label("Amounts") + "reserved " + moneyCur(r.Amount(), cur) + t.Muted.Render(" · ") + "captured " + money(r.CapturedAmount) +
			t.Muted.Render(" · ") + "refunded " + money(r.RefundedAmount) + t.Muted.Render(" · ") + t.Accent.Render("remaining "+money(r.RemainingAmount())))
	} else {
		add(label("Amounts") + "reserved " + t.Muted.Render("unknown (no order)") + t.Muted.Render(" · ") + "captured " + moneyCur(r.CapturedAmount, cur) +
			t.Muted.Render(" · ") + "refunded " + money(r.RefundedAmount))
	}
	if r.IsTest {
		add(label("") + t.Muted.Render("test transaction"))
	}

	add("", t.Accent.Render("Article lines"))
	if !r.LinesKnown || len(r.Lines) == 0 {
		intake := d.ctx.IntakeURL
		if intake == "" {
			intake = "the listener's …/orders"
		}
		add(t.Warning.Render("  Its order never reached paydesk: no lines, no customer."),
			t.Muted.Render("  Bring it in: the shop posts its Reserve envelope (signed) to"),
			"    "+clean(intake),
			t.Muted.Render("  or run  paydesk import FILE  (envelopes or CSV order lines)."),
			t.Muted.Render("  Meanwhile: c captures in full by a typed amount · x cancels."))
	} else {
		lines := r.Lines
		var tot [5]int
		var amt [5]decimal.Decimal
		for _, l := range lines {
			tot[0] += l.Reserved
			tot[1] += l.Captured
			tot[2] += l.Cancelled
			tot[3] += l.Refunded
			tot[4] += l.Remaining()
			amt[0] = amt[0].Add(l.Amount())
			amt[1] = amt[1].Add(l.CapturedAmount())
			amt[2] = amt[2].Add(l.CancelledAmount())
			amt[3] = amt[3].Add(l.RefundedAmount())
			amt[4] = amt[4].Add(l.RemainingAmount())
		}
		rows := staticTable(t, lineColumns, d.width-2, len(lines)+1, func(i int, c []Cell) {
			if i == len(lines) {
				c[lcNumber] = Cell{Text: "TOTAL", Paint: theme.PaintAccent}
				c[lcReserved] = Cell{Text: itoa(tot[0])}
				c[lcCaptured] = Cell{Text: itoa(tot[1])}
				c[lcCancelled] = Cell{Text: itoa(tot[2])}
				c[lcRefunded] = Cell{Text: itoa(tot[3])}
				c[lcLeft] = Cell{Text: itoa(tot[4]), Paint: theme.PaintAccent}
				c[lcAmount] = Cell{Text: money(amt[0]), Paint: theme.PaintAccent}
				c[lcCapturedAmt] = Cell{Text: money(amt[1]), Paint: theme.PaintAccent}
				c[lcCancelledAmt] = Cell{Text: money(amt[2]), Paint: theme.PaintAccent}
				c[lcRefundedAmt] = Cell{Text: money(amt[3]), Paint: theme.PaintAccent}
				c[lcRemainingAmt] = Cell{Text: money(amt[4]), Paint: theme.PaintAccent}
				return
			}
			l := lines[i]
			title := clean(l.Title)
			switch l.Type {
			case "", "General":
			case "ShipmentFee":
				title += " (shipping)"
			case "HandlingFee":
				title += " (fee)"
			default:
				title += " (" + clean(l.Type) + ")"
			}
			c[lcNumber] = Cell{Text: clean(l.ArticleNumber)}
			c[lcTitle] = Cell{Text: title}
			c[lcPrice] = Cell{Text: money(l.Price)}
			c[lcVat] = Cell{Text: l.Vat.String(), Paint: theme.PaintMuted}
			c[lcReserved] = Cell{Text: itoa(l.Reserved)}
			c[lcCaptured] = Cell{Text: itoa(l.Captured), Paint: zeroMuted(l.Captured, theme.PaintOK)}
			c[lcCancelled] = Cell{Text: itoa(l.Cancelled), Paint: zeroMuted(l.Cancelled, "")}
			c[lcRefunded] = Cell{Text: itoa(l.Refunded), Paint: zeroMuted(l.Refunded, "")}
			c[lcLeft] = Cell{Text: itoa(l.Remaining()), Paint: zeroMuted(l.Remaining(), theme.PaintAccent)}
			c[lcAmount] = Cell{Text: money(l.Amount())}
			c[lcCapturedAmt] = Cell{Text: money(l.CapturedAmount())}
			c[lcCancelledAmt] = Cell{Text: money(l.CancelledAmount())}
			c[lcRefundedAmt] = Cell{Text: money(l.RefundedAmount())}
			c[lcRemainingAmt] = Cell{Text: money(l.RemainingAmount())}
		})
		add(indent(rows)...)
		if r.UnsplitCaptured.IsPositive() {
			add(t.Warning.Render("  Captured elsewhere, per-line split unknown: "+moneyCur(r.UnsplitCaptured, cur)) +
				t.Muted.Render(" (a capture made outside paydesk whose amount matches no single choice of lines)"))
		}
	}
	for _, o := range d.data.Conflicts {
		add(t.Warning.Render("  Another order for this invoice was refused (409): ")+t.Muted.Render(clean(o.Source)+" at "+d.ctx.stamp(o.Received)),
			"    "+t.Muted.Render(conflictLines(o)))
	}
	switch {
	case r.IsPlaceholder():
		add(label("Order") + t.Muted.Render("from "+clean(r.OrderSource)+"; waiting for the customer: its Reserve push has not arrived"))
	case r.OrderSource != "":
		add(label("Order") + t.Muted.Render("lines and customer from the shop's order ("+clean(r.OrderSource)+")"))
	}

	if len(r.Requests) > 0 {
		add("", t.Accent.Render("Requests"))
		for _, q := range r.Requests {
			add("  " + fmt.Sprintf("%-18s", clean(q.Action)) + " " + t.Paint(statusPaint(q.Status.Code)).Apply(fmt.Sprintf("%-18s", orDash(clean(q.Status.Text())))) +
				" " + t.Muted.Render(shortKey(clean(q.Key))+"  "+d.ctx.stamp(q.Status.Time)))
		}
	}

	add("", t.Accent.Render(fmt.Sprintf("Transactions (%d, oldest first)", len(d.data.Transactions))))
	if len(d.data.Transactions) == 0 {
		add(t.Muted.Render("  None yet: captures and refunds appear here."))
	} else {
		// Oldest first, as the heading says, whatever order they were read in.
		txs := slices.Clone(d.data.Transactions)
		slices.SortStableFunc(txs, func(a, b *store.Transaction) int {
			if c := a.Created.Compare(b.Created); c != 0 {
				return c
			}
			return strings.Compare(a.Key, b.Key)
		})
		rows := transactionTable(d.ctx, d.width-2, txs)
		if len(rows) == len(txs)+1 {
			// Under each one, what it shipped (a refund by line: what it
			// paid back) and its parcels.
			with := []string{rows[0]}
			for i, tx := range txs {
				with = append(with, rows[i+1])
				if s := shippedText(tx); s != "" {
					with = append(with, t.Muted.Render(ansi.Truncate(strings.Repeat(" ", 20)+"↳ "+s, max(d.width-2, 20), "…")))
				}
			}
			rows = with
		}
		add(indent(rows)...)
	}

	add("", t.Accent.Render(fmt.Sprintf("Pushes (%d, oldest first)", len(d.data.Pushes))))
	if len(d.data.Pushes) == 0 {
		add(t.Muted.Render("  None received for this reservation."))
	} else {
		add(indent(pushTable(d.ctx, d.width-2, d.data.Pushes))...)
	}

	if len(d.data.Ops) > 0 {
		add("", t.Accent.Render("Open operations"))
		for _, op := range d.data.Ops {
			line := fmt.Sprintf("  #%d %s %s %s", op.ID, clean(op.Action), moneyCur(op.Amount, clean(op.Currency)), string(op.State))
			if op.State == store.OpOutcomeUnknown {
				line = t.Warning.Render(line + " — " + clean(op.Error))
				if !d.ctx.ReadOnly {
					line += t.Muted.Render("  (o resolves it by hand)")
				}
			}
			add(line)
		}
	}
	d.pane.setLines(out)
}

func zeroMuted(n int, paint string) string {
	if n == 0 {
		return theme.PaintMuted
	}
	return paint
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func customerText(r *store.Reservation) string {
	s := clean(r.CustomerName)
	if r.CustomerEmail != "" {
		s += " <" + clean(r.CustomerEmail) + ">"
	}
	a := r.Billing
	addr := strings.TrimSpace(strings.Join(nonEmpty(clean(a.Street)+" "+clean(a.HouseNumber)+clean(a.HouseNumberSuffix), clean(a.PostalCode)+" "+clean(a.City), clean(r.Country)), ", "))
	if addr != "" {
		s += " · " + addr
	}
	return orDash(s)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}

func indent(lines []string) []string {
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return lines
}

const (
	dtTime = iota
	dtKind
	dtKey
	dtAmount
	dtStatus
	dtInfo
)

var detailTxColumns = []Column{
	dtTime:   {Title: "TIME", Width: 19, Drop: 2},
	dtKind:   {Title: "KIND", Width: 15},
	dtKey:    {Title: "KEY", Width: 12},
	dtAmount: {Title: "AMOUNT", Width: 9, Right: true},
	dtStatus: {Title: "STATUS", Width: 16},
	dtInfo:   {Title: "DETAIL", Width: 10, Flex: true},
}

// transactionTable draws transactions for a detail page.
func transactionTable(ctx *Context, w int, txs []*store.Transaction) []string {
	return staticTable(ctx.Theme, detailTxColumns, w, len(txs), func(i int, c []Cell) {
		tx := txs[i]
		amount := money(tx.Amount)
		if tx.Kind.IsRefund() {
			amount = "-" + amount
		}
		info := linkText(tx)
		if tx.InvoiceNumber != "" {
			info = "provider invoice " + clean(tx.InvoiceNumber)
			if tx.Refunded.IsPositive() {
				info += ", refunded " + money(tx.Refunded)
			}
		}
		if tx.FullCapture {
			info += " (full)"
		}
		c[dtTime] = Cell{Text: ctx.stamp(tx.Created), Paint: theme.PaintMuted}
		c[dtKind] = Cell{Text: kindText(tx.Kind)}
		c[dtKey] = Cell{Text: shortKey(clean(tx.Key))}
		c[dtAmount] = Cell{Text: amount}
		c[dtStatus] = Cell{Text: clean(tx.Status.Text()), Paint: statusPaint(tx.Status.Code)}
		c[dtInfo] = Cell{Text: info, Paint: theme.PaintMuted}
	})
}

const (
	dpTime = iota
	dpKind
	dpKey
	dpStatus
	dpSig
	dpResult
)

var detailPushColumns = []Column{
	dpTime:   {Title: "RECEIVED", Width: 19, Drop: 2},
	dpKind:   {Title: "KIND", Width: 17},
	dpKey:    {Title: "KEY", Width: 12},
	dpStatus: {Title: "STATUS", Width: 16},
	dpSig:    {Title: "SIGNATURE", Width: 9},
	dpResult: {Title: "RESULT", Width: 10, Flex: true},
}

// pushTable draws pushes for a detail page.
func pushTable(ctx *Context, w int, ps []*store.PushRecord) []string {
	return staticTable(ctx.Theme, detailPushColumns, w, len(ps), func(i int, c []Cell) {
		r := NewPushRow(ps[i])
		sig := theme.PaintOK
		if ps[i].Signature != store.SignatureValid {
			sig = theme.PaintFailed
		}
		c[dpTime] = Cell{Text: ctx.stamp(ps[i].ReceivedAt), Paint: theme.PaintMuted}
		c[dpKind] = Cell{Text: orDash(r.kind)}
		c[dpKey] = Cell{Text: shortKey(r.key)}
		c[dpStatus] = Cell{Text: r.status, Paint: statusPaint(ps[i].Status.Code)}
		c[dpSig] = Cell{Text: r.signature, Paint: sig}
		c[dpResult] = Cell{Text: r.result, Paint: r.resultPaint}
	})
}

// shippedText lists a transaction's article lines and parcels in one line:
// "SHOE-42 ×1, SOCK-3P ×2 · parcel P-1 tracking 3S…".
func shippedText(tx *store.Transaction) string {
	var parts []string
	if len(tx.Lines) > 0 {
		ls := make([]string, 0, len(tx.Lines))
		for _, l := range tx.Lines {
			ls = append(ls, fmt.Sprintf("%s ×%d", clean(l.ArticleNumber), l.Quantity))
		}
		parts = append(parts, strings.Join(ls, ", "))
	}
	for _, p := range tx.Parcels {
		parts = append(parts, clean(p.String()))
	}
	return strings.Join(parts, " · ")
}

// conflictLines lists a refused order's lines in one line.
func conflictLines(o *store.Order) string {
	parts := make([]string, 0, len(o.Articles))
	for _, a := range o.Articles {
		parts = append(parts, fmt.Sprintf("%s ×%d at %s", clean(a.Number), a.Quantity, a.Price.StringFixed(2)))
	}
	return "its lines: " + strings.Join(parts, ", ") + " · total " + o.Amount().StringFixed(2)
}
