package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/query"
	"paydesk/store"
	"paydesk/ui/theme"
)

// Approvals is the page of four-eyes requests: refunds above the approval
// threshold that wait for a second person. a approves the selected one
// (it is then sent), d denies it with a reason typed on the page. The
// server decides who may: the console offers the keys only to a role
// that may approve, and nobody approves their own.
type Approvals struct {
	ctx *Context
	// rows is the list component over the requests (the filter "/"
	// takes store.ApprovalFilter); list the requests as loaded.
	rows   *MemList[*store.Approval]
	table  *Table
	list   []*store.Approval
	err    error
	width  int
	height int
	// CanDecide: the console's user may approve (finance, admin).
	CanDecide bool
	// denying is the request whose denial reason is being typed; reason
	// the text so far.
	denying uint64
	reason  string
	// approving is the request whose approval waits for y: one key must
	// not send money (the confirm step every other refund has).
	approving uint64
}

// ApprovalsMsg carries the requests, newest first.
type ApprovalsMsg struct {
	List []*store.Approval
	Err  error
}

// Approval intents: the console runs them through the operations layer.
type (
	ApproveIntent struct{ ID uint64 }
	DenyIntent    struct {
		ID     uint64
		Reason string
	}
	// OpenApprovals opens the approvals page.
	OpenApprovals struct{}
)

func (ApproveIntent) intent() {}
func (DenyIntent) intent()    {}
func (OpenApprovals) intent() {}

// The page's own keys.
var (
	approveKey = key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve and send"))
	denyKey    = key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "deny"))
)

// ApproveKeys are the page's deciding keys (the console greys them for a
// role that may not approve).
func ApproveKeys() []key.Binding { return []key.Binding{approveKey, denyKey} }

var approvalColumns = []Column{
	{Title: "ID", Width: 4, Right: true},
	{Title: "STATE", Width: 9},
	{Title: "AMOUNT", Width: 14, Right: true},
	{Title: "KIND", Width: 15, Drop: 2},
	{Title: "REQUESTED BY", Width: 14},
	{Title: "EXPIRES", Width: 12, Drop: 1},
	{Title: "WHAT", Width: 20, Flex: true},
}

// NewApprovals makes the page.
func NewApprovals(ctx *Context, canDecide bool) *Approvals {
	rows := NewMemList(ctx, approvalColumns, func(a **store.Approval) string { return itoa(int((*a).ID)) }, store.ApprovalFilter,
		func(a **store.Approval, w *query.Query) bool { return store.KeepApproval(*a, w, ctx.Now()) })
	return &Approvals{ctx: ctx, rows: rows, table: rows.Table(), CanDecide: canDecide}
}

// Title names the page.
func (p *Approvals) Title() string { return "Approvals" }

// SetSize sets the page's size.
func (p *Approvals) SetSize(w, h int) {
	p.width, p.height = w, h
	p.table.SetSize(w, max(h-1-approvalDetail, 3))
}

const approvalDetail = 5

// Capturing is true while a denial's reason or the filter is typed.
func (p *Approvals) Capturing() bool { return p.denying != 0 || p.approving != 0 || p.rows.Prompt() }

// Actions are the page's keys.
func (p *Approvals) Actions() []Action {
	if !p.CanDecide {
		return []Action{{Key: p.ctx.Keys.Filter}}
	}
	return []Action{{Key: approveKey, Changes: true}, {Key: denyKey, Changes: true}, {Key: p.ctx.Keys.Filter}}
}

func (p *Approvals) selected() *store.Approval {
	if a, ok := p.rows.Selected(); ok {
		return *a
	}
	return nil
}

// Update handles the page's data and keys.
func (p *Approvals) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case ApprovalsMsg:
		p.err = msg.Err
		if msg.Err == nil {
			p.list = msg.List
			p.rows.SetRows(msg.List)
		}
	case tea.KeyPressMsg:
		if p.denying != 0 {
			return p.typeReason(msg)
		}
		if p.approving != 0 {
			return p.confirmApproval(msg)
		}
		if cmd, done := p.rows.Update(msg); done {
			return cmd
		}
		a := p.selected()
		if a == nil || !p.CanDecide {
			return nil
		}
		if a.StateAt(p.ctx.Now()) != store.ApprovalPending {
			if key.Matches(msg, approveKey, denyKey) {
				return Status(LevelWarn, fmt.Sprintf("request %d is %s: nothing to decide", a.ID, a.StateAt(p.ctx.Now())))
			}
			return nil
		}
		switch {
		case key.Matches(msg, approveKey):
			p.approving = a.ID
		case key.Matches(msg, denyKey):
			p.denying, p.reason = a.ID, ""
		}
	case tea.MouseWheelMsg, tea.PasteMsg:
		cmd, _ := p.rows.Update(msg)
		return cmd
	}
	return nil
}

// confirmApproval takes the answer to "approve and send?": y sends (the
// request as it is now: a request that expired or was decided meanwhile
// is refused by the server), n or esc keeps it waiting.
func (p *Approvals) confirmApproval(msg tea.KeyPressMsg) tea.Cmd {
	id := p.approving
	switch msg.String() {
	case "y", "Y":
		p.approving = 0
		return send(ApproveIntent{ID: id})
	case "n", "N", "esc":
		p.approving = 0
		return Status(LevelInfo, fmt.Sprintf("request %d not approved: it still waits", id))
	}
	return nil
}

// maxReason bounds a typed denial reason.
const maxReason = 200

func (p *Approvals) typeReason(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		p.denying = 0
	case "enter":
		if strings.TrimSpace(p.reason) == "" {
			return Status(LevelWarn, "a denial needs a reason (esc: do not deny)")
		}
		id, reason := p.denying, strings.TrimSpace(p.reason)
		p.denying, p.reason = 0, ""
		return send(DenyIntent{ID: id, Reason: reason})
	case "backspace":
		if r := []rune(p.reason); len(r) > 0 {
			p.reason = string(r[:len(r)-1])
		}
	default:
		if t := msg.Text; t != "" && len(p.reason)+len(t) <= maxReason {
			p.reason += clean(t)
		}
	}
	return nil
}

// View draws the page.
func (p *Approvals) View() string {
	t := p.ctx.Theme
	now := p.ctx.Now()
	pending := 0
	for _, a := range p.list {
		if a.StateAt(now) == store.ApprovalPending {
			pending++
		}
	}
	hint := "Refunds above the approval threshold wait here for a second person"
	if p.CanDecide {
		hint += " · a approves and sends · d denies"
	} else {
		hint += " · finance or admin decides"
	}
	left := t.Muted.Render(hint)
	if p.rows.Prompt() || p.rows.Query() != "" {
		left = promptLine(t, p.rows.Prompt(), p.rows.Query())
	}
	info := spread(left, t.Muted.Render(fmt.Sprintf("%d waiting", pending)), p.width)
	if p.err != nil {
		info = spread(t.Failed.Render("Could not read the requests: "+clean(p.err.Error())), "", p.width)
	}
	if err := p.rows.Err(); err != nil {
		return info + "\n" + padLines("\n  "+t.Failed.Render(FilterErrorText(err)), p.height-1)
	}
	if p.rows.Len() == 0 {
		text := t.OK.Render("No approval requests.")
		if len(p.list) > 0 {
			text = t.Muted.Render("No request matches the filter — press esc to clear it.")
		}
		return info + "\n" + padLines("\n  "+text, p.height-1)
	}
	body := p.table.View(func(i int, out []Cell) {
		ap, ok := p.rows.At(i)
		if !ok {
			return
		}
		a := *ap
		st := a.StateAt(now)
		out[0] = Cell{Text: fmt.Sprint(a.ID)}
		out[1] = Cell{Text: string(st), Paint: approvalPaint(st)}
		out[2] = Cell{Text: a.Amount.StringFixed(2) + " " + clean(a.Currency)}
		out[3] = Cell{Text: clean(a.Kind)}
		out[4] = Cell{Text: clean(nameOf(a))}
		out[5] = Cell{Text: a.Expires.In(p.ctx.loc()).Format("02 Jan 15:04"), Paint: theme.PaintMuted}
		out[6] = Cell{Text: clean(a.Target + " · " + a.Note)}
	})
	sel := p.selected()
	var d strings.Builder
	d.WriteString(t.Muted.Render(strings.Repeat("─", max(p.width, 1))) + "\n")
	d.WriteString(t.Accent.Render(fmt.Sprintf("request %d · %s %s · %s", sel.ID, clean(sel.Kind), clean(sel.Target), sel.StateAt(now))) + "\n")
	what := fmt.Sprintf("requested by %s on %s: %s", clean(nameOf(sel)), sel.Created.In(p.ctx.loc()).Format("02 Jan 15:04"), clean(sel.Note))
	if sel.Decider != "" {
		what += fmt.Sprintf(" · decided by %s", clean(sel.Decider))
		if sel.Reason != "" {
			what += ": " + clean(sel.Reason)
		}
	}
	if sel.Result != "" {
		what += " · sent: " + clean(sel.Result)
	}
	d.WriteString(wrapText(what, p.width))
	if p.denying != 0 {
		d.WriteString("\n" + t.Warning.Render(fmt.Sprintf("deny request %d, why? ", p.denying)) + clean(p.reason) + "█  " + t.Muted.Render("enter denies · esc keeps it"))
	}
	if ap := p.request(p.approving); ap != nil {
		// Named by its ID, amount and target, whatever row a reload
		// selected meanwhile.
		d.WriteString("\n" + t.Warning.Render(fmt.Sprintf("approve request %d and send the %s of %s %s against %s now? ", ap.ID, clean(ap.Kind),
			ap.Amount.StringFixed(2), clean(ap.Currency), clean(ap.Target))) + t.Muted.Render("y approves and sends · n/esc keeps it waiting"))
	}
	used := strings.Count(body, "\n") + 1
	return info + "\n" + body + "\n" + padLines(d.String(), p.height-1-used)
}

// request is the request of that ID in the list, nil when none.
func (p *Approvals) request(id uint64) *store.Approval {
	for _, a := range p.list {
		if id != 0 && a.ID == id {
			return a
		}
	}
	return nil
}

func nameOf(a *store.Approval) string {
	if a.RequestedBy != "" {
		return a.RequestedBy
	}
	return a.Requester
}

func approvalPaint(s store.ApprovalState) string {
	switch s {
	case store.ApprovalPending:
		return theme.PaintPending
	case store.ApprovalDenied, store.ApprovalExpired:
		return theme.PaintFailed
	}
	return theme.PaintOK
}

// approvalRows are the Attention rows of the pending requests: enter
// opens the approvals page.
func approvalRows(list []*store.Approval, now time.Time) []AttentionRow {
	var rows []AttentionRow
	for _, a := range list {
		if a.StateAt(now) != store.ApprovalPending {
			continue
		}
		rows = append(rows, AttentionRow{Kind: AttnApproval, When: a.Expires, Subject: fmt.Sprintf("request %d", a.ID),
			What: fmt.Sprintf("%s %s %s by %s waits for approval (finance or admin; A opens the approvals)", a.Kind,
				a.Amount.StringFixed(2), a.Currency, nameOf(a)), Open: OpenApprovals{}})
	}
	return rows
}
