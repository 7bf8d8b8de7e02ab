package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/access"
	"paydesk/store"
	"paydesk/ui/theme"
)

// Deliveries is the page of the outbox: every push delivered to a shop
// endpoint (paydesk listen --forward-to), newest first, with its attempts.
// enter opens a delivery's attempts; r sends the selected one again; R
// asks which to send again: every failed one, or those of the last hour or
// day. The page opens from every tab (D) and from an Attention row of a
// failing endpoint, filtered to that endpoint.
type Deliveries struct {
	ctx    *Context
	table  *Table
	all    []*store.Delivery // newest first, as loaded
	rows   []*store.Delivery // all, filtered
	err    error
	loaded bool
	width  int
	height int
	// endpoint, when set, keeps only the deliveries to it; failing keeps
	// only the failed ones (v).
	endpoint string
	failing  bool
	// CanResend: the console's user may resend deliveries (their role,
	// not a read-only console).
	CanResend bool
	// menu is open after R: the next key picks what to resend.
	menu bool
}

// DeliveriesMsg carries the newest deliveries, newest first.
type DeliveriesMsg struct {
	List []*store.Delivery
	Err  error
}

// Delivery intents.
type (
	// OpenDeliveries opens the Deliveries page, filtered to Endpoint when
	// it is set.
	OpenDeliveries struct{ Endpoint string }
	// OpenDelivery opens a delivery's attempts.
	OpenDelivery struct{ Delivery *store.Delivery }
	// RedeliverIntent asks the console to send deliveries again (the
	// store's Redeliver, audited with the console's user). What words the
	// selection for the confirmation; a request not Confirmed is counted
	// and confirmed first.
	RedeliverIntent struct {
		Request   store.ResendRequest
		What      string
		Confirmed bool
	}
)

func (OpenDeliveries) intent()  {}
func (OpenDelivery) intent()    {}
func (RedeliverIntent) intent() {}

// The page's own keys.
var (
	redeliverKey     = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resend this delivery"))
	redeliverManyKey = key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "resend failed / last hour / last day"))
	failingKey       = key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "only failed / all"))
)

var deliveryColumns = []Column{
	{Title: "ID", Width: 5, Right: true},
	{Title: "ENDPOINT", Width: 22, Flex: true},
	{Title: "PUSH", Width: 6, Right: true, Drop: 3},
	{Title: "STATE", Width: 10},
	{Title: "TRIES", Width: 5, Right: true},
	{Title: "LAST", Width: 16},
	{Title: "MS", Width: 6, Right: true, Drop: 2},
	{Title: "NEXT TRY", Width: 11, Drop: 1},
}

// NewDeliveries makes the page; endpoint filters it ("" for all).
func NewDeliveries(ctx *Context, endpoint string, canResend bool) *Deliveries {
	return &Deliveries{ctx: ctx, table: NewTable(ctx.Theme, deliveryColumns), endpoint: endpoint, CanResend: canResend && !ctx.ReadOnly}
}

// Title names the page.
func (p *Deliveries) Title() string { return "Deliveries" }

// Endpoint is the endpoint the page is filtered to ("" for all).
func (p *Deliveries) Endpoint() string { return p.endpoint }

// SetSize sets the page's size.
func (p *Deliveries) SetSize(w, h int) {
	p.width, p.height = w, h
	p.table.SetSize(w, max(h-1-deliveryDetail, 3))
}

const deliveryDetail = 4

// Capturing is always false: the menu takes one key of its own.
func (p *Deliveries) Capturing() bool { return false }

// Actions are the page's keys.
func (p *Deliveries) Actions() []Action {
	acts := []Action{{Key: p.ctx.Keys.Open}, {Key: failingKey}}
	if p.CanResend {
		acts = append(acts, Action{Key: redeliverKey, Changes: true}, Action{Key: redeliverManyKey, Changes: true})
	}
	return acts
}

func (p *Deliveries) filter() {
	p.rows = p.rows[:0]
	for _, d := range p.all {
		if p.endpoint != "" && d.Endpoint != p.endpoint {
			continue
		}
		if p.failing && !failed(d) {
			continue
		}
		p.rows = append(p.rows, d)
	}
	p.table.SetLen(len(p.rows))
}

// failed: given up, or waiting for a retry after a failed attempt.
func failed(d *store.Delivery) bool {
	return d.State == store.DeliveryFailed || (d.State == store.DeliveryPending && len(d.Attempts) > 0 && !d.LastAttempt().OK())
}

func (p *Deliveries) selected() *store.Delivery {
	if len(p.rows) == 0 {
		return nil
	}
	return p.rows[min(p.table.Cursor(), len(p.rows)-1)]
}

// Update handles the page's data and keys.
func (p *Deliveries) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case DeliveriesMsg:
		if msg.Err != nil {
			p.err = msg.Err
			return nil
		}
		// The cursor stays on its delivery as new ones come in on top.
		var onID uint64
		if d := p.selected(); d != nil && p.table.Cursor() > 0 {
			onID = d.ID
		}
		p.all, p.err, p.loaded = msg.List, nil, true
		p.filter()
		for i, d := range p.rows {
			if d.ID == onID {
				p.table.SetCursor(i)
			}
		}
	case tea.KeyPressMsg:
		if p.menu {
			return p.menuKey(msg)
		}
		k := p.ctx.Keys
		if p.table.HandleKey(msg, keyMapNav{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}) {
			return nil
		}
		switch {
		case key.Matches(msg, failingKey):
			p.failing = !p.failing
			p.filter()
			return nil
		case key.Matches(msg, redeliverKey, redeliverManyKey) && !p.CanResend:
			if p.ctx.ReadOnly {
				return Status(LevelWarn, "read-only console: resending deliveries is off")
			}
			return Status(LevelWarn, "resending deliveries is for "+rolesText(access.Who(access.Redeliver)))
		case key.Matches(msg, redeliverManyKey):
			p.menu = true
			return nil
		}
		d := p.selected()
		if d == nil {
			return nil
		}
		switch {
		case key.Matches(msg, k.Open):
			return send(OpenDelivery{Delivery: d})
		case key.Matches(msg, redeliverKey):
			return send(RedeliverIntent{Request: store.ResendRequest{ID: d.ID}, What: fmt.Sprintf("delivery %d to %s", d.ID, showEndpoint(d.Endpoint)), Confirmed: true})
		}
	case tea.MouseWheelMsg:
		p.table.HandleMouse(msg)
	}
	return nil
}

// menuKey picks what R resends: f every failed one, h those of the last
// hour, d of the last 24 hours (to the page's endpoint when filtered);
// any other key closes the menu.
func (p *Deliveries) menuKey(msg tea.KeyPressMsg) tea.Cmd {
	p.menu = false
	now := p.ctx.Now()
	req := store.ResendRequest{Endpoint: p.endpoint}
	var what string
	switch msg.String() {
	case "f":
		req.Query, what = store.DeliveryQuery{Failed: true}, "every failed delivery"
	case "h":
		req.Query, what = store.DeliveryQuery{Since: now.Add(-time.Hour)}, "every delivery of the last hour"
	case "d":
		req.Query, what = store.DeliveryQuery{Since: now.Add(-24 * time.Hour)}, "every delivery of the last 24 hours"
	default:
		return nil
	}
	if p.endpoint != "" {
		what += " to " + showEndpoint(p.endpoint)
	}
	return send(RedeliverIntent{Request: req, What: what})
}

func rolesText(rs []access.Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// View draws the page.
func (p *Deliveries) View() string {
	t := p.ctx.Theme
	hint := "Pushes delivered to the shop (paydesk listen --forward-to), newest first · enter: attempts"
	if p.CanResend {
		hint += " · r resend · R resend many"
	}
	scope := "all endpoints"
	if p.endpoint != "" {
		scope = showEndpoint(p.endpoint)
	}
	if p.failing {
		scope += ", failed only"
	}
	info := spread(t.Muted.Render(hint), t.Muted.Render(fmt.Sprintf("%d · %s", len(p.rows), scope)), p.width)
	if p.menu {
		info = spread(t.Accent.Render("resend: ")+t.Muted.Render("f every failed · h last hour · d last 24 hours · any other key: nothing"), "", p.width)
	}
	if p.err != nil {
		info = spread(t.Failed.Render("Could not read the deliveries: "+clean(p.err.Error())), "", p.width)
	}
	if len(p.rows) == 0 {
		text := "No deliveries: paydesk listen --forward-to URL (or forward-to in the config) delivers every push to the shop."
		switch {
		case !p.loaded && p.err == nil:
			text = "Reading the deliveries…"
		case len(p.all) > 0:
			text = "No delivery here; v shows all."
		}
		return info + "\n" + padLines("\n  "+t.Muted.Render(text), p.height-1)
	}
	now := p.ctx.Now()
	body := p.table.View(func(i int, out []Cell) {
		d := p.rows[i]
		out[0] = Cell{Text: fmt.Sprint(d.ID)}
		out[1] = Cell{Text: showEndpoint(d.Endpoint)}
		out[2] = Cell{Text: fmt.Sprint(d.PushID)}
		out[3] = Cell{Text: string(d.State), Paint: deliveryPaint(d)}
		out[4] = Cell{Text: fmt.Sprint(len(d.Attempts))}
		if a := d.LastAttempt(); !a.At.IsZero() {
			out[5] = Cell{Text: attemptWord(a) + " " + age(a.At, now), Paint: attemptPaint(a)}
			out[6] = Cell{Text: fmt.Sprint(a.Latency.Milliseconds())}
		} else {
			out[5] = Cell{Text: "–", Paint: theme.PaintMuted}
		}
		next := "–"
		if d.State == store.DeliveryPending && !d.NextAt.IsZero() {
			next = "now"
			if d.NextAt.After(now) {
				next = "in " + age(now, d.NextAt)
			}
		}
		out[7] = Cell{Text: next, Paint: theme.PaintMuted}
	})
	sel := p.selected()
	var b strings.Builder
	b.WriteString(t.Muted.Render(strings.Repeat("─", max(p.width, 1))) + "\n")
	b.WriteString(t.Accent.Render(fmt.Sprintf("delivery %d · push %d · key %s", sel.ID, sel.PushID, shortKey(clean(sel.Key)))) + "\n")
	b.WriteString(wrapText(deliverySummary(p.ctx, sel), p.width))
	used := strings.Count(body, "\n") + 1
	return info + "\n" + body + "\n" + padLines(b.String(), p.height-1-used)
}

// deliverySummary is one delivery in words: where it stands and the last
// answer.
func deliverySummary(ctx *Context, d *store.Delivery) string {
	s := fmt.Sprintf("to %s, recorded %s: %s", showEndpoint(d.Endpoint), ctx.stamp(d.Created), d.State)
	switch {
	case d.State == store.DeliveryDelivered:
		s += " at " + ctx.stamp(d.DeliveredAt)
	case d.State == store.DeliveryFailed:
		s += " (given up: r sends it again)"
	case !d.NextAt.IsZero():
		s += ", next try " + ctx.stamp(d.NextAt)
	}
	if d.Resent > 0 {
		s += fmt.Sprintf(" · resent %d×", d.Resent)
	}
	if a := d.LastAttempt(); !a.At.IsZero() {
		s += " · last answer: " + attemptWord(a)
		if x := clean(a.Excerpt); x != "" && !a.OK() {
			s += ": " + x
		}
	}
	return s
}

// attemptWord is an attempt's outcome: "HTTP 500", or why none came.
func attemptWord(a store.Attempt) string {
	if a.Error != "" {
		return "no answer (" + clean(a.Error) + ")"
	}
	return fmt.Sprintf("HTTP %d", a.Status)
}

func attemptPaint(a store.Attempt) string {
	if a.OK() {
		return theme.PaintOK
	}
	return theme.PaintFailed
}

func deliveryPaint(d *store.Delivery) string {
	switch {
	case d.State == store.DeliveryDelivered:
		return theme.PaintOK
	case failed(d):
		return theme.PaintFailed
	}
	return theme.PaintPending
}

// DeliveryDetail is the page of one delivery's attempts, oldest first.
type DeliveryDetail struct {
	ctx    *Context
	d      *store.Delivery
	table  *Table
	width  int
	height int
}

var attemptColumns = []Column{
	{Title: "#", Width: 3, Right: true},
	{Title: "AT", Width: 19},
	{Title: "ANSWER", Width: 12},
	{Title: "MS", Width: 6, Right: true},
	{Title: "EXCERPT OF THE ANSWER", Width: 20, Flex: true},
}

// NewDeliveryDetail makes the page.
func NewDeliveryDetail(ctx *Context, d *store.Delivery) *DeliveryDetail {
	p := &DeliveryDetail{ctx: ctx, d: d, table: NewTable(ctx.Theme, attemptColumns)}
	p.table.SetLen(len(d.Attempts))
	return p
}

// Title names the page.
func (p *DeliveryDetail) Title() string { return fmt.Sprintf("Delivery %d", p.d.ID) }

// SetSize sets the page's size.
func (p *DeliveryDetail) SetSize(w, h int) {
	p.width, p.height = w, h
	p.table.SetSize(w, max(h-3, 3))
}

// Capturing is always false.
func (p *DeliveryDetail) Capturing() bool { return false }

// Actions are the page's keys.
func (p *DeliveryDetail) Actions() []Action { return []Action{{Key: p.ctx.Keys.Back}} }

// Update follows the delivery as it is loaded again, and moves.
func (p *DeliveryDetail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case DeliveriesMsg:
		for _, d := range msg.List {
			if d.ID == p.d.ID {
				p.d = d
				p.table.SetLen(len(d.Attempts))
			}
		}
	case tea.KeyPressMsg:
		k := p.ctx.Keys
		p.table.HandleKey(msg, keyMapNav{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End})
	case tea.MouseWheelMsg:
		p.table.HandleMouse(msg)
	}
	return nil
}

// View draws the page: the delivery in words, then its attempts.
func (p *DeliveryDetail) View() string {
	t := p.ctx.Theme
	head := t.Accent.Render(fmt.Sprintf("delivery %d · push %d · key %s", p.d.ID, p.d.PushID, shortKey(clean(p.d.Key)))) + "\n" +
		wrapText(deliverySummary(p.ctx, p.d), p.width)
	if len(p.d.Attempts) == 0 {
		return padLines(head+"\n\n  "+t.Muted.Render("No attempt yet."), p.height)
	}
	body := p.table.View(func(i int, out []Cell) {
		a := p.d.Attempts[i]
		out[0] = Cell{Text: fmt.Sprint(i + 1)}
		out[1] = Cell{Text: p.ctx.stamp(a.At), Paint: theme.PaintMuted}
		out[2] = Cell{Text: attemptWord(a), Paint: attemptPaint(a)}
		out[3] = Cell{Text: fmt.Sprint(a.Latency.Milliseconds())}
		out[4] = Cell{Text: clean(a.Excerpt)}
	})
	return padLines(head+"\n"+body, p.height)
}

// deliveryRows are the Attention rows of the failing endpoints: enter
// opens the Deliveries page filtered to the endpoint.
func deliveryRows(ds []*store.Delivery) []AttentionRow {
	var rows []AttentionRow
	for _, e := range store.FailingEndpoints(ds) {
		what := "failing since " + e.Since.UTC().Format("2006-01-02 15:04") + " UTC, last: " + attemptWord(e.Last)
		if x := clean(e.Last.Excerpt); x != "" {
			what += ": " + x
		}
		if e.GivenUp > 0 {
			what += fmt.Sprintf(" · %d given up", e.GivenUp)
		}
		if e.Failing > 0 {
			what += fmt.Sprintf(" · %d retrying", e.Failing)
		}
		what += " · fix the shop's endpoint, then resend (enter: its deliveries, R f resends the failed)"
		rows = append(rows, AttentionRow{Kind: AttnDelivery, When: e.Since, Subject: showEndpoint(e.Endpoint), What: what,
			Open: OpenDeliveries{Endpoint: e.Endpoint}})
	}
	return rows
}

// showEndpoint is an endpoint on screen: its password masked, inert.
func showEndpoint(ep string) string { return clean(store.EndpointShown(ep)) }
