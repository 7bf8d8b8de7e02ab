package views

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

// PushDetail is the page of one push: what was decided about it, the
// request headers and the pretty-printed body.
type PushDetail struct {
	ctx      *Context
	push     *store.PushRecord
	receipts *store.PushReceipts // nil until read (PushReceiptsMsg)
	pane     pane
	width    int
	height   int
}

// NewPushDetail makes the page for the loaded push.
func NewPushDetail(ctx *Context, p *store.PushRecord) *PushDetail {
	return &PushDetail{ctx: ctx, push: p, pane: pane{ctx: ctx}}
}

// Title names the page.
func (d *PushDetail) Title() string {
	if d.push.Rejected {
		return fmt.Sprintf("Rejected push %d", d.push.ID)
	}
	return fmt.Sprintf("Push %d", d.push.ID)
}

// SetSize sets the page size.
func (d *PushDetail) SetSize(w, h int) {
	d.width, d.height = w, h
	d.pane.setHeight(h - 1)
	d.pane.width = w
	d.build()
}

// Capturing is always false.
func (d *PushDetail) Capturing() bool { return false }

// Actions are the page's keys.
func (d *PushDetail) Actions() []Action {
	k := d.ctx.Keys
	acts := []Action{{Key: k.Back}, {Key: k.CopyKey}, {Key: k.CopyJSON}, {Key: k.SaveFixture}}
	if d.push.ReservationKey != "" {
		acts = append(acts, Action{Key: k.Open})
	}
	if d.ctx.CanResend {
		acts = append(acts, Action{Key: k.Resend, Changes: true})
	}
	return acts
}

// PushReceiptsMsg carries the receipts of a stored push to its page.
type PushReceiptsMsg struct {
	ID       uint64
	Receipts store.PushReceipts
}

// Update handles keys.
func (d *PushDetail) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case PushReceiptsMsg:
		if msg.ID == d.push.ID && !d.push.Rejected {
			d.receipts = &msg.Receipts
			d.build()
		}
	case tea.KeyPressMsg:
		if d.pane.update(msg) {
			return nil
		}
		p := d.push
		if keyIs(msg, d.ctx.Keys.Open) && p.ReservationKey != "" {
			return send(OpenReservation{Key: p.ReservationKey})
		}
		return pushActions(d.ctx, msg, p)
	default:
		d.pane.update(msg)
	}
	return nil
}

// View draws the page.
func (d *PushDetail) View() string {
	t := d.ctx.Theme
	return spread(t.Accent.Render(d.Title()), t.Muted.Render(d.pane.scrollHint()+"  esc back"), d.width) + "\n" + d.pane.view()
}

func (d *PushDetail) build() {
	if d.width == 0 {
		return
	}
	t := d.ctx.Theme
	p := d.push
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	label := func(s string) string { return t.Muted.Render(fmt.Sprintf("%-11s", s)) }
	row := NewPushRow(p)
	verdict := t.OK.Render(row.signature)
	if p.Signature != store.SignatureValid {
		verdict = t.Failed.Render(row.signature)
	}
	add("")
	if p.Rejected {
		add(label("Result") + t.Failed.Render("REJECTED — "+clean(p.Reason)))
		add(label("") + t.Muted.Render("answered with an error; the gateway retries it; nothing in the cache changed"))
		if p.Count > 1 {
			add(label("Repeats") + fmt.Sprintf("%d requests from this source for this reason, the last %s", p.Count, d.ctx.stamp(p.LastSeen)) +
				t.Muted.Render("  (the first one's evidence is kept)"))
		}
		switch {
		case p.BodySize > len(p.Body) && p.Hash == [32]byte{}:
			add(label("Evidence") + fmt.Sprintf("a body of %d bytes, refused unread", p.BodySize))
		case p.BodySize > len(p.Body):
			add(label("Evidence") + fmt.Sprintf("first %d of %d bytes kept, SHA-256 %x", len(p.Body), p.BodySize, p.Hash))
		}
	} else {
		add(label("Result") + t.Paint(row.resultPaint).Apply(row.result))
	}
	add(label("Signature")+verdict+t.Muted.Render("  website key ")+orDash(clean(p.WebsiteKey)),
		label("Received")+d.ctx.stamp(p.ReceivedAt)+t.Muted.Render("  from "+orDash(clean(p.RemoteAddr))),
		label("Request")+clean(p.Method)+" "+clean(p.URL),
		label("Envelope")+orDash(row.envelope)+t.Muted.Render("  kind ")+orDash(row.kind)+t.Muted.Render("  service ")+orDash(clean(p.Service)),
		label("Key")+orDash(row.key),
		label("Invoice")+orDash(row.invoice),
		label("Status")+t.Paint(statusPaint(p.Status.Code)).Apply(orDash(row.status))+t.Muted.Render("  "+d.ctx.stamp(p.Status.Time)),
	)
	if p.AmountShown() {
		add(label("Amount") + moneyCur(p.Amount, clean(p.Currency)))
	}
	if rc := d.receipts; rc != nil && rc.Count > 1 {
		add("", t.Accent.Render(fmt.Sprintf("Received %d times", rc.Count))+
			t.Muted.Render("  (stored once; each repeat changed nothing)"))
		for i, r := range rc.Receipts {
			what := "repeat"
			if i == 0 {
				what = "first"
			}
			if i == 1 && rc.Omitted > 0 {
				add("  " + t.Muted.Render(fmt.Sprintf("… %d earlier repeats counted only", rc.Omitted)))
			}
			sig := t.OK.Render(clean(r.Signature))
			if r.Signature != store.SignatureValid {
				sig = t.Failed.Render(clean(r.Signature))
			}
			add("  " + fmt.Sprintf("%-7s", what) + d.ctx.stamp(r.At) + t.Muted.Render("  from ") + orDash(clean(r.RemoteAddr)) +
				t.Muted.Render("  signature ") + sig)
		}
	}
	add("", t.Accent.Render("Headers"))
	names := make([]string, 0, len(p.Header))
	for n := range p.Header {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range p.Header[n] {
			add("  " + t.Muted.Render(clean(n)+":") + " " + clean(v))
		}
	}
	if len(names) == 0 {
		add(t.Muted.Render("  (none kept)"))
	}
	add("", t.Accent.Render(fmt.Sprintf("Body (%d bytes)", len(p.Body))))
	for _, l := range strings.Split(prettyBody(p.Body), "\n") {
		add("  " + l)
	}
	d.pane.setLines(out)
}
