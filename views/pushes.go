package views

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
	"paydesk/ui/theme"
)

// PushRow is a push (stored or rejected) prepared for the log.
type PushRow struct {
	Push *store.PushRecord
	// Receipts are the push's receipts when it was received more than
	// once (nil: once, or not read).
	Receipts *store.PushReceipts

	id, envelope, kind, key, invoice, status, signature, result string
	resultPaint                                                 string
	hay                                                         string
	pos                                                         []byte // its position in the log (store.PushPageRow.Pos)
}

// pushRowID tells stored and rejected pushes apart (their IDs may repeat).
func pushRowID(p *store.PushRecord) string {
	if p.Rejected {
		return fmt.Sprintf("r%d", p.ID)
	}
	return fmt.Sprintf("a%d", p.ID)
}

// NewPushRow prepares a push for the log.
func NewPushRow(p *store.PushRecord) *PushRow {
	r := &PushRow{Push: p, id: pushRowID(p), envelope: clean(p.Envelope), kind: clean(p.Kind), key: clean(p.Key),
		invoice: clean(p.Invoice), status: clean(p.Status.Text()), signature: clean(p.Signature), pos: store.PushPos(nil, p)}
	if r.envelope == "" {
		r.envelope = "?"
	}
	word, detail := p.Outcome()
	r.result = word
	if detail != "" {
		r.result += " (" + clean(detail) + ")"
	}
	switch word {
	case store.OutcomeRejected:
		r.result, r.resultPaint = strings.ToUpper(word)+": "+clean(detail), theme.PaintFailed
		if p.Count > 1 {
			// One entry stands for every request of its source and kind.
			r.result = fmt.Sprintf("%s ×%d: %s", strings.ToUpper(word), p.Count, clean(detail))
		}
	case store.OutcomeApplied, store.OutcomeConfirmed:
		r.resultPaint = theme.PaintOK
	default:
		r.resultPaint = theme.PaintMuted
	}
	r.hay = strings.ToLower(strings.Join([]string{r.key, r.invoice, r.kind, r.envelope, r.status, r.signature, r.result, clean(p.Service)}, "\x00"))
	return r
}

// NewPushRows prepares many pushes.
func NewPushRows(ps []*store.PushRecord) []*PushRow {
	out := make([]*PushRow, len(ps))
	for i, p := range ps {
		out[i] = NewPushRow(p)
	}
	return out
}

// NewPushRowsReceipts prepares many pushes with their receipts
// (store.DB.PushReceiptsOf): a push received more than once says so in
// its result, "×N".
func NewPushRowsReceipts(ps []*store.PushRecord, receipts map[uint64]store.PushReceipts) []*PushRow {
	out := NewPushRows(ps)
	for _, r := range out {
		if rc, ok := receipts[r.Push.ID]; ok && !r.Push.Rejected && rc.Count > 1 {
			r.setReceipts(rc)
		}
	}
	return out
}

// setReceipts marks a push received more than once.
func (r *PushRow) setReceipts(rc store.PushReceipts) {
	r.Receipts = &rc
	r.result = fmt.Sprintf("×%d %s", rc.Count, r.result)
}

const (
	pcTime = iota
	pcEnvelope
	pcKind
	pcKey
	pcInvoice
	pcStatus
	pcSignature
	pcResult
)

var pushColumns = []Column{
	pcTime:      {Title: "RECEIVED", Width: 11},
	pcEnvelope:  {Title: "ENVELOPE", Width: 11, Drop: 6},
	pcKind:      {Title: "KIND", Width: 17},
	pcKey:       {Title: "KEY", Width: 12},
	pcInvoice:   {Title: "INVOICE", Width: 13, Drop: 5},
	pcStatus:    {Title: "STATUS", Width: 16},
	pcSignature: {Title: "SIGNATURE", Width: 9},
	pcResult:    {Title: "RESULT", Width: 10, Flex: true},
}

// Push log filters, cycled with t and v.
var (
	pushTypes    = []string{"", "DataRequest", "Transaction"}
	pushStatuses = append([]string{""}, store.PushStatuses...)
)

// Pushes is the push log: every push the listener received, newest first,
// live as they arrive. Its list reads the window on screen from the store
// (PushSourceMsg: store.DB.PushPage, paged in the engine like the other
// lists); pushes handed over whole (PushRowsMsg with Full, before a store
// is given) are paged the same way from memory by the store's reference
// pager. t and v narrow it by envelope and status, in the store.
type Pushes struct {
	ctx        *Context
	list       *pagedList[*PushRow]
	store      PushSource // the store, once given
	mem        *pushMem   // the rows handed over whole, until then
	width      int
	height     int
	err        error
	typeIdx    int
	statusIdx  int
	listenAddr string
}

// PushSource answers the push log's queries: the store (store.DB), or
// pushes held in memory.
type PushSource interface {
	PushPage(ctx context.Context, q store.PushQuery) (store.PushPage, error)
	PushCount(ctx context.Context, q store.PushQuery) (int, error)
}

// PushSourceMsg gives the push log its source: from then on it reads its
// window from it, and a PushRowsMsg only says the log changed.
type PushSourceMsg struct{ Source PushSource }

// pushReceipts is a PushSource that knows how often each push was
// received (store.DB): a page shows a push received more than once "×N".
type pushReceipts interface {
	PushReceiptsOf(ctx context.Context, ps []*store.PushRecord) (map[uint64]store.PushReceipts, error)
}

// pushPages is a PushSource as the list's source. The envelope and status
// chosen with t and v come as the list's state (pushState), so the list
// counts the whole log apart as it does for a reservation state.
type pushPages struct{ src PushSource }

// pushState is the list's state for an envelope and a status ("" both:
// none).
func pushState(typ, status string) store.State {
	if typ == "" && status == "" {
		return ""
	}
	return store.State(typ + "/" + status)
}

func (s pushPages) query(q Query[*PushRow]) (store.PushQuery, error) {
	if q.Keep != nil {
		return store.PushQuery{}, errKeepInStore{"push"}
	}
	typ, status, _ := strings.Cut(string(q.State), "/")
	q.State = ""
	return store.PushQuery{PageQuery: q.PageQuery, Envelope: typ, Status: status}, nil
}

func (s pushPages) Page(ctx context.Context, q Query[*PushRow]) (pageOf[*PushRow], error) {
	pq, err := s.query(q)
	if err != nil {
		return pageOf[*PushRow]{}, err
	}
	p, err := s.src.PushPage(ctx, pq)
	if err != nil {
		return pageOf[*PushRow]{}, err
	}
	rows := make([]*PushRow, len(p.Rows))
	if m, ok := s.src.(*pushMem); ok {
		for i, r := range p.Rows {
			rows[i] = m.rows[pushRowID(r.Push)]
		}
	} else {
		ps := make([]*store.PushRecord, len(p.Rows))
		for i, r := range p.Rows {
			ps[i] = r.Push
		}
		var rc map[uint64]store.PushReceipts
		if rr, ok := s.src.(pushReceipts); ok && len(ps) > 0 {
			if rc, err = rr.PushReceiptsOf(ctx, ps); err != nil {
				return pageOf[*PushRow]{}, err
			}
		}
		rows = NewPushRowsReceipts(ps, rc)
	}
	return pageOf[*PushRow]{rows: rows, total: p.Total, more: p.More, less: p.Less}, nil
}

func (s pushPages) Count(ctx context.Context, q Query[*PushRow]) (int, error) {
	pq, err := s.query(q)
	if err != nil {
		return 0, err
	}
	return s.src.PushCount(ctx, pq)
}

// pushMem is a PushSource over rows held in memory, paged by the store's
// reference pager. It is a snapshot: a change makes a new one (with).
type pushMem struct {
	all  []*store.PushRecord
	rows map[string]*PushRow // by pushRowID
}

func newPushMem(rows []*PushRow) *pushMem {
	m := &pushMem{all: make([]*store.PushRecord, len(rows)), rows: make(map[string]*PushRow, len(rows))}
	for i, r := range rows {
		m.all[i], m.rows[r.id] = r.Push, r
	}
	return m
}

// with is the snapshot after a change: known pushes replaced, new ones
// added (the log only grows).
func (m *pushMem) with(fresh []*PushRow) *pushMem {
	rows := make([]*PushRow, 0, len(m.all)+len(fresh))
	seen := make(map[string]bool, len(fresh))
	for _, r := range fresh {
		seen[r.id] = true
	}
	for _, p := range m.all {
		if id := pushRowID(p); !seen[id] {
			rows = append(rows, m.rows[id])
		}
	}
	return newPushMem(append(rows, fresh...))
}

func (m *pushMem) PushPage(_ context.Context, q store.PushQuery) (store.PushPage, error) {
	if err := q.Check(); err != nil {
		return store.PushPage{}, err
	}
	return store.PagePushes(m.all, q), nil
}

func (m *pushMem) PushCount(_ context.Context, q store.PushQuery) (int, error) {
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last, q.Limit = nil, nil, nil, false, 1
	n := store.PagePushes(m.all, q).Total
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n, nil
}

// NewPushes makes the push log; listenAddr is shown in the empty state.
func NewPushes(ctx *Context, listenAddr string) *Pushes {
	s := &Pushes{ctx: ctx, listenAddr: listenAddr}
	spec := pagedSpec[*PushRow]{
		key:      func(r **PushRow) string { return (*r).id },
		pos:      func(r **PushRow) []byte { return (*r).pos },
		sortOf:   func(int) store.SortBy { return 0 }, // the log has one order: received (S reverses it)
		sortable: []int{pcTime},
		filter:   store.PushLogFilter,
	}
	s.list = newPagedList(ctx, pushColumns, spec, pcTime)
	return s
}

// pages is the list's source.
func (s *Pushes) pages() Source[*PushRow] {
	var src PushSource = s.mem
	if s.store != nil {
		src = s.store
	}
	return pushPages{src: src}
}

// SetSize sets the screen size.
func (s *Pushes) SetSize(w, h int) {
	s.width, s.height = w, h
	s.list.table.SetSize(w, h-1)
}

// Capturing is true while the filter prompt is open.
func (s *Pushes) Capturing() bool { return s.list.prompt }

// Title names the tab.
func (s *Pushes) Title() string { return "Pushes" }

// Actions are the tab's keys.
func (s *Pushes) Actions() []Action {
	k := s.ctx.Keys
	acts := []Action{{Key: k.Open}, {Key: k.Filter}, {Key: k.FilterType}, {Key: k.FilterStatus}, {Key: k.Reverse},
		{Key: k.CopyKey}, {Key: k.CopyJSON}, {Key: k.SaveFixture}}
	if s.ctx.CanResend {
		acts = append(acts, Action{Key: k.Resend, Changes: true})
	}
	return append(acts, Action{Key: k.ExportCSV}, Action{Key: k.ExportJSON})
}

// takeRows applies a load. With the store given, pushes only say that
// the log changed: rows on screen show them at once and the window is read
// again. Before, rows handed over whole replace the rows in memory and
// others (live pushes) join them.
func (s *Pushes) takeRows(m PushRowsMsg) tea.Cmd {
	s.err = m.Err
	if m.Err != nil {
		return nil
	}
	if s.store == nil {
		if m.Full || s.mem == nil {
			s.mem = newPushMem(m.Rows)
			return s.list.setSource(s.pages(), len(m.Rows) < asyncRows)
		}
		if len(m.Rows) == 0 {
			return nil
		}
		s.mem = s.mem.with(m.Rows)
		s.list.src, s.list.sync = s.pages(), len(s.mem.all) < asyncRows
	}
	by := make(map[string]*PushRow, len(m.Rows))
	for _, r := range m.Rows {
		by[r.id] = r
	}
	return s.list.changed(func(r **PushRow) {
		if n, ok := by[(*r).id]; ok {
			*r = n
		}
	})
}

// Update handles rows, keys and the wheel.
func (s *Pushes) Update(msg tea.Msg) tea.Cmd {
	switch m := msg.(type) {
	case PushSourceMsg:
		s.err, s.store, s.mem = nil, m.Source, nil
		return s.list.setSource(s.pages(), false)
	case PushRowsMsg:
		return s.takeRows(m)
	case exportPushMsg:
		if m.tab != s {
			return nil
		}
		if m.err != nil {
			s.err = m.err
			return nil
		}
		return send(s.export(m.format, m.rows))
	}
	cmd, done := s.list.update(msg)
	if done {
		return cmd
	}
	key, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	k := s.ctx.Keys
	switch {
	case keyIs(key, k.FilterType):
		s.typeIdx = (s.typeIdx + 1) % len(pushTypes)
		return s.narrow()
	case keyIs(key, k.FilterStatus):
		s.statusIdx = (s.statusIdx + 1) % len(pushStatuses)
		return s.narrow()
	case keyIs(key, k.ExportCSV), keyIs(key, k.ExportJSON):
		return s.exportCmd(exportFormat(key, k))
	}
	sel, has := s.list.selected()
	if !has {
		return nil
	}
	if keyIs(key, k.Open) {
		return send(OpenPush{Push: (*sel).Push})
	}
	return pushActions(s.ctx, key, (*sel).Push)
}

// narrow asks the list again with the envelope and status chosen.
func (s *Pushes) narrow() tea.Cmd {
	s.list.state = pushState(pushTypes[s.typeIdx], pushStatuses[s.statusIdx])
	return s.list.restart()
}

// pushActions are the keys the log and the push page share.
func pushActions(ctx *Context, msg tea.KeyPressMsg, p *store.PushRecord) tea.Cmd {
	k := ctx.Keys
	switch {
	case keyIs(msg, k.CopyKey):
		if p.Key == "" {
			return Status(LevelWarn, "this push has no key to copy")
		}
		// OSC 52 has no answer: whether the terminal (or tmux without
		// set-clipboard) took it cannot be known, so say what was done.
		return tea.Batch(tea.SetClipboard(clean(p.Key)), Status(LevelOK, "sent key "+clean(p.Key)+" to the terminal's clipboard (OSC 52; a terminal without it ignores it)"))
	case keyIs(msg, k.CopyJSON):
		return tea.Batch(tea.SetClipboard(prettyBody(p.Body)), Status(LevelOK, fmt.Sprintf("sent the JSON of push %d to the terminal's clipboard (OSC 52; a terminal without it ignores it)", p.ID)))
	case keyIs(msg, k.SaveFixture):
		return send(SaveFixtureIntent{Push: p})
	case keyIs(msg, k.Resend):
		if !ctx.CanResend {
			return Status(LevelWarn, "resend needs the embedded sandbox; ask the gateway that sent it")
		}
		if p.Key == "" {
			return Status(LevelWarn, "this push has no key: nothing to resend")
		}
		return send(ResendIntent{Key: p.Key})
	}
	return nil
}

// View draws the log.
func (s *Pushes) View() string {
	t := s.ctx.Theme
	var filters []string
	if f := pushTypes[s.typeIdx]; f != "" {
		filters = append(filters, "type "+f)
	}
	if f := pushStatuses[s.statusIdx]; f != "" {
		filters = append(filters, "status "+f)
	}
	sortName := ""
	if s.list.sortCol != pcTime || !s.list.sortDesc {
		sortName = pushColumns[s.list.sortCol].Title
	}
	info := s.list.infoLine(s.width, "pushes", sortName, strings.Join(filters, ", "))
	page := func(body string) string { return info + "\n" + padLines(body, s.height-1) }
	err := s.err
	if err == nil {
		err = s.list.err
	}
	if err != nil {
		return page(t.Failed.Render(loadErrorText(err)))
	}
	if s.list.len() == 0 {
		var msg string
		switch {
		case !s.list.loaded:
			msg = "\n  " + t.Muted.Render("Loading the cache…")
		case s.list.all > 0:
			msg = "\n  " + t.Muted.Render("No push matches the filters — press esc to clear the text, t and v to cycle type and status.")
		default:
			where := "the push listener"
			if s.listenAddr != "" {
				where = "the push listener on " + s.listenAddr
			}
			msg = "\n  " + t.Accent.Render("No pushes yet.") +
				"\n  " + t.Muted.Render("They show up here live as "+where+" receives them.") +
				"\n  " + t.Muted.Render(pushesEmptyHint(s.ctx))
		}
		return page(msg)
	}
	body := s.list.table.View(func(i int, out []Cell) {
		rp, ok := s.list.at(i)
		if !ok {
			// Not read yet (the window follows the screen).
			out[pcKind] = Cell{Text: "…", Paint: theme.PaintMuted}
			return
		}
		r := *rp
		p := r.Push
		out[pcTime] = Cell{Text: s.ctx.shortStamp(p.ReceivedAt), Paint: theme.PaintMuted}
		out[pcEnvelope] = Cell{Text: r.envelope}
		out[pcKind] = Cell{Text: r.kind}
		out[pcKey] = Cell{Text: shortKey(r.key)}
		out[pcInvoice] = Cell{Text: r.invoice}
		out[pcStatus] = Cell{Text: r.status, Paint: statusPaint(p.Status.Code)}
		sigPaint := theme.PaintOK
		if p.Signature != store.SignatureValid {
			sigPaint = theme.PaintFailed
		}
		out[pcSignature] = Cell{Text: r.signature, Paint: sigPaint}
		out[pcResult] = Cell{Text: r.result, Paint: r.resultPaint}
	})
	return page(body)
}

// exportPushMsg carries every push that passes the filters, for an export.
type exportPushMsg struct {
	tab    *Pushes
	format string
	rows   []*PushRow
	err    error
}

// exportCmd reads every push that passes the filters (in a command for a
// big log), then asks for the export.
func (s *Pushes) exportCmd(format string) tea.Cmd {
	if s.list.src == nil {
		return send(s.export(format, nil))
	}
	q, err := s.list.wholeQuestion()
	if err != nil {
		return Status(LevelWarn, "nothing exported: "+FilterErrorText(err))
	}
	src, pos := s.list.src, s.list.spec.pos
	run := func() tea.Msg {
		rows, err := everything(src, pos, q)
		return exportPushMsg{tab: s, format: format, rows: rows, err: err}
	}
	if s.list.sync {
		return s.Update(run())
	}
	return run
}

func (s *Pushes) export(format string, rows []*PushRow) ExportIntent {
	return ExportIntent{Name: "pushes", Format: format, Table: ExportTable{
		Columns: []string{"id", "received", "rejected", "reason", "envelope", "kind", "key", "invoice", "service", "status", "currency", "amount", "signature", "result", "applied", "ignored"},
		Len:     len(rows),
		Row: func(i int) []string {
			p := rows[i].Push
			amount := ""
			if p.AmountShown() {
				amount = money(p.Amount)
			}
			word, _ := p.Outcome()
			return []string{fmt.Sprint(p.ID), p.ReceivedAt.UTC().Format(timeFormatExport), fmt.Sprint(p.Rejected), p.Reason, p.Envelope, p.Kind, p.Key,
				p.Invoice, p.Service, itoa(p.Status.Code), p.Currency, amount, p.Signature, word, fmt.Sprint(p.Applied), p.Ignored}
		}}}
}

// pushesEmptyHint is what brings the first push, as emptyHint says it.
func pushesEmptyHint(ctx *Context) string {
	if ctx.Live {
		return "The gateway pushes each reservation and transaction as it happens."
	}
	h := emptyHint(ctx)
	return "Press 1 then " + h[len("press "):] + "."
}
