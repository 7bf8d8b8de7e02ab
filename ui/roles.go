package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/access"
	"paydesk/store"
	"paydesk/views"
)

// The console offers what the user's role may do and hides the rest (the
// footer, the help, the palette); a key or intent of a hidden action says
// who may. The operations layer refuses them all the same: this is only
// what the user sees.

func (a *App) opsCtx() context.Context {
	if a.cfg.Context != nil {
		return a.cfg.Context
	}
	return context.Background()
}

// allows reports whether the console's user may do any of acts; without
// operations (no gateway) everything is allowed, as nothing runs.
func (a *App) allows(acts ...access.Action) bool {
	if a.cfg.Ops == nil {
		return true
	}
	for _, act := range acts {
		if a.cfg.Ops.Allows(a.opsCtx(), act) {
			return true
		}
	}
	return false
}

// keyNeeds is what a changing key needs; ok is false for keys the roles do
// not govern.
func (a *App) keyNeeds(b key.Binding) ([]access.Action, bool) {
	k := a.keys
	same := func(x key.Binding) bool { return x.Help().Key == b.Help().Key } // a screen may word a key its own way (f: refund a return)
	switch {
	case same(k.Capture):
		return []access.Action{access.Capture}, true
	case same(k.Cancel):
		return []access.Action{access.Cancel, access.CancelRest}, true
	case same(k.Update):
		return []access.Action{access.Update}, true
	case same(k.Refund):
		return []access.Action{access.Refund}, true
	case same(k.GiftCardPay), same(k.NewReservation):
		return []access.Action{access.Payment}, true
	case same(k.Resolve):
		return []access.Action{access.Resolve, access.Lookup}, true
	case same(k.Batch):
		return []access.Action{access.Batch}, true
	}
	for _, d := range views.ApproveKeys() {
		if same(d) {
			return []access.Action{access.Approve}, true
		}
	}
	return nil, false
}

// keyAllowed reports whether the user's role may use the key.
func (a *App) keyAllowed(b key.Binding) bool {
	need, ok := a.keyNeeds(b)
	return !ok || a.allows(need...)
}

// intentNeeds is what an operation intent needs.
func intentNeeds(i views.Intent) []access.Action {
	switch i.(type) {
	case views.CaptureIntent:
		return []access.Action{access.Capture}
	case views.CancelIntent:
		return []access.Action{access.Cancel, access.CancelRest}
	case views.UpdateIntent:
		return []access.Action{access.Update}
	case views.RefundIntent, views.ReturnIntent:
		return []access.Action{access.Refund}
	case views.NewReservationIntent, views.GiftCardPayIntent, views.PayRemainderIntent:
		return []access.Action{access.Payment}
	case views.ResolveIntent:
		return []access.Action{access.Resolve, access.Lookup}
	case views.ApproveIntent, views.DenyIntent:
		return []access.Action{access.Approve}
	case views.BulkIntent:
		return []access.Action{access.Batch} // a bulk action is a batch
	case views.RedeliverIntent:
		return []access.Action{access.Redeliver} // no money moves: no batch
	}
	return nil
}

// refusedByRole says why the user may not run the intent ("" when they
// may).
func (a *App) refusedByRole(i views.Intent) string {
	need := intentNeeds(i)
	if len(need) == 0 || a.allows(need...) {
		return ""
	}
	return a.whoMay(need[0])
}

// whoMay is the refusal's text: who the user is and who may.
func (a *App) whoMay(act access.Action) string {
	p := a.cfg.Ops.Principal(a.opsCtx())
	var may []string
	for _, r := range access.Who(act) {
		may = append(may, string(r))
	}
	return fmt.Sprintf("%s (role %s) may not %s: only %s may", p.User, p.Role, act, strings.Join(may, ", "))
}

// refusedKey is the refusal of a changing key of the screen on top that
// the role may not use ("" when it may or the key is not one).
func (a *App) refusedKey(msg tea.KeyPressMsg) string {
	for _, act := range a.actions() {
		if !act.Changes {
			continue
		}
		for _, k := range act.Key.Keys() {
			if msg.String() != k {
				continue
			}
			if need, ok := a.keyNeeds(act.Key); ok && !a.allows(need...) {
				return a.whoMay(need[0])
			}
		}
	}
	return ""
}

// roleNote is the help overlay's line about the role: what is off.
func (a *App) roleNote() string {
	if a.cfg.Ops == nil {
		return ""
	}
	p := a.cfg.Ops.Principal(a.opsCtx())
	if p.Role == access.Admin {
		return ""
	}
	var off []string
	for _, b := range a.changingBindings() {
		if !a.keyAllowed(*b) {
			off = append(off, b.Help().Desc)
		}
	}
	if len(off) == 0 {
		return ""
	}
	return fmt.Sprintf("Signed in as %s, role %s: %s are not yours to do.", p.User, p.Role, strings.Join(off, ", "))
}

// approvalsOn: the console shows the approvals key when four-eyes is on.
func (a *App) approvalsOn() bool {
	return a.cfg.Ops != nil && a.cfg.Ops.ApprovalOver().IsPositive()
}

type approvalStore interface {
	Approvals(ctx context.Context) ([]*store.Approval, error)
}

// loadApprovals reads the requests for the attention tab and the page.
func (a *App) loadApprovals() tea.Cmd {
	st, ok := a.cfg.Store.(approvalStore)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		list, err := st.Approvals(a.opsCtx())
		return views.ApprovalsMsg{List: list, Err: err}
	}
}

// openApprovals opens the approvals page.
func (a *App) openApprovals() tea.Cmd {
	a.openPage(views.NewApprovals(a.vctx, a.allows(access.Approve)))
	if cmd := a.loadApprovals(); cmd != nil {
		return cmd
	}
	return func() tea.Msg { return views.ApprovalsMsg{Err: errors.New("this cache keeps no approval requests")} }
}

// approvalIntent runs the approvals page's intents.
func (a *App) approvalIntent(i views.Intent) (tea.Cmd, bool) {
	svc, ctx := a.cfg.Ops, a.opsCtx()
	switch i := i.(type) {
	case views.OpenApprovals:
		return a.openApprovals(), true
	case views.ApproveIntent:
		if svc == nil {
			return views.Status(views.LevelWarn, "operations need a gateway; this console has none"), true
		}
		a.status = views.StatusMsg{Text: fmt.Sprintf("approving request %d and sending it…", i.ID)}
		return func() tea.Msg {
			res, err := svc.Approve(ctx, i.ID)
			if err != nil {
				return views.StatusMsg{Level: views.LevelError, Text: err.Error()}
			}
			return views.StatusMsg{Level: levelOf(res.State), Text: fmt.Sprintf("request %d approved: refund %s %s %s (%s)",
				i.ID, res.Target, res.Amount.StringFixed(2), res.Currency, res.State)}
		}, true
	case views.DenyIntent:
		if svc == nil {
			return views.Status(views.LevelWarn, "operations need a gateway; this console has none"), true
		}
		return func() tea.Msg {
			if err := svc.Deny(ctx, i.ID, i.Reason); err != nil {
				return views.StatusMsg{Level: views.LevelError, Text: err.Error()}
			}
			return views.StatusMsg{Level: views.LevelOK, Text: fmt.Sprintf("request %d denied; nothing was sent", i.ID)}
		}, true
	}
	return nil, false
}
