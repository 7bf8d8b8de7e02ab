package forms

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/internal/textsafe"
	"paydesk/store"
)

// stage is where a form is: editing, confirming, waiting for the answer,
// or showing it.
type stage int

const (
	stageEdit stage = iota
	stageConfirm
	stageSending
	stageResult
)

// field is one input of a form, bound to a string the spec reads.
type field struct {
	key      string // the rule's field name, "Field/Group" for a line
	title    string
	hint     string
	value    *string
	options  []option // a select when set
	password bool
	// units marks a number-of-units field: it takes digits only, at most
	// one more than its maximum has (see unitsKey); maxUnits is that
	// maximum.
	units    bool
	maxUnits int
	input    *huh.Input
	sel      *huh.Select[string]
	// shown is the description last given to input or sel, so recheck
	// redraws the form only when one changed.
	shown string
}

type option struct{ label, value string }

// check is what a spec makes of the current values.
type check struct {
	errs    map[string]string // field key → the broken rule
	general []string          // errors not tied to a field
	summary []string          // live lines under the fields (amount, full/partial)
	intent  ops.Intent        // what to send; nil while something is wrong
	plain   []string          // the confirm step's summary in plain words: action, amount, customer, invoice, lines, what stays open
	sending string            // exactly what will be sent (the wire detail, folded on the confirm step)
	extra   []string          // further explicit confirmations (late capture)
	invoice string            // against a live gateway: the invoice to type
	// refund is the money the intent gives back (refund, return, gift card
	// refund) and its currency: above the approval threshold the confirm
	// step says it becomes a request (approval.go).
	refund         decimal.Decimal
	refundCurrency string
	// alt is a way on when the values cannot be sent as they are (a
	// return that does not fit by line: a refund by amount instead).
	alt *altStep
}

// altStep is a form a key opens in place of this one, filled in and not
// sent.
type altStep struct {
	key   string
	label string
	open  func() *kit
}

func (c check) ok() bool { return len(c.errs) == 0 && len(c.general) == 0 && c.intent != nil }

// spec is what makes a form particular.
type spec interface {
	title() string
	header() string
	fields() []*field
	check() check
}

// followUp lets a spec offer next steps on its result (the customer step of
// a new test reservation).
type followUp interface {
	next(res ops.Result) []choice
}

type choice struct {
	label  string
	intent ops.Intent // nil closes
}

// kit runs a spec through edit → confirm → sending → result.
type kit struct {
	id     string
	spec   spec
	mode   ops.Mode
	theme  huh.Theme
	width  int
	height int

	stage  stage
	form   *huh.Form
	drawn  *huh.Form // the form recheck last redrew; nil: redraw next time
	fields []*field
	focus  int // the field with the focus in the edit stage (kept here, not asked of huh)
	// touched are the fields the operator typed in or left; tried is set
	// by an enter that could not go on. A field's error shows only then:
	// a form opens with its hints, not a column of red.
	touched map[string]bool
	tried   bool
	last    check
	serverE map[string]string // field errors from the answer, until edited

	confirm *confirmation
	// approvalOver and approvers: a refund above it is kept as a request
	// for them (WithApproval); zero: four-eyes is off.
	approvalOver decimal.Decimal
	approvers    string
	scan         *scanState // scan mode of a form whose spec counts scanned codes
	// pending is text that arrived in a units field but is no number of
	// units (a scan, a typo): held here, never in the field; run is the
	// digits typed into the field since it was entered or last edited
	// otherwise, runFrom the field's value before them. note says what
	// became of the last such text.
	pending, run, runFrom string
	note                  string
	// discarding is the question "discard N units?" after esc.
	discarding int
	// closed is set when the form asked to be closed: the host pops it at
	// once, so a key typed right after (a second esc) reaches what lies
	// under the form and not the form that is going away.
	closed  bool
	choice  string
	choices []choice

	result *ops.Result
	err    error
}

func newKit(prefix string, s spec, mode ops.Mode) *kit {
	k := &kit{spec: s, mode: mode, theme: themeOnce(formTheme), width: 80, height: 24}
	if sc, ok := s.(scanner); ok {
		k.scan = &scanState{spec: sc}
	}
	k.id = fmt.Sprintf("%s-%p", prefix, k) // unique while the form lives
	k.fields = s.fields()
	k.buildEdit()
	return k
}

// ID implements Form.
func (k *kit) ID() string { return k.id }

// Title implements Form.
func (k *kit) Title() string { return k.spec.title() }

// Busy implements Form.
func (k *kit) Busy() bool { return k.stage == stageSending }

// Closed implements Form.
func (k *kit) Closed() (*ops.Result, bool) { return k.result, k.closed }

// SetSize implements Form.
func (k *kit) SetSize(w, h int) {
	k.width, k.height = max(w, 30), max(h, 8)
	if k.form != nil {
		k.form.WithWidth(k.width).WithHeight(k.formHeight())
	}
}

// summaryRoom is kept under the fields for the live amount, errors and
// the key help.
const summaryRoom = 4

func (k *kit) formHeight() int {
	used := lipgloss.Height(k.chrome()) + summaryRoom
	return max(k.height-used, 4)
}

// themeOnce builds a form's styles once per background and hands out the
// same ones after: huh asks its theme for them on every key and every
// frame of every field, and building base16's styles anew was a third of
// a keystroke's CPU (BenchmarkFormKeystroke). huh only reads them. A form
// lives on one goroutine (Bubble Tea's), so the memo needs no lock.
func themeOnce(build func(isDark bool) *huh.Styles) huh.ThemeFunc {
	var dark, light *huh.Styles
	return func(isDark bool) *huh.Styles {
		s := &light
		if isDark {
			s = &dark
		}
		if *s == nil {
			*s = build(isDark)
		}
		return *s
	}
}

// formTheme is huh's base16 theme with the chosen button marked by
// brackets, so the confirm step reads right without colour too (a
// monochrome terminal, a screen reader, a text capture).
func formTheme(isDark bool) *huh.Styles {
	t := huh.ThemeBase16(isDark)
	mark := func(s string) string { return "[" + s + "]" }
	pad := func(s string) string { return " " + s + " " }
	t.Focused.FocusedButton = t.Focused.FocusedButton.Transform(mark)
	t.Focused.BlurredButton = t.Focused.BlurredButton.Transform(pad)
	t.Blurred.FocusedButton = t.Blurred.FocusedButton.Transform(mark)
	t.Blurred.BlurredButton = t.Blurred.BlurredButton.Transform(pad)
	return t
}

// Init implements Form.
func (k *kit) Init() tea.Cmd {
	k.recheck()
	if len(k.fields) == 0 && k.last.ok() {
		// Nothing to fill in (cancel): straight to what will happen.
		k.buildConfirm()
		return nil
	}
	return k.form.Init()
}

// back leaves the confirm step: to the fields, or (a form without any)
// closes the form.
func (k *kit) back() tea.Cmd {
	if len(k.fields) == 0 {
		return k.closeCmd()
	}
	k.buildEdit()
	k.recheck()
	return k.form.Init()
}

func (k *kit) buildEdit() {
	k.stage = stageEdit
	k.focus = 0
	k.run, k.pending = "", ""
	var hs []huh.Field
	for _, f := range k.fields {
		f := f
		if f.options != nil {
			opts := make([]huh.Option[string], len(f.options))
			for i, o := range f.options {
				opts[i] = huh.NewOption(o.label, o.value)
			}
			f.sel = huh.NewSelect[string]().Key(f.key).Title(f.title).Description(f.hint).Options(opts...).Value(f.value).Inline(true)
			hs = append(hs, f.sel)
			continue
		}
		in := huh.NewInput().Key(f.key).Title(f.title).Description(f.hint).Value(f.value).Inline(false).
			Validate(func(string) error { return k.fieldErr(f.key) })
		if f.password {
			in = in.EchoMode(huh.EchoModePassword)
		}
		f.input = in
		hs = append(hs, in)
	}
	if len(hs) == 0 { // nothing to fill in: a button to go on to the confirm step
		hs = append(hs, huh.NewNote().Title("Nothing to fill in").Next(true).NextLabel("Continue"))
	}
	k.form = k.newForm(huh.NewGroup(hs...))
}

func (k *kit) newForm(groups ...*huh.Group) *huh.Form {
	for _, g := range groups {
		g.WithShowErrors(false)
	}
	km := huh.NewDefaultKeyMap()
	km.Quit = key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit"))
	return huh.NewForm(groups...).WithTheme(k.theme).WithKeyMap(km).WithShowHelp(false).
		WithWidth(k.width).WithHeight(k.formHeight())
}

// fieldErr is what huh's validation sees: the live check of the field.
func (k *kit) fieldErr(key string) error {
	k.last = k.spec.check()
	if e := k.errFor(key); e != "" {
		return errors.New(e)
	}
	return nil
}

func (k *kit) errFor(key string) string {
	if e := k.last.errs[key]; e != "" {
		return e
	}
	return k.serverE[key]
}

// recheck runs the spec's check and writes each field's error (or hint)
// right under its title: the error names the rule.
func (k *kit) recheck() {
	k.last = k.spec.check()
	changed := false
	for _, f := range k.fields {
		d := f.hint
		if e := k.errFor(f.key); e != "" && (k.tried || k.touched[f.key] || k.serverE[f.key] != "") {
			d = "✗ " + e
		}
		changed = changed || d != f.shown
		f.shown = d
		if f.input != nil {
			f.input.Description(d)
		}
		if f.sel != nil {
			f.sel.Description(d)
		}
	}
	// The redraw is a second pass over every field's view: only when a
	// description changed, or the form is not the one drawn last (built
	// afresh). A key that changes no error — nearly every key typed —
	// was drawn by the form's own update already.
	if k.form != k.drawn {
		changed = true
	}
	if k.form == nil || k.stage != stageEdit || (k.scan != nil && k.scan.on) {
		k.drawn = nil // the descriptions set now are drawn by the next redraw
		return
	}
	if changed {
		// (Not in scan mode: an update makes huh's inputs write their own
		// text back into the values the scan counts; the fields are built
		// afresh from the counts when scan mode ends.)
		// huh draws a group into a viewport when it updates; a message of
		// our own makes it redraw with the new descriptions.
		m, _ := k.form.Update(redrawMsg{})
		if f, ok := m.(*huh.Form); ok {
			k.form = f
		}
		k.drawn = k.form
	}
}

// redrawMsg makes the huh form redraw after the field errors changed.
type redrawMsg struct{}

// confirmation is the confirm step, drawn and driven here rather than by
// huh: a person reads a plain summary, the wire detail is folded away, and
// only an explicit choice sends — the Send button chosen with tab or the
// arrows and pressed with enter, or (against a live gateway) the typed
// invoice number. A letter never sends: "okay" typed here does nothing.
type confirmation struct {
	ticks    []bool // the extra confirmations, each ticked by hand
	live     bool   // a typed invoice number is needed
	input    textinput.Model
	focus    int // 0…len(ticks)-1 the extras, then the input (live), then Back, Send
	showWire bool
	note     string // why the last enter did not send
}

func (c *confirmation) inputAt() int {
	if !c.live {
		return -1
	}
	return len(c.ticks)
}
func (c *confirmation) backAt() int { return len(c.ticks) + b2i(c.live) }
func (c *confirmation) sendAt() int { return c.backAt() + 1 }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (k *kit) buildConfirm() {
	k.stage = stageConfirm
	k.form = nil
	c := &confirmation{ticks: make([]bool, len(k.last.extra)), live: k.mode.IsLive() && k.last.invoice != ""}
	if c.live {
		c.input = textinput.New()
		c.input.Prompt = "> "
		c.input.CharLimit = 64
		c.input.SetWidth(max(k.width-6, 10))
		c.input.Focus()
	}
	c.focus = c.backAt()
	switch {
	case len(c.ticks) > 0:
		c.focus = 0
	case c.live:
		c.focus = c.inputAt()
	}
	k.confirm = c
}

// confirmKey handles a key of the confirm step.
func (k *kit) confirmKey(msg tea.Msg) tea.Cmd {
	c := k.confirm
	if p, ok := msg.(tea.PasteMsg); ok {
		if c.focus == c.inputAt() {
			var cmd tea.Cmd
			c.input, cmd = c.input.Update(p)
			return cmd
		}
		return nil
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	inInput := c.focus == c.inputAt()
	c.note = ""
	switch km.String() {
	case "tab", "down":
		c.focus = min(c.focus+1, c.sendAt())
		return nil
	case "shift+tab", "up":
		c.focus = max(c.focus-1, 0)
		return nil
	case "right":
		if !inInput {
			c.focus = min(c.focus+1, c.sendAt())
			return nil
		}
	case "left":
		if !inInput {
			c.focus = max(c.focus-1, 0)
			return nil
		}
	case "space":
		if c.focus < len(c.ticks) {
			c.ticks[c.focus] = !c.ticks[c.focus]
			return nil
		}
	case "enter":
		switch {
		case c.focus < len(c.ticks):
			c.ticks[c.focus] = !c.ticks[c.focus]
			return nil
		case c.focus == c.backAt():
			return k.back()
		}
		return k.trySend() // Send, or enter in the invoice input
	}
	if inInput {
		var cmd tea.Cmd
		c.input, cmd = c.input.Update(msg)
		return cmd
	}
	if km.String() == "d" {
		c.showWire = !c.showWire
		return nil
	}
	if km.Text != "" {
		back := "esc goes back to the fields"
		if len(k.fields) == 0 {
			back = "esc closes the form" // a form without fields (a cancel) has nothing to go back to
		}
		c.note = "Nothing was sent: choose Send with tab or → and press enter (" + back + ")."
	}
	return nil
}

// trySend sends when every confirmation is in place, or says what is
// missing.
func (k *kit) trySend() tea.Cmd {
	c := k.confirm
	for i, t := range c.ticks {
		if !t {
			c.focus = i
			c.note = "Nothing was sent: tick \"" + k.last.extra[i] + "\" first (space)."
			return nil
		}
	}
	typed := ""
	if c.live {
		typed = strings.TrimSpace(c.input.Value())
		if typed != k.last.invoice {
			c.focus = c.inputAt()
			if typed != "" {
				// A wrong number is cleared, so the next try is typed
				// whole rather than mended.
				c.input.SetValue("")
				c.note = "Nothing was sent: " + strconv.Quote(typed) + " is not the invoice number; type " + k.last.invoice + " exactly."
			} else {
				c.note = "Nothing was sent: type the invoice number " + k.last.invoice + " exactly."
			}
			return nil
		}
	}
	k.stage = stageSending
	intent, id := withConfirm(k.last.intent, typed), k.id
	return func() tea.Msg { return SubmitMsg{ID: id, Intent: intent} }
}

// confirmView draws the confirm step: the plain summary, the choices, the
// wire detail folded below.
func (k *kit) confirmView() string {
	c := k.confirm
	var b strings.Builder
	plain := k.last.plain
	if len(plain) == 0 {
		plain = k.last.summary
	}
	for i, p := range plain {
		if i == 0 {
			b.WriteString(titleStyle.Render(wrapWords(p, k.width)) + "\n")
			continue
		}
		b.WriteString(wrapWords(p, k.width) + "\n")
	}
	b.WriteString("\n")
	mark := func(i int) string {
		if c.focus == i {
			return "» "
		}
		return "  "
	}
	for i, e := range k.last.extra {
		box := "[ ]"
		if c.ticks[i] {
			box = "[x]"
		}
		b.WriteString(mark(i) + box + " " + wrapWords(e, max(k.width-6, 10)) + "\n")
	}
	if c.live {
		b.WriteString(mark(c.inputAt()) + errStyle.Render("LIVE gateway") + ": type the invoice number " + Clean(k.last.invoice) + " to send\n")
		b.WriteString("  " + c.input.View() + "\n")
	}
	button := func(i int, label string) string {
		if c.focus == i {
			return titleStyle.Reverse(true).Render("» [ " + label + " ] «")
		}
		return "  [ " + label + " ]  "
	}
	send := "Send"
	if note := k.approvalNote(); note != "" {
		b.WriteString(wrapWords(note, k.width) + "\n\n")
		send = "Request approval"
	}
	b.WriteString(button(c.backAt(), "Back") + "   " + button(c.sendAt(), send) + "\n")
	if c.note != "" {
		b.WriteString(errStyle.Render(wrapWords(c.note, k.width)) + "\n")
	}
	if c.showWire {
		b.WriteString("\n" + mutedStyle.Render("▾ What is sent (d hides it)") + "\n" + k.last.sending + "\n")
	} else {
		b.WriteString("\n" + mutedStyle.Render("▸ What is sent on the wire: press d to show it") + "\n")
	}
	help := "tab/→ next · shift+tab/← back · enter choose · d wire detail · esc back to the fields"
	if c.live {
		help = "type the invoice number, enter sends · tab moves · esc back to the fields"
	}
	if len(k.fields) == 0 {
		help = strings.Replace(help, "esc back to the fields", "esc closes, nothing sent", 1)
	}
	b.WriteString(mutedStyle.Render(help))
	return b.String()
}

func (k *kit) buildResult() {
	k.stage = stageResult
	k.choices = nil
	if fu, ok := k.spec.(followUp); ok && k.result != nil && k.err == nil {
		k.choices = fu.next(*k.result)
	}
	if len(k.choices) == 0 {
		k.form = nil
		return
	}
	opts := make([]huh.Option[string], len(k.choices))
	for i, c := range k.choices {
		opts[i] = huh.NewOption(c.label, fmt.Sprint(i))
	}
	k.choice = "0"
	k.form = k.newForm(huh.NewGroup(huh.NewSelect[string]().Title("Next").Options(opts...).Value(&k.choice)))
}

// Update implements Form.
func (k *kit) Update(msg tea.Msg) (Form, tea.Cmd) {
	switch msg := msg.(type) {
	case ResultMsg:
		if msg.ID != k.id || k.stage != stageSending {
			return k, nil
		}
		return k, k.settle(msg)
	case tea.WindowSizeMsg:
		return k, nil // the host sizes forms with SetSize
	case tea.PasteMsg:
		if k.stage == stageConfirm {
			return k, k.confirmKey(msg)
		}
		if k.stage == stageEdit && k.scan != nil && k.scan.on {
			return k, k.scanKey(msg)
		}
		if k.stage == stageEdit {
			if cmd, done := k.unitsPaste(msg); done {
				return k, cmd
			}
		}
	case tea.KeyPressMsg:
		if k.discarding > 0 {
			return k, k.discardKey(msg)
		}
		if k.stage == stageEdit && k.scan != nil && (k.scan.on || msg.String() == scanToggle) {
			return k, k.scanKey(msg)
		}
		if k.stage == stageEdit {
			if a := k.last.alt; a != nil && msg.String() == a.key {
				// The form is replaced: the host keeps whatever form
				// Update returns.
				nf := a.open()
				nf.approvalOver, nf.approvers = k.approvalOver, k.approvers
				nf.SetSize(k.width, k.height)
				return nf, nf.Init()
			}
			if cmd, done := k.unitsKey(msg); done {
				return k, cmd
			}
		}
		if msg.String() == "esc" {
			return k, k.escape()
		}
		if k.stage == stageSending {
			return k, nil // one press sends once: keys wait for the answer
		}
		if k.stage == stageConfirm {
			return k, k.confirmKey(msg)
		}
		if k.stage == stageResult && k.form == nil {
			if msg.String() == "enter" || msg.String() == "q" {
				return k, k.closeCmd()
			}
			return k, nil
		}
	}
	if k.form == nil {
		return k, nil
	}
	if k.stage == stageEdit && k.scan != nil && k.scan.on {
		// huh's fields must not see anything while scanning (each update
		// writes their stale text over the counts); the scan input takes
		// its cursor's messages.
		var cmd tea.Cmd
		k.scan.input, cmd = k.scan.input.Update(msg)
		return k, cmd
	}
	if km, ok := msg.(tea.KeyPressMsg); ok && k.stage == stageEdit {
		switch km.String() {
		case "enter", "tab", "down":
			return k, k.move(+1)
		case "shift+tab", "up":
			return k, k.move(-1)
		}
	}
	if km, ok := msg.(tea.KeyPressMsg); ok && k.stage == stageResult && km.String() == "enter" {
		return k, k.choose() // at once, for the same reason as move
	}
	m, cmd := k.form.Update(msg)
	if f, ok := m.(*huh.Form); ok {
		k.form = f
	}
	switch k.stage {
	case stageEdit:
		switch msg.(type) {
		case tea.KeyPressMsg:
			k.serverE = nil
			k.touch()
		case tea.PasteMsg:
			k.touch()
		}
		k.recheck()
		if k.form.State == huh.StateCompleted {
			if !k.last.ok() {
				k.buildEdit()
				k.recheck()
				return k, k.form.Init()
			}
			k.buildConfirm()
			return k, nil
		}
	case stageResult:
		if k.form.State == huh.StateCompleted {
			return k, k.choose()
		}
	}
	if k.form.State == huh.StateAborted {
		return k, k.closeCmd()
	}
	return k, cmd
}

// touch marks the focused field as seen by the operator.
func (k *kit) touch() {
	if k.focus < 0 || k.focus >= len(k.fields) {
		return
	}
	if k.touched == nil {
		k.touched = map[string]bool{}
	}
	k.touched[k.fields[k.focus].key] = true
}

// choose takes the follow-up chosen on the result.
func (k *kit) choose() tea.Cmd {
	var i int
	fmt.Sscan(k.choice, &i)
	if i < 0 || i >= len(k.choices) || k.choices[i].intent == nil {
		return k.closeCmd()
	}
	k.stage = stageSending
	k.form = nil
	intent, id := k.choices[i].intent, k.id
	return func() tea.Msg { return SubmitMsg{ID: id, Intent: intent} }
}

// move changes the focus of the edit stage by one field, at once. huh moves
// the focus when a command it returns comes back as a message; keys typed
// faster than that (a paste, a scanner, a fast typist) would land in the
// field being left. Moving here, inside the key's own Update, keeps every
// key in the field the operator sees focused when it is typed. Enter on
// the last field goes on to the confirm step when the values are right,
// or to the first field with an error.
func (k *kit) move(dir int) tea.Cmd {
	k.serverE = nil
	k.touch()
	k.recheck()
	var cmds []tea.Cmd
	if dir > 0 && k.focus >= len(k.fields)-1 {
		if k.last.ok() {
			k.buildConfirm()
			return nil
		}
		k.tried = true
		k.recheck()
		for i, f := range k.fields {
			if k.errFor(f.key) != "" {
				cmds = append(cmds, k.focusField(i))
				break
			}
		}
		return tea.Batch(cmds...)
	}
	if dir < 0 && k.focus == 0 {
		return nil
	}
	return k.focusField(k.focus + dir)
}

// focusField moves huh's focus to field i with huh's own field messages,
// handled synchronously.
func (k *kit) focusField(i int) tea.Cmd {
	k.run, k.note = "", ""
	var cmds []tea.Cmd
	for k.focus != i {
		msg := huh.NextField()
		step := 1
		if i < k.focus {
			msg, step = huh.PrevField(), -1
		}
		m, cmd := k.form.Update(msg)
		if f, ok := m.(*huh.Form); ok {
			k.form = f
		}
		cmds = append(cmds, cmd)
		k.focus += step
	}
	k.recheck()
	return tea.Batch(cmds...)
}

func (k *kit) escape() tea.Cmd {
	switch k.stage {
	case stageSending:
		return nil
	case stageConfirm:
		return k.back()
	case stageEdit:
		// Units counted (scanned or chosen) are a shipment being put
		// together: esc asks before it throws them away.
		if fl, ok := k.spec.(filler); ok {
			if n := fl.chosen(); n > 0 {
				k.discarding = n
				return nil
			}
		}
	}
	return k.closeCmd()
}

func (k *kit) closeCmd() tea.Cmd {
	k.closed = true
	id, res := k.id, k.result
	return func() tea.Msg { return CloseMsg{ID: id, Result: res} }
}

// settle takes the answer. A local refusal (nothing journaled) goes back to
// the fields with each error next to its field; anything the gateway saw is
// shown as a result.
func (k *kit) settle(msg ResultMsg) tea.Cmd {
	var ve *api.ValidationError
	if msg.Err != nil && msg.Result.OpID == 0 && errors.As(msg.Err, &ve) && ve.Gateway == nil && len(ve.Fields) > 0 {
		k.serverE = map[string]string{}
		var general []string
		known := map[string]bool{}
		for _, f := range k.fields {
			known[f.key] = true
		}
		for _, fe := range ve.Fields {
			key := fieldKey(fe)
			if known[key] {
				k.serverE[key] = fe.Rule
			} else {
				general = append(general, fe.String())
			}
		}
		k.buildEdit()
		k.recheck()
		k.err = nil
		if len(general) > 0 {
			k.err = errors.New(strings.Join(general, "; "))
		}
		return k.form.Init()
	}
	r := msg.Result
	k.result, k.err = &r, msg.Err
	k.buildResult()
	if k.form != nil {
		return k.form.Init()
	}
	return nil
}

func fieldKey(fe api.FieldError) string {
	if fe.Group != "" {
		return fe.Field + "/" + fe.Group
	}
	return fe.Field
}

// Styles used by every form; they carry no colour of their own so the
// console's theme and an ASCII profile both read well.
var (
	titleStyle = lipgloss.NewStyle().Bold(true)
	errStyle   = lipgloss.NewStyle().Bold(true)
	mutedStyle = lipgloss.NewStyle().Faint(true)
)

func (k *kit) chrome() string {
	var b strings.Builder
	b.WriteString(titleStyle.Render(k.spec.title()))
	if k.mode.IsLive() {
		b.WriteString("  " + errStyle.Render("[LIVE]"))
	}
	b.WriteString("\n")
	if h := k.spec.header(); h != "" && k.stage != stageResult {
		b.WriteString(h + "\n")
	}
	return b.String()
}

// View implements Form.
func (k *kit) View() string {
	var b strings.Builder
	b.WriteString(k.chrome())
	switch k.stage {
	case stageConfirm:
		b.WriteString(k.confirmView())
	case stageEdit:
		if k.scan != nil && k.scan.on {
			b.WriteString(k.scanView())
			break
		}
		b.WriteString(trimBlankTail(k.form.View()))
		{
			for _, s := range k.last.summary {
				b.WriteString("\n" + s)
			}
			general := k.last.general
			if k.err != nil {
				general = append(general, k.err.Error())
			}
			for _, g := range general {
				// Wrapped to the form's width: a long error (it names
				// a 32-character key) is read whole, never cut off.
				b.WriteString("\n" + errStyle.Render(ansi.Wrap("✗ "+g, k.width, " ")))
			}
			if a := k.last.alt; a != nil {
				b.WriteString("\n" + titleStyle.Render(wrapWords("Next step: "+a.label, k.width)))
			}
			if k.pending != "" {
				what := "enter counts it as a scan"
				if k.scan == nil {
					what = "it is refused"
				}
				b.WriteString("\n" + errStyle.Render(wrapWords(fmt.Sprintf("✗ Not a number of units, kept out of the field: %q — %s, any other key drops it", trunc(Clean(k.pending), 40), what), k.width)))
			}
			if k.note != "" {
				b.WriteString("\n" + wrapWords(k.note, k.width))
			}
			if k.discarding > 0 {
				b.WriteString("\n" + errStyle.Render(wrapWords(k.discardQuestion(), k.width)))
			}
			help := "enter next · shift+tab back · esc cancel"
			if k.scan != nil {
				fill := ""
				if _, ok := k.spec.(filler); ok {
					fill = fillKey + " all that remains · "
				}
				help = "enter next · shift+tab back · " + fill + scanToggle + " scan mode · esc cancel"
			}
			b.WriteString("\n" + mutedStyle.Render(wrapWords(help, k.width)))
		}
	case stageSending:
		plain := k.last.plain
		if len(plain) == 0 {
			plain = k.last.summary
		}
		b.WriteString("\n" + wrapWords(strings.Join(plain, "\n"), k.width) + "\n\nSending… (waiting for the gateway; this form sends once)")
	case stageResult:
		b.WriteString(resultView(k.result, k.err))
		if k.form != nil {
			b.WriteString("\n" + trimBlankTail(k.form.View()))
		} else {
			b.WriteString("\n" + mutedStyle.Render("enter close"))
		}
	}
	return b.String()
}

// resultView shows what an operation did: status, key, invoice number,
// redirect and remainder; an unknown outcome plainly; a 491 item by item.
func resultView(r *ops.Result, err error) string {
	var b strings.Builder
	line := func(label, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-16s %s\n", label, Clean(v))
		}
	}
	if r == nil {
		r = &ops.Result{}
	}
	switch {
	case r.OutcomeUnknown():
		b.WriteString(errStyle.Render("OUTCOME UNKNOWN") + " — the request was sent but no trustworthy answer came back.\n")
		b.WriteString("It is NOT retried. The gateway's push settles it by itself; or resolve it by hand\n")
		b.WriteString("after checking the gateway's back office.\n\n")
	case err != nil:
		b.WriteString(errStyle.Render("✗ Not done") + "\n")
		msg := err.Error()
		var rej *api.RejectedError
		if errors.As(err, &rej) {
			msg = "declined by the provider's risk check (690); the reservation stays as it was"
		}
		if !errors.As(err, new(*api.ValidationError)) || len(r.Errors) == 0 {
			b.WriteString(Clean(msg) + "\n")
		}
		b.WriteString("\n")
	case r.AwaitsApproval():
		// Not done and not failed: kept for a second person.
		b.WriteString(titleStyle.Render(fmt.Sprintf("Awaiting approval (request %d)", r.Approval)) + " — nothing was sent.\n\n")
	case r.OK():
		b.WriteString(titleStyle.Render("✓ Done") + "\n\n")
	}
	if len(r.Errors) > 0 {
		b.WriteString("The gateway refused the request (491):\n")
		for _, e := range r.Errors {
			if e.Name == "" {
				e.Name = "(request)"
			}
			fmt.Fprintf(&b, "  • %s\n", Clean(e.Text()))
		}
		b.WriteString("\n")
	}
	line("Status", r.StatusText())
	line("Key", r.Key)
	line("Invoice number", r.InvoiceNumber)
	if !r.Amount.IsZero() {
		line("Amount", r.Amount.StringFixed(2)+" "+r.Currency)
	}
	if r.Remainder.IsPositive() {
		line("Remainder", r.Remainder.StringFixed(2)+" "+r.Currency+" still to pay (partial payment)")
		line("Group", r.GroupTransaction)
	}
	line("Redirect", r.RedirectURL)
	if r.OpID != 0 {
		line("Operation", fmt.Sprintf("%d (%s)", r.OpID, r.State))
	}
	if r.Message != "" && err == nil {
		// One line per part: a return refunded over two captures says both
		// (each part made inert on its own: a newline inside would show as
		// a control picture).
		for i, part := range strings.Split(r.Message, "; ") {
			label := "Note"
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(&b, "%-16s %s\n", label, Clean(part))
		}
	}
	line("Warning", r.Warning)
	return b.String()
}

// Clean makes text from outside (gateway messages, push fields) inert
// before it reaches the terminal.
func Clean(s string) string { return textsafe.Clean(s) }

// lineTable renders reservation lines with what remains.
func lineTable(r *store.Reservation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-28s %9s %4s %4s %4s %4s\n", "Article", "Title", "Price", "Res", "Capt", "Canc", "Left")
	for _, l := range r.Lines {
		fmt.Fprintf(&b, "%-10s %-28s %9s %4d %4d %4d %4d\n", trunc(Clean(l.ArticleNumber), 10), trunc(Clean(l.Title), 28),
			l.Price.StringFixed(2), l.Reserved, l.Captured, l.Cancelled, l.Remaining())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func trunc(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// trimBlankTail drops the empty lines huh pads its viewport with, so what
// follows the fields (the live amount) sits right under them.
func trimBlankTail(s string) string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && strings.TrimSpace(stripANSI(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func stripANSI(s string) string { return ansi.Strip(s) }

// withConfirm hands the typed invoice number of a live confirmation to the
// operation, which checks it again.
func withConfirm(in ops.Intent, typed string) ops.Intent {
	switch r := in.(type) {
	case ops.CancelRequest:
		r.Confirm = typed
		return r
	case ops.RefundRequest:
		r.Confirm = typed
		return r
	case ops.ReturnRequest:
		r.Confirm = typed
		return r
	case ops.GiftCardRefundRequest:
		r.Confirm = typed
		return r
	}
	return in
}
