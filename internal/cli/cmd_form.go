package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"paydesk/internal/ops"
	"paydesk/store"
	"paydesk/views/forms"
)

// formHost runs one operation form as a small program of its own: it
// sizes the form, runs the intents the form submits as commands (never in
// Update) and answers with ResultMsg, and quits when the form closes. The
// console hosts the same forms on its dialog stack the same way.
type formHost struct {
	ctx  context.Context
	svc  *ops.Service
	form forms.Form
	last *ops.Result
}

func (h *formHost) Init() tea.Cmd { return h.form.Init() }

func (h *formHost) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch m := msg.(type) {
	case tea.WindowSizeMsg:
		h.form.SetSize(m.Width, m.Height)
		return h, nil
	case tea.KeyPressMsg:
		if m.String() == "ctrl+c" && !h.form.Busy() {
			return h, tea.Quit
		}
	case forms.SubmitMsg:
		ctx, svc := h.ctx, h.svc
		return h, func() tea.Msg {
			res, err := m.Intent.Run(ctx, svc)
			if err == nil && res.Key != "" && res.State == store.OpSettled {
				_, _ = svc.Waiter().Settle(ctx, res, 2*time.Second) // let the push land before showing it
			}
			return forms.ResultMsg{ID: m.ID, Result: res, Err: err}
		}
	case forms.CloseMsg:
		h.last = m.Result
		return h, tea.Quit
	}
	f, cmd := h.form.Update(msg)
	h.form = f
	return h, cmd
}

func (h *formHost) View() tea.View {
	v := tea.NewView(h.form.View())
	v.AltScreen = true
	return v
}

// formKinds are the forms `paydesk form` opens.
var formKinds = []string{"capture", "cancel", "update", "refund", "giftcard-pay", "giftcard-refund", "test-reservation", "resolve"}

func formCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "form", sio: sio}
	cmd := c.command("form KIND [TARGET]", "Open one operation form in the terminal (capture, refund, …)", cobra.RangeArgs(1, 2), runForm)
	cmd.Long = `Open one operation form in the terminal, as the console does.

Forms: capture, cancel and update a RESERVATION; refund a CAPTURE (or the captures
of a RESERVATION); giftcard-pay; giftcard-refund a PAYMENT; test-reservation;
resolve an OPERATION whose outcome is unknown.`
	cmd.ValidArgs = formKinds
	// A form is a screen of its own on the cache: an owner cannot run one
	// for a client (the console has the same forms).
	delete(cmd.Annotations, ownerRuns)
	c.gatewayFlags()
	addFlags(cmd.Flags(), "currency")
	return cmd
}

// runForm opens an operation form in the terminal:
// paydesk form capture|cancel|update|refund|giftcard-pay|giftcard-refund|test-reservation [TARGET].
func runForm(ctx context.Context, c *cmdContext) int {
	sio := c.sio
	if err := checkChoice("form", c.args[0], formKinds); err != nil {
		return c.usage("%v", err)
	}
	if !sio.Interactive {
		return c.usage("a form needs a terminal; in scripts use the commands (paydesk --help lists them)")
	}
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	svc := env.svc
	target := ""
	if len(c.args) > 1 {
		target = c.args[1]
	}
	need := func() bool {
		if target == "" {
			fmt.Fprintf(sio.Stderr, "paydesk form %s: which one? (a reservation or transaction)\n", c.args[0])
			return false
		}
		return true
	}
	var f forms.Form
	switch c.args[0] {
	case "capture", "cancel", "update":
		if !need() {
			return exitUsage
		}
		r, err := env.db.Reservation(ctx, target)
		if err != nil {
			return c.fail(err)
		}
		switch c.args[0] {
		case "capture":
			f = forms.NewCapture(r, svc.Mode(), svc.Now, forms.ScanAffixes(c.set.ScanPrefix, c.set.ScanSuffix))
		case "cancel":
			f = forms.NewCancel(r, svc.Mode())
		default:
			f = forms.NewUpdate(r, svc.Mode())
		}
	case "refund":
		if !need() {
			return exitUsage
		}
		txs, err := captures(ctx, env.db, target)
		if err != nil {
			return c.fail(err)
		}
		f = forms.NewRefund(txs, svc.Mode())
	case "giftcard-pay":
		f = forms.NewGiftCardPay(nil, "", target, svc.Mode())
	case "giftcard-refund":
		if !need() {
			return exitUsage
		}
		t, err := env.db.ResolveTransaction(ctx, target)
		if err != nil {
			return c.fail(err)
		}
		f = forms.NewGiftCardRefund(t, false, svc.Mode())
	case "test-reservation":
		f = forms.NewTestReservation(svc.Mode(), svc.Now(), c.set.Currency)
	case "resolve":
		if !need() {
			return exitUsage
		}
		id, err := strconv.ParseUint(target, 10, 64)
		if err != nil {
			fmt.Fprintf(sio.Stderr, "paydesk form resolve: operation %q: not a number\n", target)
			return exitUsage
		}
		op, err := env.db.Op(ctx, id)
		if err != nil {
			return c.fail(fmt.Errorf("operation %d: %w", id, err))
		}
		f = forms.NewResolve(op, svc.Mode())
	default:
		fmt.Fprintf(sio.Stderr, "paydesk form: unknown form %q\n", c.args[0])
		return exitUsage
	}
	h := &formHost{ctx: ctx, svc: svc, form: f}
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if sio.Stdin != nil {
		opts = append(opts, tea.WithInput(sio.Stdin))
	}
	opts = append(opts, tea.WithOutput(sio.Stdout))
	if _, err := tea.NewProgram(h, opts...).Run(); err != nil && ctx.Err() == nil {
		return c.fail(err)
	}
	if h.last == nil {
		return exitFailed // closed without an outcome
	}
	return c.report(*h.last, nil, true)
}

// captures lists the captures of a reservation, or the one capture named.
func captures(ctx context.Context, db *store.DB, ref string) ([]*store.Transaction, error) {
	if t, err := db.Transaction(ctx, ref); err == nil {
		return []*store.Transaction{t}, nil
	}
	txs, err := db.TransactionsFor(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("%s: neither a capture nor a reservation: %w", ref, err)
	}
	return txs, nil
}
