package views

import (
	"cmp"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/query"
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
	logText                                                     store.PushLogText // what the filter language searches
	received                                                    int64
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
		invoice: clean(p.Invoice), status: clean(p.Status.Text()), signature: clean(p.Signature), received: p.ReceivedAt.UnixNano()}
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
	r.logText = store.FoldPushLog(p)
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

func comparePushes(a, b *PushRow, col int) int {
	var c int
	switch col {
	case pcKind:
		c = strings.Compare(a.kind, b.kind)
	case pcStatus:
		c = cmp.Compare(a.Push.Status.Code, b.Push.Status.Code)
	case pcSignature:
		c = strings.Compare(a.signature, b.signature)
	}
	if c == 0 {
		c = cmp.Compare(a.received, b.received)
	}
	if c == 0 {
		c = cmp.Compare(a.Push.ID, b.Push.ID)
	}
	return c
}

// Push log filters, cycled with t and v.
var (
	pushTypes    = []string{"", "DataRequest", "Transaction"}
	pushStatuses = []string{"", "success", "pending", "failed", "rejected", "ignored"}
)

func pushStatusMatches(p *store.PushRecord, f string) bool {
	switch f {
	case "success":
		return !p.Rejected && p.Status.Code == 190
	case "pending":
		return !p.Rejected && p.Status.Code >= 790 && p.Status.Code <= 799
	case "failed":
		return !p.Rejected && p.Status.Code != 0 && p.Status.Code != 190 && (p.Status.Code < 790 || p.Status.Code > 799)
	case "rejected":
		return p.Rejected
	case "ignored":
		w, _ := p.Outcome()
		return w == store.OutcomeIgnored
	}
	return true
}

// Pushes is the push log: every push the listener received, newest first,
// live as they arrive.
type Pushes struct {
	listTab[*PushRow]
	typeIdx    int
	statusIdx  int
	listenAddr string
}

// NewPushes makes the push log; listenAddr is shown in the empty state.
func NewPushes(ctx *Context, listenAddr string) *Pushes {
	s := &Pushes{listTab: listTab[*PushRow]{ctx: ctx}, listenAddr: listenAddr}
	spec := rowSpec[*PushRow]{
		key:      func(r *PushRow) string { return r.id },
		haystack: func(r *PushRow) string { return r.hay },
		compare:  comparePushes,
		sortable: []int{pcTime, pcKind, pcStatus, pcSignature},
		// "/" takes the filter language, as `paydesk pushes --filter`.
		filter: store.PushLogFilter,
		where:  func(r *PushRow, w *query.Query) bool { return store.KeepPushLogText(r.Push, &r.logText, w) },
		keep: func() func(*PushRow) bool {
			typ, status := pushTypes[s.typeIdx], pushStatuses[s.statusIdx]
			if typ == "" && status == "" {
				return nil
			}
			return func(r *PushRow) bool {
				if typ != "" && r.Push.Envelope != typ {
					return false
				}
				return pushStatusMatches(r.Push, status)
			}
		},
	}
	s.list = newList(ctx, pushColumns, spec, pcTime, true)
	return s
}

// Title names the tab.
func (s *Pushes) Title() string { return "Pushes" }

// Actions are the tab's keys.
func (s *Pushes) Actions() []Action {
	k := s.ctx.Keys
	acts := []Action{{Key: k.Open}, {Key: k.Filter}, {Key: k.FilterType}, {Key: k.FilterStatus}, {Key: k.Sort}, {Key: k.Reverse},
		{Key: k.CopyKey}, {Key: k.CopyJSON}, {Key: k.SaveFixture}}
	if s.ctx.CanResend {
		acts = append(acts, Action{Key: k.Resend, Changes: true})
	}
	return append(acts, Action{Key: k.ExportCSV}, Action{Key: k.ExportJSON})
}

// Update handles rows, keys and the wheel.
func (s *Pushes) Update(msg tea.Msg) tea.Cmd {
	if m, ok := msg.(PushRowsMsg); ok {
		return s.list.takeRows(m.Full, m.Rows, m.Err, &s.err)
	}
	key, cmd, ok := s.keyLeft(msg)
	if !ok {
		return cmd
	}
	k := s.ctx.Keys
	switch {
	case keyIs(key, k.FilterType):
		s.typeIdx = (s.typeIdx + 1) % len(pushTypes)
		s.list.keepGen++
		return s.list.recompute()
	case keyIs(key, k.FilterStatus):
		s.statusIdx = (s.statusIdx + 1) % len(pushStatuses)
		s.list.keepGen++
		return s.list.recompute()
	case keyIs(key, k.ExportCSV), keyIs(key, k.ExportJSON):
		return send(s.export(exportFormat(key, k)))
	}
	sel, has := s.list.selected()
	if !has {
		return nil
	}
	if keyIs(key, k.Open) {
		return send(OpenPush{Push: sel.Push})
	}
	return pushActions(s.ctx, key, sel.Push)
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
	if s.err != nil {
		return s.page(info, s.readError())
	}
	if s.list.whereErr != nil {
		return s.page(info, t.Failed.Render(FilterErrorText(s.list.whereErr)))
	}
	if s.list.len() == 0 {
		var msg string
		switch {
		case !s.list.loaded:
			msg = "\n  " + t.Muted.Render("Loading the cache…")
		case len(s.list.rows) > 0:
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
		return s.page(info, msg)
	}
	body := s.list.table.View(func(i int, out []Cell) {
		r := s.list.at(i)
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
	return s.page(info, body)
}

func (s *Pushes) export(format string) ExportIntent {
	rows := s.list.visible()
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
