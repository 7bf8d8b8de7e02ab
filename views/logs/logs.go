package logs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/internal/query"
	"paydesk/internal/textsafe"
	"paydesk/store"
	"paydesk/ui/theme"
	"paydesk/views"
)

// pane is what both logs share: the list component (views.MemList) over
// rows kept in memory and a detail pane for the selected row, as lazygit's
// command log shows a command and its output; the list's filter (/) takes
// the filter language (internal/query, the command line's --filter), and
// the detail goes alone on the page (enter) for reading a long reason or
// body whole.
type pane[T any] struct {
	ctx    *views.Context
	list   *views.MemList[row[T]]
	table  *views.Table
	width  int
	height int
	detail func(*T) string
	cells  func(*T, []views.Cell)
	scroll int  // detail scroll offset
	zoom   bool // the detail fills the page
}

// row is a log's row and its place in the log: the place names it, so
// the cursor keeps its place when the log is read again, as it always did.
type row[T any] struct {
	n int
	v *T
}

func newPane[T any](ctx *views.Context, cols []views.Column, filter query.List, where func(*T, *query.Query) bool) pane[T] {
	l := views.NewMemList(ctx, cols, func(r *row[T]) string { return strconv.Itoa(r.n) }, filter,
		func(r *row[T], w *query.Query) bool { return where(r.v, w) })
	return pane[T]{ctx: ctx, list: l, table: l.Table()}
}

// setRows replaces the rows (newest first) and filters them again.
func (p *pane[T]) setRows(xs []T) {
	rows := make([]row[T], len(xs))
	for i := range xs {
		rows[i] = row[T]{i, &xs[i]}
	}
	p.list.SetRows(rows)
}

// visible is every row that passes the filter, newest first (the
// export).
func (p *pane[T]) visible() ([]T, error) {
	rows, err := p.list.Visible()
	if err != nil {
		return nil, err
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = *r.v
	}
	return out, nil
}

func (p *pane[T]) setSize(w, h int) {
	p.width, p.height = w, h
	p.table.SetSize(w, p.tableHeight())
}

// tableHeight gives the list two fifths of the height (the line above it
// excluded), the detail the rest.
func (p *pane[T]) tableHeight() int { return max(3, (p.height-1)*2/5) }

// rowCells draws visible row i.
func (p *pane[T]) rowCells(i int, out []views.Cell) {
	if r, ok := p.list.At(i); ok {
		p.cells(r.v, out)
	}
}

func (p *pane[T]) update(msg tea.Msg) tea.Cmd {
	if w, ok := msg.(tea.MouseWheelMsg); ok && p.zoom {
		if w.Button == tea.MouseWheelDown {
			p.scroll += 3
		} else if w.Button == tea.MouseWheelUp {
			p.scroll = max(0, p.scroll-3)
		}
		return nil
	}
	k, isKey := msg.(tea.KeyPressMsg)
	if isKey && !p.list.Prompt() {
		km := p.ctx.Keys
		switch {
		case key.Matches(k, km.Open) && p.list.Len() > 0:
			p.zoom, p.scroll = !p.zoom, 0
			return nil
		case key.Matches(k, km.Back) && p.zoom:
			p.zoom = false
			return nil
		case key.Matches(k, km.DetailDown):
			p.scroll += 5
			return nil
		case key.Matches(k, km.DetailUp):
			p.scroll = max(0, p.scroll-5)
			return nil
		case key.Matches(k, km.Filter):
			p.zoom = false
		}
	}
	_, wheel := msg.(tea.MouseWheelMsg)
	prompt := p.list.Prompt()
	cmd, done := p.list.Update(msg)
	if done && (wheel || isKey && !prompt) {
		p.scroll = 0 // another row: its detail from the top
	}
	return cmd
}

// actions are the keys both logs take.
func (p *pane[T]) actions() []views.Action {
	k := p.ctx.Keys
	return []views.Action{{Key: k.Filter}, {Key: key.NewBinding(key.WithKeys(k.Open.Keys()...), key.WithHelp(k.Open.Help().Key, "detail on the whole page"))},
		{Key: k.DetailDown}, {Key: k.DetailUp}}
}

// infoLine is the line above the table: the filter and the count.
func (p *pane[T]) infoLine(noun string) string {
	t := p.ctx.Theme
	var left string
	switch {
	case p.list.Prompt():
		left = t.Accent.Render("/") + " " + p.list.Query() + t.Accent.Render("▏")
	case p.list.Query() != "":
		left = t.Muted.Render("filter: ") + p.list.Query() + t.Muted.Render("  (esc clears)")
	default:
		left = t.Muted.Render("/ to filter · enter shows the detail on the whole page · J/K scroll it")
	}
	shown, total := p.list.Len(), p.list.All()
	if p.list.Err() != nil {
		shown = 0 // a filter the language refused shows no rows
	}
	right := fmt.Sprintf("%d %s", total, noun)
	if shown != total {
		right = fmt.Sprintf("%d of %d %s", shown, total, noun)
	}
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > p.width {
		left = ansi.Truncate(left, max(p.width-rw-1, 0), "…")
		lw = ansi.StringWidth(left)
	}
	return left + strings.Repeat(" ", max(p.width-lw-rw, 1)) + t.Muted.Render(right)
}

func (p *pane[T]) view(noun, empty string) string {
	info := p.infoLine(noun)
	if err := p.list.Err(); err != nil {
		return info + "\n" + p.ctx.Theme.Failed.Render(views.FilterErrorText(err))
	}
	sel, ok := p.list.Selected()
	if !ok {
		if p.list.Query() != "" {
			empty = "Nothing matches the filter — press esc to clear it."
		}
		return info + "\n" + p.ctx.Theme.Paint(theme.PaintMuted).Apply(empty)
	}
	// The detail is wrapped, never cut: a long reason or body is read
	// whole by scrolling.
	lines := wrapLines(p.detail(sel.v), p.width)
	if p.zoom {
		room := max(p.height-2, 1)
		p.scroll = min(p.scroll, max(0, len(lines)-room))
		lines = lines[p.scroll:]
		if len(lines) > room {
			lines = lines[:room]
		}
		hint := p.ctx.Theme.Paint(theme.PaintMuted).Apply("enter or esc back to the list · J/K or the wheel scroll")
		return info + "\n" + hint + "\n" + strings.Join(lines, "\n")
	}
	top := p.table.View(p.rowCells)
	rule := p.ctx.Theme.Paint(theme.PaintMuted).Apply(strings.Repeat("─", max(p.width, 1)))
	room := max(p.height-1-lipgloss(top)-1, 1)
	if p.scroll > len(lines)-room {
		p.scroll = max(0, len(lines)-room)
	}
	lines = lines[p.scroll:]
	if len(lines) > room {
		lines = lines[:room]
	}
	return info + "\n" + top + "\n" + rule + "\n" + strings.Join(lines, "\n")
}

// wrapLines splits text into lines no wider than w.
func wrapLines(s string, w int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if w <= 0 || ansi.StringWidth(l) <= w {
			out = append(out, l)
			continue
		}
		out = append(out, strings.Split(ansi.Hardwrap(l, w, true), "\n")...)
	}
	return out
}

func lipgloss(s string) int { return strings.Count(s, "\n") + 1 }

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
	pane[store.AuditEntry]
}

// NewAudit makes the audit view; the console feeds it with SetEntries.
func NewAudit(ctx *views.Context) *Audit {
	a := &Audit{}
	// The operator is never dropped (who did it is the point of an audit
	// log); the reason goes first on a narrow screen, the detail shows it.
	// "/" takes the filter language, as `paydesk audit --filter`.
	a.pane = newPane(ctx, []views.Column{
		{Title: "Time", Width: 19}, {Title: "Operator", Width: 10}, {Title: "Action", Width: 14},
		{Title: "Target", Width: 16, Flex: true}, {Title: "Amount", Width: 12, Right: true, Drop: 1},
		{Title: "Result", Width: 12, Flex: true}, {Title: "Reason", Width: 14, Flex: true, Drop: 2},
	}, store.AuditFilter, store.KeepAudit)
	a.cells = a.rowCells
	a.detail = a.detailText
	return a
}

// SetEntries replaces the rows (newest first, as store.Audit returns them).
func (a *Audit) SetEntries(es []store.AuditEntry) { a.setRows(es) }

// Visible is the entries that pass the filter, newest first (what e and E
// export).
func (a *Audit) Visible() ([]store.AuditEntry, error) { return a.visible() }

// Title implements views.Screen.
func (a *Audit) Title() string { return "Audit" }

// SetSize implements views.Screen.
func (a *Audit) SetSize(w, h int) { a.setSize(w, h) }

// Update implements views.Screen.
func (a *Audit) Update(msg tea.Msg) tea.Cmd { return a.update(msg) }

// View implements views.Screen.
func (a *Audit) View() string {
	return a.view("entries", "No operator actions yet. Every capture, cancel, update, refund and gift card operation lands here.")
}

// Actions implements views.Screen.
func (a *Audit) Actions() []views.Action { return a.actions() }

// Capturing implements views.Screen: true while the filter prompt is open.
func (a *Audit) Capturing() bool { return a.list.Prompt() }

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

func (a *Audit) rowCells(e *store.AuditEntry, out []views.Cell) {
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

func (a *Audit) stamp(e *store.AuditEntry) string {
	loc := a.ctx.Location
	if loc == nil {
		return e.Time.Local().Format("2006-01-02 15:04:05")
	}
	return e.Time.In(loc).Format("2006-01-02 15:04:05")
}

func (a *Audit) detailText(e *store.AuditEntry) string {
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
	pane[store.Exchange]
}

// NewGatewayLog makes the gateway log; the console feeds it with
// SetExchanges.
func NewGatewayLog(ctx *views.Context) *GatewayLog {
	g := &GatewayLog{}
	g.pane = newPane(ctx, []views.Column{
		{Title: "Time", Width: 19}, {Title: "Action", Width: 18}, {Title: "Service", Width: 14, Drop: 2},
		{Title: "HTTP", Width: 4, Right: true}, {Title: "Status", Width: 22, Flex: true}, {Title: "ms", Width: 6, Right: true, Drop: 1},
	}, store.ExchangeFilter, store.KeepExchange)
	g.cells = g.rowCells
	g.detail = g.detailText
	return g
}

// SetExchanges replaces the rows (newest first).
func (g *GatewayLog) SetExchanges(xs []store.Exchange) { g.setRows(xs) }

// Visible is the exchanges that pass the filter, newest first (what e
// and E export).
func (g *GatewayLog) Visible() ([]store.Exchange, error) { return g.visible() }

// Title implements views.Screen.
func (g *GatewayLog) Title() string { return "Gateway log" }

// SetSize implements views.Screen.
func (g *GatewayLog) SetSize(w, h int) { g.setSize(w, h) }

// Update implements views.Screen.
func (g *GatewayLog) Update(msg tea.Msg) tea.Cmd { return g.update(msg) }

// View implements views.Screen.
func (g *GatewayLog) View() string { return g.view("requests", "No requests sent yet.") }

// Actions implements views.Screen.
func (g *GatewayLog) Actions() []views.Action { return g.actions() }

// Capturing implements views.Screen: true while the filter prompt is open.
func (g *GatewayLog) Capturing() bool { return g.list.Prompt() }

// answerStatus reads Status.Code.Code out of a response body for the list.
func answerStatus(x *store.Exchange) (string, string) {
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

func (g *GatewayLog) stamp(x *store.Exchange) string {
	loc := g.ctx.Location
	if loc == nil {
		loc = x.Time.Local().Location()
	}
	return x.Time.In(loc).Format("2006-01-02 15:04:05")
}

func (g *GatewayLog) rowCells(x *store.Exchange, out []views.Cell) {
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

func (g *GatewayLog) detailText(x *store.Exchange) string {
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
