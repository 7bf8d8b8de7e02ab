package logs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/textsafe"
	"paydesk/store"
	"paydesk/ui/theme"
	"paydesk/views"
)

// pane is what both logs share: a table over rows kept elsewhere and a
// detail pane for the selected row, as lazygit's command log shows a
// command and its output.
type pane struct {
	ctx    *views.Context
	table  *views.Table
	width  int
	height int
	detail func(i int) string
	cells  func(i int, out []views.Cell)
	scroll int // detail scroll offset
}

func (p *pane) setSize(w, h int) {
	p.width, p.height = w, h
	p.table.SetSize(w, p.tableHeight())
}

// tableHeight gives the list two fifths of the height, the detail the rest.
func (p *pane) tableHeight() int { return max(3, p.height*2/5) }

func (p *pane) update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	km := p.ctx.Keys
	switch {
	case key.Matches(k, km.Up):
		p.table.Move(-1)
		p.scroll = 0
	case key.Matches(k, km.Down):
		p.table.Move(1)
		p.scroll = 0
	case key.Matches(k, km.PageUp):
		p.table.Move(-p.tableHeight())
		p.scroll = 0
	case key.Matches(k, km.PageDown):
		p.table.Move(p.tableHeight())
		p.scroll = 0
	case key.Matches(k, km.Home):
		p.table.SetCursor(0)
		p.scroll = 0
	case key.Matches(k, km.End):
		p.table.SetCursor(p.table.Len() - 1)
		p.scroll = 0
	case k.String() == "J" || k.String() == "ctrl+d":
		p.scroll += 5
	case k.String() == "K" || k.String() == "ctrl+u":
		p.scroll = max(0, p.scroll-5)
	}
	return nil
}

func (p *pane) view(empty string) string {
	if p.table.Len() == 0 {
		return p.ctx.Theme.Paint(theme.PaintMuted).Apply(empty)
	}
	top := p.table.View(p.cells)
	rule := p.ctx.Theme.Paint(theme.PaintMuted).Apply(strings.Repeat("─", max(p.width, 1)))
	lines := strings.Split(p.detail(p.table.Cursor()), "\n")
	room := max(p.height-lipgloss(top)-1, 1)
	if p.scroll > len(lines)-room {
		p.scroll = max(0, len(lines)-room)
	}
	lines = lines[p.scroll:]
	if len(lines) > room {
		lines = lines[:room]
	}
	for i, l := range lines {
		lines[i] = truncate(l, p.width)
	}
	return top + "\n" + rule + "\n" + strings.Join(lines, "\n")
}

func lipgloss(s string) int { return strings.Count(s, "\n") + 1 }

func truncate(s string, w int) string {
	r := []rune(s)
	if w <= 0 || len(r) <= w {
		return s
	}
	return string(r[:w-1]) + "…"
}

// clean makes text from outside inert; keepLines keeps line feeds
// (pretty-printed bodies).
func clean(s string, keepLines bool) string {
	if keepLines {
		return textsafe.CleanLines(s)
	}
	return textsafe.Clean(s)
}

// pinValue matches the value of a PIN-like parameter in a request body, so
// the log never shows a card PIN even if one was stored unmasked.
var pinValue = regexp.MustCompile(`(?i)("Name"\s*:\s*"[^"]*(?:pin|validationcode)"\s*,\s*"Value"\s*:\s*)"[^"]*"`)

// pretty indents a JSON body for reading, masks PINs and strips control
// characters; a body that is not JSON is shown as text.
func pretty(body []byte) string {
	if len(body) == 0 {
		return "(empty)"
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return clean(string(body), true)
	}
	return clean(pinValue.ReplaceAllString(buf.String(), `$1"••••"`), true)
}

// Audit is the audit log view.
type Audit struct {
	pane
	rows []store.AuditEntry
}

// NewAudit makes the audit view; the console feeds it with SetEntries.
func NewAudit(ctx *views.Context) *Audit {
	a := &Audit{}
	a.pane = pane{ctx: ctx, table: views.NewTable(ctx.Theme, []views.Column{
		{Title: "Time", Width: 19}, {Title: "Operator", Width: 10, Drop: 2}, {Title: "Action", Width: 16},
		{Title: "Target", Width: 20, Flex: true}, {Title: "Amount", Width: 12, Right: true},
		{Title: "Result", Width: 24, Flex: true}, {Title: "Reason", Width: 14, Drop: 1},
	})}
	a.cells = a.rowCells
	a.detail = a.detailText
	return a
}

// SetEntries replaces the rows (newest first, as store.Audit returns them).
func (a *Audit) SetEntries(es []store.AuditEntry) {
	a.rows = es
	a.table.SetLen(len(es))
}

// Title implements views.Screen.
func (a *Audit) Title() string { return "Audit" }

// SetSize implements views.Screen.
func (a *Audit) SetSize(w, h int) { a.setSize(w, h) }

// Update implements views.Screen.
func (a *Audit) Update(msg tea.Msg) tea.Cmd { return a.update(msg) }

// View implements views.Screen.
func (a *Audit) View() string {
	return a.view("No operator actions yet. Every capture, cancel, update, refund and gift card operation lands here.")
}

// Actions implements views.Screen.
func (a *Audit) Actions() []views.Action { return nil }

// Capturing implements views.Screen.
func (a *Audit) Capturing() bool { return false }

func resultPaint(result string) string {
	switch {
	case strings.HasPrefix(result, "outcome unknown"):
		return theme.PaintWarning
	case strings.HasPrefix(result, "failed"):
		return theme.PaintFailed
	case strings.HasPrefix(result, "190"), result == "done", strings.HasPrefix(result, "resolved"):
		return theme.PaintOK
	case strings.HasPrefix(result, "79"):
		return theme.PaintPending
	}
	return theme.PaintText
}

func (a *Audit) rowCells(i int, out []views.Cell) {
	e := a.rows[i]
	amt := ""
	if !e.Amount.IsZero() {
		amt = e.Amount.StringFixed(2) + " " + e.Currency
	}
	out[0] = views.Cell{Text: a.stamp(e), Paint: theme.PaintMuted}
	out[1] = views.Cell{Text: clean(e.Operator, false)}
	out[2] = views.Cell{Text: e.Action, Paint: theme.PaintAccent}
	out[3] = views.Cell{Text: clean(e.Target, false)}
	out[4] = views.Cell{Text: amt}
	out[5] = views.Cell{Text: clean(e.Result, false), Paint: resultPaint(e.Result)}
	out[6] = views.Cell{Text: clean(e.Reason, false)}
}

func (a *Audit) stamp(e store.AuditEntry) string {
	loc := a.ctx.Location
	if loc == nil {
		return e.Time.Local().Format("2006-01-02 15:04:05")
	}
	return e.Time.In(loc).Format("2006-01-02 15:04:05")
}

func (a *Audit) detailText(i int) string {
	e := a.rows[i]
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s by %s\n", a.stamp(e), e.Action, clean(e.Operator, false))
	fmt.Fprintf(&b, "target    %s\n", clean(e.Target, false))
	if !e.Amount.IsZero() {
		fmt.Fprintf(&b, "amount    %s %s\n", e.Amount.StringFixed(2), e.Currency)
	}
	fmt.Fprintf(&b, "result    %s\n", clean(e.Result, false))
	if e.Reason != "" {
		fmt.Fprintf(&b, "reason    %s\n", clean(e.Reason, false))
	}
	if e.OpID != 0 {
		fmt.Fprintf(&b, "operation %d\n", e.OpID)
	}
	return b.String()
}

// GatewayLog is the gateway log: every request paydesk sent and the
// answer, with the bodies pretty-printed. The secret never reaches it (the
// client signs, it does not log headers); card PINs are masked.
type GatewayLog struct {
	pane
	rows []store.Exchange
}

// NewGatewayLog makes the gateway log; the console feeds it with
// SetExchanges.
func NewGatewayLog(ctx *views.Context) *GatewayLog {
	g := &GatewayLog{}
	g.pane = pane{ctx: ctx, table: views.NewTable(ctx.Theme, []views.Column{
		{Title: "Time", Width: 19}, {Title: "Action", Width: 18}, {Title: "Service", Width: 14, Drop: 2},
		{Title: "HTTP", Width: 4, Right: true}, {Title: "Status", Width: 22, Flex: true}, {Title: "ms", Width: 6, Right: true, Drop: 1},
	})}
	g.cells = g.rowCells
	g.detail = g.detailText
	return g
}

// SetExchanges replaces the rows (newest first).
func (g *GatewayLog) SetExchanges(xs []store.Exchange) {
	g.rows = xs
	g.table.SetLen(len(xs))
}

// Title implements views.Screen.
func (g *GatewayLog) Title() string { return "Gateway log" }

// SetSize implements views.Screen.
func (g *GatewayLog) SetSize(w, h int) { g.setSize(w, h) }

// Update implements views.Screen.
func (g *GatewayLog) Update(msg tea.Msg) tea.Cmd { return g.update(msg) }

// View implements views.Screen.
func (g *GatewayLog) View() string { return g.view("No requests sent yet.") }

// Actions implements views.Screen.
func (g *GatewayLog) Actions() []views.Action { return nil }

// Capturing implements views.Screen.
func (g *GatewayLog) Capturing() bool { return false }

// answerStatus reads Status.Code.Code out of a response body for the list.
func answerStatus(x store.Exchange) (string, string) {
	if x.Error != "" && len(x.ResponseBody) == 0 {
		if strings.Contains(x.Error, "outcome unknown") {
			return "OUTCOME UNKNOWN", theme.PaintWarning
		}
		return "not answered", theme.PaintFailed
	}
	var r struct {
		Status struct {
			Code    struct{ Code int }
			SubCode *struct{ Code string }
		}
	}
	if json.Unmarshal(x.ResponseBody, &r) != nil || r.Status.Code.Code == 0 {
		return "", theme.PaintMuted
	}
	st := store.Status{Code: r.Status.Code.Code}
	if r.Status.SubCode != nil {
		st.SubCode = r.Status.SubCode.Code
	}
	switch {
	case st.IsSuccess():
		return st.Text(), theme.PaintOK
	case !st.IsFinal():
		return st.Text(), theme.PaintPending
	}
	return st.Text(), theme.PaintFailed
}

func (g *GatewayLog) stamp(x store.Exchange) string {
	loc := g.ctx.Location
	if loc == nil {
		loc = x.Time.Local().Location()
	}
	return x.Time.In(loc).Format("2006-01-02 15:04:05")
}

func (g *GatewayLog) rowCells(i int, out []views.Cell) {
	x := g.rows[i]
	st, paint := answerStatus(x)
	httpText := ""
	if x.HTTPStatus != 0 {
		httpText = fmt.Sprint(x.HTTPStatus)
	}
	out[0] = views.Cell{Text: g.stamp(x), Paint: theme.PaintMuted}
	out[1] = views.Cell{Text: x.Action, Paint: theme.PaintAccent}
	out[2] = views.Cell{Text: clean(x.Service, false)}
	out[3] = views.Cell{Text: httpText}
	out[4] = views.Cell{Text: st, Paint: paint}
	out[5] = views.Cell{Text: fmt.Sprint(x.Duration.Milliseconds())}
}

func (g *GatewayLog) detailText(i int) string {
	x := g.rows[i]
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s  (%s %s)\n", x.Method, clean(x.URL, false), x.Action, clean(x.Service, false))
	b.WriteString("── request ──\n")
	b.WriteString(pretty(x.RequestBody) + "\n")
	fmt.Fprintf(&b, "── answer: HTTP %d in %d ms ──\n", x.HTTPStatus, x.Duration.Milliseconds())
	if x.Error != "" {
		b.WriteString("error: " + clean(x.Error, false) + "\n")
	}
	if len(x.ResponseBody) > 0 {
		b.WriteString(pretty(x.ResponseBody) + "\n")
	}
	return b.String()
}
