package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/internal/access"
	"paydesk/internal/ops"
	"paydesk/store"
	"paydesk/views"
	"paydesk/views/forms"
)

// The Deliveries page (views/deliveries.go): what the console reads of
// the outbox, the resends it asks the store for, and the confirmation of
// a resend of many.

// deliveryStore is what the page needs of the cache (*store.DB has it).
type deliveryStore interface {
	RecentDeliveries(ctx context.Context, limit int) ([]*store.Delivery, error)
	CountResend(ctx context.Context, r store.ResendRequest) (int, error)
	Redeliver(ctx context.Context, r store.ResendRequest) (int, error)
}

// deliveryLimit is how many of the newest deliveries the console reads:
// the page's rows and what the Attention tab judges the endpoints by.
const deliveryLimit = 2000

// deliveryPoll is how often the console reads the deliveries again while
// its Deliveries page is open and nothing told it: the worker that
// records the attempts may run in another process (paydesk listen) whose
// attempts send no change. deliveryPollIdle is the same for the Attention
// tab alone: fifty consoles of a server each reading 2,000 deliveries
// every few seconds would cost the database more than the row is worth.
const (
	deliveryPoll     = 5 * time.Second
	deliveryPollIdle = 30 * time.Second
)

// deliveriesOpen reports whether a Deliveries page (or a delivery's
// attempts) is open on any tab.
func (a *App) deliveriesOpen() bool {
	for _, st := range a.stacks {
		for _, p := range st {
			switch p.(type) {
			case *views.Deliveries, *views.DeliveryDetail:
				return true
			}
		}
	}
	return false
}

// loadDeliveries reads the newest deliveries for the page and the
// Attention tab.
func (a *App) loadDeliveries() tea.Cmd {
	st, ok := a.cfg.Store.(deliveryStore)
	if !ok {
		return nil
	}
	ctx := a.opsCtx()
	return func() tea.Msg {
		ds, err := st.RecentDeliveries(ctx, deliveryLimit)
		return views.DeliveriesMsg{List: ds, Err: err}
	}
}

// pollDeliveries reads the deliveries again once deliveryPoll (the page
// open) or deliveryPollIdle has passed since the last read (on the
// console's age tick).
func (a *App) pollDeliveries() tea.Cmd {
	now := a.cfg.Now()
	every := deliveryPollIdle
	if a.deliveriesOpen() {
		every = deliveryPoll
	}
	if now.Sub(a.deliveriesRead) < every && !now.Before(a.deliveriesRead) {
		return nil
	}
	a.deliveriesRead = now
	return a.loadDeliveries()
}

// canRedeliver: the user's role may resend deliveries.
func (a *App) canRedeliver() bool { return !a.cfg.ReadOnly && a.allows(access.Redeliver) }

// openDeliveries opens the Deliveries page, filtered to endpoint.
func (a *App) openDeliveries(endpoint string) tea.Cmd {
	a.openPage(views.NewDeliveries(a.vctx, endpoint, a.canRedeliver()))
	if _, ok := a.cfg.Store.(deliveryStore); !ok {
		return send(views.DeliveriesMsg{Err: errors.New("this cache keeps no deliveries")})
	}
	a.deliveriesRead = a.cfg.Now()
	return a.loadDeliveries()
}

// operator is who the audit log names for a resend from this console.
func (a *App) operator() string {
	if a.cfg.Ops != nil {
		return a.cfg.Ops.Principal(a.opsCtx()).User
	}
	return access.Alone(os.Getenv("USER")).User
}

// deliveryIntent runs the page's intents and the bulk menu's resend.
func (a *App) deliveryIntent(i views.Intent) (tea.Cmd, bool) {
	switch i := i.(type) {
	case views.OpenDeliveries:
		return a.openDeliveries(i.Endpoint), true
	case views.OpenDelivery:
		a.openPage(views.NewDeliveryDetail(a.vctx, i.Delivery))
		return nil, true
	case views.RedeliverIntent:
		st, ok := a.cfg.Store.(deliveryStore)
		if !ok {
			return views.Status(views.LevelWarn, "this cache keeps no deliveries"), true
		}
		ctx := a.opsCtx()
		req := i.Request
		req.Operator, req.Via = a.operator(), "console"
		if !i.Confirmed {
			// A resend of many is counted and confirmed first: the shop
			// acts on every push it is sent again.
			return func() tea.Msg {
				n, err := st.CountResend(ctx, req)
				switch {
				case err != nil:
					return views.StatusMsg{Level: views.LevelError, Text: err.Error()}
				case n == 0:
					return views.StatusMsg{Level: views.LevelWarn, Text: "nothing to resend: no delivery is " + i.What}
				}
				return openDialogMsg{&confirmDialog{id: fmt.Sprintf("redeliver-%p", &req), title: "Resend to the shop",
					text: fmt.Sprintf("Send %s again (%s)? They go at once, in order per transaction.", countWord(n), i.What),
					yes:  redeliver(ctx, st, req, i.What)}}
			}, true
		}
		return redeliver(ctx, st, req, i.What), true
	}
	return nil, false
}

// redeliver is the command that resends what req selects and says how
// many in the status line.
func redeliver(ctx context.Context, st deliveryStore, req store.ResendRequest, what string) tea.Cmd {
	return func() tea.Msg {
		n, err := st.Redeliver(ctx, req)
		if errors.Is(err, store.ErrNothingToResend) {
			return views.StatusMsg{Level: views.LevelWarn, Text: "nothing to resend: no delivery is " + what}
		}
		if err != nil {
			return views.StatusMsg{Level: views.LevelError, Text: err.Error()}
		}
		return views.StatusMsg{Level: views.LevelOK, Text: fmt.Sprintf("%s queued again (%s): they go now", countWord(n), what)}
	}
}

func countWord(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}

// confirmDialog asks yes or no; yes runs its command. The command, not an
// intent sent back: a message sent while the dialog is still open goes to
// the screens, not to the console's intents, and the dialog's close is
// not sure to arrive first.
type confirmDialog struct {
	id, title, text string
	yes             tea.Cmd
	width           int
	closed          bool
}

func (d *confirmDialog) Init() tea.Cmd { return nil }
func (d *confirmDialog) Title() string { return d.title }
func (d *confirmDialog) ID() string    { return d.id }
func (d *confirmDialog) Busy() bool    { return false }
func (d *confirmDialog) Closed() (*ops.Result, bool) {
	return nil, d.closed
}
func (d *confirmDialog) SetSize(w, _ int) { d.width = w }

func (d *confirmDialog) Update(msg tea.Msg) (Dialog, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return d, nil
	}
	closeIt := func() tea.Msg { return forms.CloseMsg{ID: d.id} }
	switch k.String() {
	case "y", "Y":
		d.closed = true
		return d, tea.Batch(closeIt, d.yes)
	case "n", "N", "esc":
		d.closed = true
		return d, closeIt
	}
	return d, nil
}

func (d *confirmDialog) View() string {
	return d.title + "\n\n" + ansi.Wrap(d.text, max(d.width, 20), " ") + "\n\ny yes · n or esc no"
}

var _ deliveryStore = (*store.DB)(nil)
