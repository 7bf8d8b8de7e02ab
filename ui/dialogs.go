package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/ops"
	"paydesk/store"
	"paydesk/views"
	"paydesk/views/forms"
)

// Dialog is anything on the dialog stack above the screens: the operation
// forms today. The top dialog sees every message first and keys only go
// to it; closing pops it.
type Dialog interface {
	Init() tea.Cmd
	Update(tea.Msg) (Dialog, tea.Cmd)
	View() string
	SetSize(width, height int)
	Title() string
	// ID tells which dialog a result or a close is for.
	ID() string
	// Busy is true while the dialog waits for an operation; it is not
	// closed then.
	Busy() bool
	// Closed reports that the dialog asked to be closed, with its last
	// result: the host pops it at once (see dialogMsg).
	Closed() (*ops.Result, bool)
}

// OpenDialog returns a command that pushes d onto the dialog stack.
func OpenDialog(d Dialog) tea.Cmd { return func() tea.Msg { return openDialogMsg{d} } }

type openDialogMsg struct{ Dialog Dialog }

// formDialog puts a forms.Form on the dialog stack.
type formDialog struct{ f forms.Form }

// FormDialog adapts an operation form to the dialog stack.
func FormDialog(f forms.Form) Dialog { return formDialog{f} }

func (d formDialog) Init() tea.Cmd { return d.f.Init() }
func (d formDialog) Update(msg tea.Msg) (Dialog, tea.Cmd) {
	f, cmd := d.f.Update(msg)
	return formDialog{f}, cmd
}
func (d formDialog) View() string     { return d.f.View() }
func (d formDialog) SetSize(w, h int) { d.f.SetSize(w, h) }
func (d formDialog) Title() string    { return d.f.Title() }
func (d formDialog) ID() string       { return d.f.ID() }
func (d formDialog) Busy() bool       { return d.f.Busy() }
func (d formDialog) Closed() (*ops.Result, bool) {
	return d.f.Closed()
}

func (a *App) pushDialog(d Dialog) tea.Cmd {
	w, h := a.dialogSize()
	d.SetSize(w, h)
	a.dialogs = append(a.dialogs, d)
	a.help, a.palette = false, nil
	return d.Init()
}

// dialogSize is the inside of the dialog frame.
func (a *App) dialogSize() (int, int) {
	return max(min(a.width-4, 100), 20), max(a.bodyHeight()-2, 6)
}

func (a *App) dialogView() string {
	d := a.dialogs[len(a.dialogs)-1]
	w, h := a.dialogSize()
	body := d.View()
	if a.quitArmed || (a.status.Text == inFlightText && a.inFlight()) {
		body += "\n\n" + a.vctx.Theme.Warning.Render(ansi.Wrap(inFlightText, w, " "))
	}
	box := a.vctx.Theme.Box.Width(w + 4).MaxHeight(h + 2).Render(fitBlock(body, w, h))
	return lipgloss.Place(a.width, a.bodyHeight(), lipgloss.Center, lipgloss.Center, box)
}

// dialogMsg gives the dialog stack its messages: the submissions and
// closings of forms, and (when a dialog is open) everything else first.
// It reports whether the message is used up.
func (a *App) dialogMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case forms.SubmitMsg:
		return a.runIntent(msg), true
	case forms.CloseMsg:
		// A dialog is popped when it asks to close (below); the message
		// only closes one that asked in another way.
		for i, d := range a.dialogs {
			if d.ID() == msg.ID {
				return a.popDialog(i, msg.Result), true
			}
		}
		return nil, true
	}
	if len(a.dialogs) == 0 {
		return nil, false
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && a.inFlight() && (k.String() == "ctrl+c" || k.String() == "q") {
		return a.quit(k.String()), true
	}
	top := len(a.dialogs) - 1
	d, cmd := a.dialogs[top].Update(msg)
	a.dialogs[top] = d
	if res, closed := d.Closed(); closed {
		// Popped now, not when its CloseMsg arrives: the keys typed
		// after the closing key (esc esc esc) go to what lies under it.
		cmd = tea.Batch(cmd, a.popDialog(top, res))
	}
	switch msg.(type) {
	case tea.KeyPressMsg, tea.MouseMsg, tea.PasteMsg:
		if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "ctrl+c" {
			return tea.Quit, true
		}
		return cmd, true
	}
	if _, ok := msg.(forms.ResultMsg); ok {
		return cmd, true
	}
	// Data messages go on to the screens as well.
	return tea.Batch(cmd, a.broadcast(msg)), true
}

// popDialog takes dialog i off the stack, shows its last result's message
// and reloads what the result may have changed.
func (a *App) popDialog(i int, res *ops.Result) tea.Cmd {
	a.dialogs = append(a.dialogs[:i:i], a.dialogs[i+1:]...)
	if res != nil && res.Message != "" {
		a.status = views.StatusMsg{Level: levelOf(res.State), Text: res.Message}
	}
	return a.loadAll()
}

func levelOf(s store.OpState) views.Level {
	switch s {
	case store.OpSettled, store.OpSent:
		return views.LevelOK
	case store.OpOutcomeUnknown:
		return views.LevelWarn
	case store.OpFailed:
		return views.LevelError
	}
	return views.LevelInfo
}

// runIntent runs a form's intent through the operations layer, once, in
// a command, and answers the form.
func (a *App) runIntent(m forms.SubmitMsg) tea.Cmd {
	svc, ctx := a.cfg.Ops, a.cfg.Context
	if a.cfg.ReadOnly {
		return func() tea.Msg {
			return forms.ResultMsg{ID: m.ID, Err: errors.New("read-only console: nothing is sent")}
		}
	}
	return func() tea.Msg {
		if svc == nil {
			return forms.ResultMsg{ID: m.ID, Err: errors.New("no gateway is configured for operations")}
		}
		res, err := m.Intent.Run(ctx, svc)
		return forms.ResultMsg{ID: m.ID, Result: res, Err: err}
	}
}

// operation opens the form for an operation intent: it loads what the form
// needs (in a command) and pushes the form.
func (a *App) operation(i views.Intent) tea.Cmd {
	if a.cfg.Ops == nil {
		a.status = views.StatusMsg{Level: views.LevelWarn, Text: "operations need a gateway; this console has none"}
		return nil
	}
	st, mode, now := a.cfg.Store, a.cfg.Ops.Mode(), a.cfg.Now
	cur, codes, partial := a.cfg.Currency, a.cfg.GiftCardCodes, a.cfg.PartialRefunds
	affixes := forms.ScanAffixes(a.cfg.ScanPrefix, a.cfg.ScanSuffix)
	fail := func(err error) tea.Msg { return views.StatusMsg{Level: views.LevelWarn, Text: err.Error()} }
	open := func(f forms.Form) tea.Msg {
		if a.approvalsOn() {
			// The confirm step says a refund above the threshold waits.
			f = forms.WithApproval(f, a.cfg.Ops.ApprovalOver(), ops.ApproverRoles())
		}
		return openDialogMsg{FormDialog(f)}
	}
	switch i := i.(type) {
	case views.NewReservationIntent:
		return func() tea.Msg { return open(forms.NewTestReservation(mode, now(), cur)) }
	case views.GiftCardPayIntent:
		cards := a.testCards()
		return func() tea.Msg { return open(forms.NewGiftCardPay(codes, cur, "", mode, cards...)) }
	case views.PayRemainderIntent:
		cards, c := a.testCards(), cur
		if i.Currency != "" {
			c = i.Currency
		}
		return func() tea.Msg {
			return open(forms.NewGiftCardRemainder(codes, c, i.Group, i.ServiceCode, i.Remainder, i.Invoice, mode, cards...))
		}
	case views.CaptureIntent, views.CancelIntent, views.UpdateIntent:
		ref := reservationRef(i)
		return func() tea.Msg {
			r, err := st.Reservation(a.opsCtx(), ref)
			if err != nil {
				return fail(err)
			}
			switch i.(type) {
			case views.CaptureIntent:
				if err := r.CanCapture(); err != nil {
					return fail(err)
				}
				if !r.LinesKnown {
					return open(forms.NewCaptureByAmount(r, mode, now))
				}
				return open(forms.NewCapture(r, mode, now, affixes))
			case views.CancelIntent:
				if err := r.CanCancel(); err != nil {
					return fail(err)
				}
				return open(forms.NewCancel(r, mode))
			}
			// An update changes what is still reserved: nothing to do on a
			// reservation that is fully captured, closed or cancelled.
			if st := r.State(); st != store.StateReserved && st != store.StatePartlyCaptured {
				return fail(fmt.Errorf("reservation %s is %s: nothing left to update", r.ReservationNumber, strings.ReplaceAll(string(st), "_", " ")))
			}
			return open(forms.NewUpdate(r, mode))
		}
	case views.RefundIntent:
		return func() tea.Msg {
			t, err := st.Transaction(a.opsCtx(), i.TransactionKey)
			if err != nil {
				return fail(err)
			}
			switch t.Kind {
			case store.KindGiftCardPay, store.KindGiftCardRemainder:
				return open(forms.NewGiftCardRefund(t, partial, mode))
			case store.KindCapture:
				return open(forms.NewRefund([]*store.Transaction{t}, mode))
			}
			return fail(fmt.Errorf("a %s cannot be refunded; pick a capture or a gift card payment", t.Kind))
		}
	case views.ReturnIntent:
		return func() tea.Msg {
			r, err := st.Reservation(a.opsCtx(), i.ReservationKey)
			if err != nil {
				return fail(fmt.Errorf("reservation %s: %w", i.ReservationKey, err))
			}
			txs, err := st.TransactionsFor(a.opsCtx(), r.Key)
			if err != nil {
				return fail(err)
			}
			if r.CapturedAmount.IsZero() {
				return fail(fmt.Errorf("reservation %s: nothing was captured, so nothing can be refunded (cancel instead)", r.ReservationNumber))
			}
			return open(forms.NewReturn(r, txs, mode))
		}
	case views.ResolveIntent:
		return func() tea.Msg {
			journal, ok := st.(interface {
				Op(ctx context.Context, id uint64) (*store.PendingOp, error)
			})
			if !ok {
				return fail(fmt.Errorf("resolve operation %d: run paydesk resolve %d --note …", i.OpID, i.OpID))
			}
			op, err := journal.Op(a.opsCtx(), i.OpID)
			if err != nil {
				return fail(fmt.Errorf("operation %d: %w", i.OpID, err))
			}
			return open(forms.NewResolve(op, mode))
		}
	}
	return nil
}

// testCards are the embedded sandbox's gift cards for the payment form;
// none against another gateway.
func (a *App) testCards() []forms.TestCard {
	sb, ok := a.cfg.Sandbox.(interface{ Cards() []sandbox.CardInfo })
	if !ok || a.cfg.Mode.IsLive() {
		return nil
	}
	out := []forms.TestCard{{Number: api.TestCardNumber, PIN: "= the amount in cents"}}
	for _, c := range sb.Cards() {
		out = append(out, forms.TestCard{Service: c.ServiceCode, Number: c.Number, PIN: c.PIN, Balance: c.Balance.StringFixed(2) + " " + c.Currency})
	}
	return out
}

func reservationRef(i views.Intent) string {
	switch i := i.(type) {
	case views.CaptureIntent:
		return i.ReservationKey
	case views.CancelIntent:
		return i.ReservationKey
	case views.UpdateIntent:
		return i.ReservationKey
	}
	return ""
}
