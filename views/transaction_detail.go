package views

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// TransactionDetail is the page of one transaction with the ones linked to
// it: the payment a refund refunds, the refunds of a payment, the other
// partial payments of a gift card group.
type TransactionDetail struct {
	ctx    *Context
	data   TransactionDetailMsg
	pane   pane
	width  int
	height int
}

// NewTransactionDetail makes the page for the loaded data.
func NewTransactionDetail(ctx *Context, data TransactionDetailMsg) *TransactionDetail {
	return &TransactionDetail{ctx: ctx, data: data, pane: pane{ctx: ctx}}
}

// Key is the transaction's key.
func (d *TransactionDetail) Key() string { return d.data.Key }

// Title names the page.
func (d *TransactionDetail) Title() string {
	if tx := d.data.Transaction; tx != nil {
		return "Transaction " + kindText(tx.Kind) + " " + shortKey(clean(tx.Key))
	}
	return "Transaction"
}

// SetSize sets the page size.
func (d *TransactionDetail) SetSize(w, h int) {
	d.width, d.height = w, h
	d.pane.setHeight(h - 1)
	d.pane.width = w
	d.build()
}

// Capturing is always false.
func (d *TransactionDetail) Capturing() bool { return false }

// Actions are the page's keys.
func (d *TransactionDetail) Actions() []Action {
	k := d.ctx.Keys
	acts := []Action{{Key: k.Back}}
	if tx := d.data.Transaction; tx != nil && tx.ReservationKey != "" {
		acts = append(acts, Action{Key: k.Open})
	}
	acts = append(acts, Action{Key: k.Refund, Changes: true})
	if tx := d.data.Transaction; tx != nil && UnpaidRemainder(tx, d.data.Group).IsPositive() {
		acts = append(acts, Action{Key: payRemainderKey(k.GiftCardPay), Changes: true})
	}
	return acts
}

// payRemainderKey is the gift card key, named for what it does on a
// partial payment.
func payRemainderKey(b key.Binding) key.Binding {
	return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(b.Help().Key, "pay the remainder"))
}

// UnpaidRemainder is what is still to pay of a partial gift card payment
// group: the remainder the newest successful payment of the group left
// (a payment that paid the rest in full carries none).
func UnpaidRemainder(tx *store.Transaction, group []*store.Transaction) decimal.Decimal {
	var last *store.Transaction
	for _, t := range append([]*store.Transaction{tx}, group...) {
		if t == nil || t.Kind.IsRefund() || !t.Status.IsSuccess() {
			continue
		}
		if t.Kind != store.KindGiftCardPay && t.Kind != store.KindGiftCardRemainder {
			continue
		}
		// The newest payment tells; at the same instant the one with the
		// smaller remainder is the later (a remainder only goes down).
		if last == nil || t.Created.After(last.Created) ||
			(t.Created.Equal(last.Created) && t.RemainderAmount.LessThan(last.RemainderAmount)) {
			last = t
		}
	}
	if last == nil {
		return decimal.Zero
	}
	return last.RemainderAmount
}

// Update takes fresh data and keys.
func (d *TransactionDetail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case TransactionDetailMsg:
		if msg.Key == d.data.Key {
			d.data = msg
			d.build()
		}
	case tea.KeyPressMsg:
		if d.pane.update(msg) {
			return nil
		}
		tx := d.data.Transaction
		if tx == nil {
			return nil
		}
		k := d.ctx.Keys
		switch {
		case keyIs(msg, k.Refund):
			return send(RefundIntent{TransactionKey: tx.Key})
		case keyIs(msg, k.GiftCardPay):
			if rest := UnpaidRemainder(tx, d.data.Group); rest.IsPositive() {
				group := tx.Group
				if group == "" {
					group = tx.Key
				}
				return send(PayRemainderIntent{Group: group, ServiceCode: tx.ServiceCode, Currency: tx.Currency, Invoice: tx.Invoice, Remainder: rest.StringFixed(2)})
			}
		case keyIs(msg, k.Open) && tx.ReservationKey != "":
			return send(OpenReservation{Key: tx.ReservationKey})
		}
	default:
		d.pane.update(msg)
	}
	return nil
}

// View draws the page.
func (d *TransactionDetail) View() string {
	t := d.ctx.Theme
	return spread(t.Accent.Render(d.Title()), t.Muted.Render(d.pane.scrollHint()+"  esc back"), d.width) + "\n" + d.pane.view()
}

func (d *TransactionDetail) build() {
	if d.width == 0 {
		return
	}
	t := d.ctx.Theme
	tx := d.data.Transaction
	if d.data.Err != nil || tx == nil {
		msg := "not found in the cache"
		if d.data.Err != nil {
			msg = clean(d.data.Err.Error())
		}
		d.pane.setLines([]string{"", "  " + t.Failed.Render("Transaction "+clean(d.data.Key)+": "+msg)})
		return
	}
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	label := func(s string) string { return t.Muted.Render(fmt.Sprintf("%-14s", s)) }
	amount := moneyCur(tx.Amount, clean(tx.Currency))
	if tx.Kind.IsRefund() {
		amount = "-" + amount
	}
	add("",
		label("Kind")+kindText(tx.Kind)+t.Muted.Render("  "+clean(tx.TransactionType)+" · service "+clean(tx.ServiceCode)),
		label("Status")+t.Paint(statusPaint(tx.Status.Code)).Apply(orDash(clean(tx.Status.Text())))+t.Muted.Render("  "+d.ctx.stamp(tx.Status.Time)),
		label("Key")+clean(tx.Key),
		label("Invoice")+clean(tx.Invoice),
		label("Amount")+amount,
	)
	if !tx.Kind.IsRefund() && tx.Status.IsSuccess() {
		add(label("Refunded") + money(tx.Refunded) + t.Muted.Render("  refundable ") + money(tx.Refundable()))
	}
	if tx.ReservationNumber != "" || tx.ReservationKey != "" {
		add(label("Reservation") + orDash(clean(tx.ReservationNumber)) + t.Muted.Render("  (enter opens it)"))
	}
	if tx.InvoiceNumber != "" {
		add(label("Provider inv.") + clean(tx.InvoiceNumber))
	}
	if tx.PaymentKey != "" {
		add(label("Payment key") + clean(tx.PaymentKey))
	}
	if tx.CustomerName != "" {
		add(label("Customer") + clean(tx.CustomerName))
	}
	if tx.Order != "" {
		add(label("Order") + clean(tx.Order))
	}
	if s := pairsText(tx.Additional); s != "" {
		add(label("Additional") + s)
	}
	if s := pairsText(tx.Custom); s != "" {
		add(label("Custom") + s)
	}
	if tx.Provider != "" {
		add(label("Card provider") + clean(string(tx.Provider)))
	}
	if tx.RemainderAmount.IsPositive() {
		if rest := UnpaidRemainder(tx, d.data.Group); rest.IsPositive() {
			add(label("Remainder") + t.Warning.Render(money(rest)+" still to pay (partial payment)") + t.Muted.Render("  p pays it"))
		} else {
			add(label("Remainder") + money(tx.RemainderAmount) + t.Muted.Render("  paid since"))
		}
	}
	if len(tx.Lines) > 0 {
		var parts string
		for i, l := range tx.Lines {
			if i > 0 {
				parts += ", "
			}
			parts += fmt.Sprintf("%d × %s", l.Quantity, clean(l.ArticleNumber))
		}
		add(label("Lines") + parts)
	} else if tx.FullCapture {
		add(label("Lines") + "everything that remained")
	}
	add(label("Created") + d.ctx.stamp(tx.Created))

	if o := d.data.Original; o != nil {
		add("", t.Accent.Render("Refund of"))
		add(indent(transactionTable(d.ctx, d.width-2, []*store.Transaction{o}))...)
	} else if tx.Original != "" {
		add("", t.Accent.Render("Refund of"), "  "+clean(tx.Original)+t.Muted.Render("  (not in the cache)"))
	}
	if len(d.data.Refunds) > 0 {
		add("", t.Accent.Render(fmt.Sprintf("Refunds (%d)", len(d.data.Refunds))))
		add(indent(transactionTable(d.ctx, d.width-2, d.data.Refunds))...)
	}
	if len(d.data.Group) > 0 {
		add("", t.Accent.Render("Partial payments of group "+shortKey(clean(tx.Group))))
		add(indent(transactionTable(d.ctx, d.width-2, d.data.Group))...)
	}
	add("", t.Accent.Render(fmt.Sprintf("Pushes (%d, oldest first)", len(d.data.Pushes))))
	if len(d.data.Pushes) == 0 {
		add(t.Muted.Render("  None received for this transaction."))
	} else {
		add(indent(pushTable(d.ctx, d.width-2, d.data.Pushes))...)
	}
	d.pane.setLines(out)
}

// pairsText shows the merchant's name/value pairs on one line.
func pairsText(nv []api.NameValue) string {
	var b strings.Builder
	for i, x := range nv {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(clean(x.Name) + "=" + clean(string(x.Value)))
	}
	return b.String()
}
