package views

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/progress"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/internal/textsafe"
	"paydesk/store"
)

// The batch page: open a shipment manifest, read its pre-flight, confirm
// once with the total, watch the reservations settle. The console plans
// and runs the batch (internal/batch) in commands; this page only shows
// what comes back and emits intents.

// BatchPlanIntent asks the console to read a manifest and check it.
type BatchPlanIntent struct {
	Path string
	Late bool
	// Kind and Keys, for the reservations marked in the list, stand for
	// a manifest file: the batch of that kind over those keys.
	Kind string
	Keys []string
}

// BatchRunIntent asks the console to run the checked manifest (the
// operator confirmed its total) or resume its batch.
type BatchRunIntent struct {
	Path string
	Kind string   // as the plan's
	Keys []string // as the plan's
}

func (BatchPlanIntent) intent() {}
func (BatchRunIntent) intent()  {}

// BatchPlan is a manifest's pre-flight as the page shows it.
type BatchPlan struct {
	Path         string // the manifest, or what was marked ("12 marked reservations")
	Kind         string // store.BatchCapture (also for "") or store.BatchCancelRest
	Keys         []string
	Hash         string
	Rows         int
	Reservations int
	Total        string // "15,385.00 EUR"
	Refused      int    // reservations
	RefusedRows  int
	Items        []BatchPlanItem
	// RefusedLines are the refusals, one line each ("line 12 SHOP-9 HAT
	// unknown-article: …").
	RefusedLines []string
	// Batch is the id of the batch this manifest already is ("" for a new
	// one): running it resumes, settled reservations are skipped.
	Batch string
	// Left is how many reservations of that batch are still to send.
	Left int
	Took time.Duration
}

// verb is what the batch does to each reservation.
func (p *BatchPlan) verb() string {
	if p.Kind == store.BatchCancelRest {
		return "cancel the rest of"
	}
	return "capture"
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// NewBulkBatch opens the batch page on the batch of kind over the marked
// reservations: it is being checked (the command is the plan's intent).
func NewBulkBatch(ctx *Context, kind string, keys []string) (*Batch, tea.Cmd) {
	b := NewBatch(ctx)
	b.input.Blur()
	b.input.SetValue(countText(len(keys), len(keys), "marked reservations"))
	b.stage = batchPlanning
	return b, send(BatchPlanIntent{Kind: kind, Keys: keys})
}

// BatchPlanItem is one reservation's capture.
type BatchPlanItem struct {
	Reservation string
	Invoice     string
	Rows        int
	Amount      string // "42.40 EUR"
	Lines       string // "MUG-BLUE=1 TEE-L=1"
}

// BatchPlannedMsg carries the pre-flight (or why there is none).
type BatchPlannedMsg struct {
	Plan *BatchPlan
	Err  error
}

// BatchItemMsg is one reservation that ended; Next waits for the one after
// (the page returns it, so the stream continues while the page is open).
type BatchItemMsg struct {
	Batch       string
	Item        store.BatchItem
	Done, Total int
	Earlier     bool // an earlier run had ended it
	Next        tea.Cmd
}

// BatchPushMsg says pushes arrived for these transaction keys: a capture's
// push confirms what its answer said.
type BatchPushMsg struct {
	Batch string
	Keys  []string
	Next  tea.Cmd
}

// BatchDoneMsg ends a run: the counts in words, or the error that stopped it.
type BatchDoneMsg struct {
	Batch string
	Text  string
	Err   error
}

type batchStage int

const (
	batchIdle batchStage = iota // no manifest open, not typing
	batchAskPath
	batchPlanning
	batchPlanned
	batchConfirm
	batchRunning
	batchDone
)

// Batch is the batch page.
type Batch struct {
	ctx    *Context
	stage  batchStage
	input  textinput.Model
	plan   *BatchPlan
	err    string
	status string

	// Live state: one rendered line per reservation, replaced in place as
	// items end; the pane shows only the visible ones.
	index  map[string]int // reservation number → item
	states []store.BatchItemState
	msgs   []string
	keys   map[string]int  // transaction key → item, once its answer named it
	pushed map[string]bool // transaction keys whose push arrived (perhaps before the answer)
	got    []bool          // item's push arrived
	pushes int
	lines  []string
	pane   pane
	bar    progress.Model
	done   int
	total  int
	counts map[store.BatchItemState]int
	start  time.Time
	end    time.Time // when the run ended: the rate stops there
	batch  string

	width, height int
}

// NewBatch opens the page asking for a manifest path.
func NewBatch(ctx *Context) *Batch {
	in := textinput.New()
	in.Prompt = "manifest: "
	in.Placeholder = "testdata/batch/shipments.csv"
	in.Focus()
	return &Batch{ctx: ctx, stage: batchAskPath, input: in, pane: pane{ctx: ctx}, counts: map[store.BatchItemState]int{},
		bar: progress.New(progress.WithWidth(30), progress.WithoutPercentage(), progress.WithDefaultBlend())}
}

// Title names the page.
func (b *Batch) Title() string { return "Batch" }

// SetSize sets the page size.
func (b *Batch) SetSize(w, h int) {
	b.width, b.height = w, h
	b.input.SetWidth(max(w-12, 10))
	b.layout()
}

func (b *Batch) headerLines() []string { return strings.Split(b.header(), "\n") }

func (b *Batch) layout() {
	b.pane.width = b.width
	b.pane.setHeight(b.height - len(b.headerLines()) - 1)
}

// Capturing is true while a path or the confirmation is typed.
func (b *Batch) Capturing() bool { return b.stage == batchAskPath || b.stage == batchConfirm }

// Actions are the page's keys.
func (b *Batch) Actions() []Action {
	k := b.ctx.Keys
	acts := []Action{{Key: k.Back}}
	if b.stage == batchPlanned {
		acts = append(acts, Action{Key: k.Open, Changes: true})
	}
	return acts
}

// Update handles keys and the console's answers.
func (b *Batch) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case BatchPlannedMsg:
		return b.planned(msg)
	case BatchItemMsg:
		if b.batch != "" && msg.Batch != b.batch {
			return msg.Next
		}
		b.item(msg)
		return msg.Next
	case BatchPushMsg:
		if b.batch == "" || msg.Batch == b.batch {
			b.push(msg.Keys)
		}
		return msg.Next
	case BatchDoneMsg:
		if b.batch != "" && msg.Batch != b.batch {
			return nil
		}
		b.stage = batchDone
		b.end = time.Now()
		b.status = msg.Text
		if msg.Err != nil {
			b.err = msg.Err.Error()
		}
		b.layout()
		return nil
	case tea.KeyPressMsg:
		return b.key(msg)
	case tea.MouseWheelMsg:
		b.pane.update(msg)
	}
	return nil
}

func (b *Batch) key(msg tea.KeyPressMsg) tea.Cmd {
	k := b.ctx.Keys
	switch b.stage {
	case batchAskPath:
		switch msg.String() {
		case "enter":
			path := strings.TrimSpace(b.input.Value())
			if path == "" {
				b.err = "type the path of a manifest (CSV: invoice, article, quantity)"
				return nil
			}
			b.err, b.stage = "", batchPlanning
			b.layout()
			return send(BatchPlanIntent{Path: path})
		case "esc":
			b.input.Blur()
			b.err = ""
			if b.plan == nil {
				b.stage = batchIdle // esc again leaves the page
			} else {
				b.stage = batchPlanned
			}
			b.layout()
			return nil
		}
		var cmd tea.Cmd
		b.input, cmd = b.input.Update(msg)
		return cmd
	case batchConfirm:
		switch msg.String() {
		case "enter":
			if strings.ToLower(strings.TrimSpace(b.input.Value())) != "yes" {
				b.err = "not confirmed: type yes to send, esc to go back"
				return nil
			}
			b.input.Blur()
			b.err, b.stage, b.start = "", batchRunning, time.Now()
			b.layout()
			return send(BatchRunIntent{Path: b.plan.Path, Kind: b.plan.Kind, Keys: b.plan.Keys})
		case "esc":
			b.input.Blur()
			b.err, b.stage = "", batchPlanned
			b.layout()
			return nil
		}
		var cmd tea.Cmd
		b.input, cmd = b.input.Update(msg)
		return cmd
	case batchPlanned:
		if keyIs(msg, k.Open) && b.plan != nil && (b.plan.Reservations > 0 || b.plan.Left > 0) {
			if b.ctx.ReadOnly {
				b.err = "read-only console: batches are off"
				return nil
			}
			b.stage = batchConfirm
			b.input.Prompt = "type yes to send: "
			b.input.Placeholder = ""
			b.input.SetValue("")
			b.layout()
			return b.input.Focus()
		}
	}
	if (b.stage == batchPlanned || b.stage == batchIdle || b.stage == batchDone) && msg.String() == "o" {
		b.stage = batchAskPath
		b.input.Prompt = "manifest: "
		b.input.Placeholder = "testdata/batch/shipments.csv"
		if b.plan != nil && b.plan.Keys == nil {
			b.input.SetValue(b.plan.Path)
		}
		b.layout()
		return b.input.Focus()
	}
	b.pane.update(msg)
	return nil
}

func (b *Batch) planned(msg BatchPlannedMsg) tea.Cmd {
	if msg.Err != nil {
		b.stage = batchAskPath
		b.err = msg.Err.Error()
		b.layout()
		return b.input.Focus()
	}
	b.input.Blur()
	b.plan, b.stage, b.err = msg.Plan, batchPlanned, ""
	b.index = make(map[string]int, len(msg.Plan.Items))
	b.states = make([]store.BatchItemState, len(msg.Plan.Items))
	b.msgs = make([]string, len(msg.Plan.Items))
	b.keys, b.pushed, b.pushes = map[string]int{}, map[string]bool{}, 0
	b.got = make([]bool, len(msg.Plan.Items))
	b.lines = make([]string, 0, len(msg.Plan.Items)+len(msg.Plan.RefusedLines)+2)
	for i, it := range msg.Plan.Items {
		b.index[it.Reservation] = i
		b.lines = append(b.lines, b.itemLine(it, "", "", false))
	}
	if len(msg.Plan.RefusedLines) > 0 {
		b.lines = append(b.lines, "", b.ctx.Theme.Failed.Render(fmt.Sprintf("Refused (%d reservations, %d rows; nothing is sent for them):", msg.Plan.Refused, msg.Plan.RefusedRows)))
		for _, l := range msg.Plan.RefusedLines {
			b.lines = append(b.lines, "  "+textsafe.Clean(l))
		}
	}
	b.pane.setLines(b.lines)
	b.layout()
	return nil
}

func (b *Batch) itemLine(it BatchPlanItem, st store.BatchItemState, msg string, pushed bool) string {
	th := b.ctx.Theme
	state := th.Muted.Render(fmt.Sprintf("%-8s", "planned"))
	switch st {
	case "", store.ItemPlanned:
	case store.ItemSettled, store.ItemSent:
		state = th.OK.Render(fmt.Sprintf("%-8s", st))
	case store.ItemOutcomeUnknown:
		state = th.Warning.Render(fmt.Sprintf("%-8s", "unknown"))
	default:
		state = th.Failed.Render(fmt.Sprintf("%-8s", st))
	}
	// What the operator must read (why it failed, which operation to
	// resolve) replaces the lines.
	detail := it.Lines
	if msg != "" && st != store.ItemSettled && st != store.ItemSent {
		detail = msg
	}
	push := "    "
	if pushed {
		push = th.OK.Render("push")
	}
	line := fmt.Sprintf("%s %s %-36s %-12s %2d rows %11s  %s", state, push, textsafe.Clean(it.Reservation), textsafe.Clean(it.Invoice),
		it.Rows, it.Amount, textsafe.Clean(detail))
	return ansi.Truncate(line, max(b.width, 20), "…")
}

func (b *Batch) item(msg BatchItemMsg) {
	b.batch, b.done, b.total = msg.Batch, msg.Done, msg.Total
	if b.stage != batchDone {
		b.stage = batchRunning
	}
	i, ok := b.index[msg.Item.Reservation]
	if !ok {
		return
	}
	if prev := b.states[i]; prev != "" {
		b.counts[prev]--
	}
	b.states[i] = msg.Item.State
	b.msgs[i] = msg.Item.Message
	b.counts[msg.Item.State]++
	if k := msg.Item.Key; k != "" {
		b.keys[k] = i
		if b.pushed[k] && !b.got[i] {
			b.got[i] = true
			b.pushes++
		}
	}
	// Only this line is rendered again: the pane shares the slice, so an
	// event costs one line, not the whole list.
	b.lines[i] = b.itemLine(b.plan.Items[i], b.states[i], b.msgs[i], b.got[i])
}

// push marks the items whose capture's push arrived; a push that comes
// before its answer is remembered for it.
func (b *Batch) push(keys []string) {
	if b.pushed == nil {
		return
	}
	for _, k := range keys {
		b.pushed[k] = true
		if i, ok := b.keys[k]; ok && !b.got[i] {
			b.got[i] = true
			b.pushes++
			b.lines[i] = b.itemLine(b.plan.Items[i], b.states[i], b.msgs[i], true)
		}
	}
}

func (b *Batch) header() string {
	th := b.ctx.Theme
	var out []string
	switch b.stage {
	case batchAskPath, batchIdle:
		out = append(out, th.Accent.Render("Batch capture from a shipment manifest"),
			th.Muted.Render("CSV with a header: invoice (or reservation), article, quantity; optional amount, parcel, tracking"))
		if b.stage == batchIdle {
			out = append(out, th.Muted.Render("o: open a manifest · esc: back"))
		} else {
			out = append(out, b.input.View(), th.Muted.Render("enter: check it (nothing is sent) · esc: stop typing"))
		}
	case batchPlanning:
		out = append(out, th.Accent.Render("Checking "+textsafe.Clean(strings.TrimSpace(b.input.Value()))+" …"))
	default:
		p := b.plan
		out = append(out, th.Accent.Render(fmt.Sprintf("Pre-flight of %s (sha256 %s): %d rows, checked in %s", textsafe.Clean(p.Path),
			shortHash(p.Hash), p.Rows, p.Took.Round(time.Microsecond))))
		out = append(out, fmt.Sprintf("to %s %s, %s · refused %s (%s)", p.verb(), plural(p.Reservations, "reservations"), p.Total, plural(p.Refused, "reservations"), plural(p.RefusedRows, "rows")))
		if p.Batch != "" {
			out = append(out, th.Warning.Render(fmt.Sprintf("this manifest is batch %s: running it resumes (%d left to send; settled ones are skipped, none is sent twice)", p.Batch, p.Left)))
		}
		switch b.stage {
		case batchPlanned:
			if p.Reservations > 0 || p.Left > 0 {
				out = append(out, th.Muted.Render(fmt.Sprintf("enter: "+p.verb()+" them (%s), asked once · o: another manifest · esc: back", p.Total)))
			} else {
				out = append(out, th.Muted.Render("nothing to send · o: another manifest · esc: back"))
			}
		case batchConfirm:
			out = append(out, th.Warning.Render(fmt.Sprintf("%s %s for %s?", upperFirst(p.verb()), plural(max(p.Reservations, p.Left), "reservations"), p.Total)), b.input.View())
		case batchRunning, batchDone:
			pct := 0.0
			if b.total > 0 {
				pct = float64(b.done) / float64(b.total)
			}
			rate := ""
			until := time.Now()
			if !b.end.IsZero() {
				until = b.end
			}
			if el := until.Sub(b.start).Seconds(); el > 0 && !b.start.IsZero() {
				rate = fmt.Sprintf("  %.1f/s", float64(b.done)/el)
			}
			line := fmt.Sprintf("%s %d/%d%s  %d settled  %d failed  %d unknown", b.bar.ViewAs(pct), b.done, b.total, rate,
				b.counts[store.ItemSettled]+b.counts[store.ItemSent], b.counts[store.ItemFailed], b.counts[store.ItemOutcomeUnknown])
			if n := b.counts[store.ItemRefused]; n > 0 {
				line += fmt.Sprintf("  %d refused", n)
			}
			line += fmt.Sprintf("  %d pushes in", b.pushes)
			out = append(out, line)
			if b.stage == batchDone {
				out = append(out, th.OK.Render("Batch "+b.batch+": "+textsafe.Clean(b.status)))
			}
		}
	}
	if b.err != "" {
		out = append(out, th.Failed.Render(textsafe.Clean(b.err)))
	}
	return strings.Join(out, "\n")
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// View renders the header and the visible reservations.
func (b *Batch) View() string {
	h := b.header()
	if b.stage == batchIdle || b.stage == batchAskPath || b.stage == batchPlanning || b.plan == nil {
		return h
	}
	return h + "\n\n" + b.pane.view()
}
