package ui

import (
	"context"
	"fmt"
	"slices"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/access"
	"paydesk/internal/ops"
	"paydesk/store"
	"paydesk/ui/keys"
	"paydesk/ui/theme"
	"paydesk/views"
	"paydesk/views/forms"
	"paydesk/views/logs"
)

// Store is what the console reads of the cache; *store.DB is one.
type Store interface {
	ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error)
	ReservationCount(ctx context.Context, q store.PageQuery) (int, error)
	Reservation(ctx context.Context, ref string) (*store.Reservation, error)
	Transaction(ctx context.Context, key string) (*store.Transaction, error)
	TransactionsFor(ctx context.Context, ref string) ([]*store.Transaction, error)
	TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error)
	TransactionCount(ctx context.Context, q store.PageQuery) (int, error)
	TransactionGroup(ctx context.Context, group string) ([]*store.Transaction, error)
	Pushes(ctx context.Context, limit int, beforeID uint64) ([]*store.PushRecord, error)
	PushesFor(ctx context.Context, keys ...string) ([]*store.PushRecord, error)
	PushesForReservation(ctx context.Context, ref string) ([]*store.PushRecord, error)
	RejectedPushes(ctx context.Context, limit int) ([]*store.PushRecord, error)
	Op(ctx context.Context, id uint64) (*store.PendingOp, error)
	Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error)
	Audit(ctx context.Context, limit int) ([]store.AuditEntry, error)
	Exchanges(ctx context.Context, limit int) ([]store.Exchange, error)
	Counts(ctx context.Context) (store.Counts, error)
	Subscribe() (<-chan store.Change, func())
}

// Resender asks the embedded sandbox to send a key's pushes again.
type Resender interface {
	Resend(key string) error
}

// Config wires the console.
type Config struct {
	Store Store
	// Ops runs the operations the forms submit; nil leaves the console
	// without operations (it says so when one is asked for).
	Ops *ops.Service
	// Sandbox is the embedded sandbox, nil against any other gateway.
	Sandbox Resender
	Mode    ops.Mode
	// GatewayURL and ListenAddr are shown in the status bar.
	GatewayURL string
	ListenAddr string
	// IntakeURL is the listener's order intake, for the reservation detail.
	IntakeURL string
	ReadOnly  bool
	// PartialRefunds is provider B's merchant setting (for the gift card
	// refund form).
	PartialRefunds bool
	// GiftCardCodes are the configured gift card service codes (nil: the
	// defaults).
	GiftCardCodes []string
	Currency      string
	// ScanPrefix and ScanSuffix are what the barcode scanner adds around
	// each code; the capture form's scan mode takes them off.
	ScanPrefix, ScanSuffix string
	// ExportDir and FixtureDir are where exports and saved pushes go; ""
	// is the current directory.
	ExportDir  string
	FixtureDir string
	// ExportsOnServer: the console runs for a client over SSH, whose
	// terminal takes no file; the status names an export by its name and
	// the command that fetches it (paydesk exports NAME), not by the
	// server's path.
	ExportsOnServer bool
	// StreamWindow is how long the console gathers changes while they
	// keep coming before it reloads (0: 250 ms). paydesk serve gives its
	// consoles over SSH a longer one: many consoles reloading four times a
	// second cost the listener beside them.
	StreamWindow time.Duration
	// StreamWindowMax lets the window grow while a stream goes on: each
	// gathering of a stream doubles the last, up to this (0: StreamWindow,
	// no growth). A change after a quiet StreamWindow still shows within
	// 25 ms.
	StreamWindowMax time.Duration
	// Now is the clock; Location the time zone shown (nil: local).
	Now func() time.Time
	// Tick is the timer of the console's waits (the warm-up's delay, the
	// whole count's pause); nil is tea.Tick. Tests fire the ticks.
	Tick     func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
	Location *time.Location
	// Context bounds the operations the console runs.
	Context context.Context
	// Startup commands run once the console is up (the --demo filler).
	Startup []tea.Cmd
	// NoAttentionStart keeps the console on Reservations when the attention
	// tab fills at start (the goldens); by default it opens on Attention
	// when something needs a person.
	NoAttentionStart bool
	// NoFirstFrameSettle gives out the reads the first load keeps back as
	// soon as the first page is answered, without firstFrameSettle's wait
	// (tests that step the model and read every tab at once).
	NoFirstFrameSettle bool
	// PushLimit is how many of the newest pushes the log loads (0: 5,000).
	PushLimit int
	// Views are the saved views (the config's [views]): each a tab of the
	// reservations its filter keeps, after the fixed tabs, on keys 6…9.
	Views []SavedView
	// Forwarding is true when pushes are delivered to shop endpoints
	// (forward-to in the config): the help lists the Deliveries page and
	// the bulk menu offers a resend.
	Forwarding bool
	// Light starts with the light theme until the terminal tells its
	// background.
	Light bool
}

// SavedView is a named filter of the reservations, in the filter
// language (internal/query).
type SavedView struct{ Name, Filter string }

// maxViews: the saved views with a key of their own (6…9).
const maxViews = 4

// Tab indexes.
const (
	TabReservations = iota
	TabTransactions
	TabPushes
	TabAudit
	TabGateway
	// TabAttention is last in the slice but drawn first in the tab bar
	// when it has anything (key 0), so the numbers 1…5 keep their tabs.
	TabAttention
)

// App is the console's root model.
type App struct {
	cfg    Config
	vctx   *views.Context
	keys   *keys.KeyMap
	tabs   []views.Screen
	stacks [][]views.Screen
	active int

	dialogs []Dialog
	help    bool
	// pagesGiven: the reservations list has been given the store to read
	// its pages from (load.go).
	pagesGiven bool
	// txGiven: the transactions list has been given the store likewise.
	txGiven bool
	// pushGiven: the push log has been given the store likewise.
	pushGiven bool
	palette   *palette
	status    views.StatusMsg

	counts        store.Counts
	sessionPushes int
	// sameFrame says the last message changed nothing the next frame
	// needs to show before its reload lands (a change notice: its reload
	// follows at once): View hands the renderer lastFrame again instead of
	// drawing it. Fifty consoles over SSH each drew a whole frame for
	// every notice, a third of their frames.
	sameFrame bool
	lastFrame string
	// frameUntil is when the clock alone changes lastFrame (zero: not
	// known); an age tick before it draws nothing (frameclock.go).
	frameUntil time.Time
	// renders counts the frames drawn (tests count them).
	renders int
	// chrome keeps the tab bar and the status line (chromememo.go).
	chrome chromeMemo
	// pushWatch notices operations whose push does not come.
	pushWatch     pushWatch
	width, height int

	changes     <-chan store.Change
	unsubscribe func()
	helpModel   help.Model
	// stopBackground ends the console's background reads (warmLists)
	// when it closes.
	stopBackground context.CancelFunc

	// held counts the effects of a key still on their way (an intent, the
	// load that opens a form); waiting are the keys typed meanwhile, given
	// out in order once the effect has landed. See hold.
	held    int
	waiting []tea.Msg

	// quitArmed is set by a ctrl+c while an operation is on its way: the
	// next ctrl+c quits anyway. It is cleared when nothing is in flight.
	quitArmed bool
	// batchRuns counts the batch runs started and not yet done.
	batchRuns int

	// attnDone is set once the console has opened on the attention tab,
	// or the operator has moved: it never jumps there by itself again.
	attnDone bool

	// deliveriesRead is when the deliveries were last read (deliveries.go).
	deliveriesRead time.Time

	// afterFirstPage are the first load's reads that wait for the
	// reservations list's first page (reload, firstPageAnswered).
	afterFirstPage []tea.Cmd
}

// New builds the console. Run it with tea.NewProgram(app).
func New(cfg Config) *App {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.PushLimit <= 0 {
		cfg.PushLimit = 5000
	}
	vctx := views.NewContext(cfg.Now)
	vctx.Tick = cfg.Tick
	vctx.Theme = theme.New(!cfg.Light)
	vctx.ReadOnly = cfg.ReadOnly
	vctx.CanResend = cfg.Sandbox != nil
	vctx.Live = cfg.Mode.IsLive()
	vctx.Location = cfg.Location
	vctx.IntakeURL = cfg.IntakeURL
	vctx.Forwarding = cfg.Forwarding
	a := &App{cfg: cfg, vctx: vctx, keys: vctx.Keys, helpModel: help.New(), width: 80, height: 24}
	a.cfg.Context, a.stopBackground = context.WithCancel(cfg.Context)
	a.tabs = []views.Screen{
		views.NewReservations(vctx),
		views.NewTransactions(vctx),
		views.NewPushes(vctx, cfg.ListenAddr),
		logs.NewAudit(vctx),
		logs.NewGatewayLog(vctx),
		views.NewAttention(vctx),
	}
	for _, v := range cfg.Views[:min(len(cfg.Views), maxViews)] {
		a.tabs = append(a.tabs, views.NewReservationView(vctx, v.Name, v.Filter))
	}
	a.stacks = make([][]views.Screen, len(a.tabs))
	if cfg.ReadOnly {
		for _, b := range a.changingBindings() {
			b.SetEnabled(false)
		}
	}
	a.styleHelp()
	a.layout()
	return a
}

// changingBindings are the keys of actions that change something.
func (a *App) changingBindings() []*key.Binding {
	k := a.keys
	return []*key.Binding{&k.NewReservation, &k.Capture, &k.Cancel, &k.Update, &k.Refund, &k.GiftCardPay, &k.Resolve, &k.Resend, &k.Batch}
}

func (a *App) styleHelp() {
	t := a.vctx.Theme
	a.helpModel.Styles = help.Styles{
		ShortKey: t.HelpKey, ShortDesc: t.Muted, ShortSeparator: t.Muted, Ellipsis: t.Muted,
		FullKey: t.HelpKey, FullDesc: t.HelpDesc, FullSeparator: t.Muted,
	}
}

// Init loads the cache and starts listening for its changes.
func (a *App) Init() tea.Cmd {
	a.changes, a.unsubscribe = a.cfg.Store.Subscribe()
	cmds := []tea.Cmd{tea.RequestBackgroundColor, waitChange(a.changes, time.Now, time.Time{}, a.streamWindow(), a.streamWindow()), a.loadAll(), ageTick()}
	cmds = append(cmds, a.cfg.Startup...)
	return tea.Batch(cmds...)
}

// Close ends the cache subscription and the background reads.
func (a *App) Close() {
	a.stopBackground()
	if a.unsubscribe != nil {
		a.unsubscribe()
	}
}

// warmer is a store that can read its lists' search blocks ahead of the
// first filter (bbolt: store.DB.WarmLists).
type warmer interface {
	WarmLists(ctx context.Context) error
}

// warmDelay lets the reads after the first frame go first (the attention
// tab's rows, the other tabs): the warm-up reads a cold file's search
// blocks (~320 MB for a million reservations) and would otherwise compete
// with them for the disk. It starts once the reservations list's first
// page has been answered (reload, afterFirstPage).
const warmDelay = 300 * time.Millisecond

// warmLists reads the lists' search blocks in the background once the
// first frame is up, so that the operator's first filter on a cold start
// does not wait for the disk. Best effort: a failure here only means the
// first filter reads from the disk as it would have, and the filter itself
// reports any real error.
func (a *App) warmLists() tea.Cmd {
	w, ok := a.cfg.Store.(warmer)
	if !ok {
		return nil
	}
	ctx := a.cfg.Context
	return a.vctx.After(warmDelay, func(time.Time) tea.Msg {
		_ = w.WarmLists(ctx)
		return nil
	})
}

func (a *App) top() views.Screen {
	if s := a.stacks[a.active]; len(s) > 0 {
		return s[len(s)-1]
	}
	return a.tabs[a.active]
}

// bodyHeight is what is left for the screen between the tab bar and the
// status bar and footer.
func (a *App) bodyHeight() int { return max(a.height-3, 3) }

func (a *App) layout() {
	for _, s := range a.tabs {
		s.SetSize(a.width, a.bodyHeight())
	}
	for _, st := range a.stacks {
		for _, s := range st {
			s.SetSize(a.width, a.bodyHeight())
		}
	}
	for _, d := range a.dialogs {
		w, h := a.dialogSize()
		d.SetSize(w, h)
	}
	a.helpModel.SetWidth(a.width)
}

// Update routes a message: dialogs see it first, then the overlays, the
// global keys, and the screen on top.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	a.sameFrame = false
	if a.held > 0 {
		switch m := msg.(type) {
		case tea.KeyPressMsg:
			if m.String() == "ctrl+c" {
				return a, a.quit(m.String())
			}
			a.waiting = append(a.waiting, msg)
			return a, nil
		case tea.PasteMsg:
			a.waiting = append(a.waiting, msg)
			return a, nil
		}
	}
	// Operations and pushes pass the push watch on their way.
	switch m := msg.(type) {
	case forms.ResultMsg:
		if m.Err == nil {
			a.pushWatch.expect(m.Result, a.cfg.Now())
		}
		defer a.landed()
	case views.BatchRunIntent:
		a.batchRuns++
	case views.BatchDoneMsg:
		a.batchRuns = max(a.batchRuns-1, 0)
		defer a.landed()
	case views.PushRowsMsg:
		for _, r := range m.Rows {
			if r.Push != nil {
				a.pushWatch.arrived(r.Push.Key)
			}
		}
	}
	switch msg := msg.(type) {
	case heldMsg:
		return a, a.unhold(msg)
	case ageTickMsg:
		// The frame drawn after this message shows the ages (AGE, LEFT,
		// the attention view's deadlines) at the new time.
		if n := a.pushWatch.late(a.cfg.Now()); n > 0 && !a.pushWatch.warned {
			a.pushWatch.warned = true
			a.status = views.StatusMsg{Level: views.LevelWarn, Text: fmt.Sprintf(
				"No push has arrived for %d operation(s) after %s: does the gateway push to this console's listener (%s/push)? "+
					"A standalone sandbox: start it with --push-url, or give the console --push-url.", n, pushWait, a.cfg.ListenAddr)}
		} else {
			// Nothing but the clock moved: the frame before holds until
			// an age on it changes.
			a.sameFrame = a.tickChangesNothing()
		}
		return a, tea.Batch(ageTick(), a.pollDeliveries())
	case tea.WindowSizeMsg:
		if msg.Width <= 0 || msg.Height <= 0 {
			// A terminal of no size (the first window of "ssh -tt" from
			// a script, sent after the size the server chose for it)
			// keeps the last size: drawn at 0×0 the console shows nothing
			// until a resize that never comes.
			return a, nil
		}
		a.width, a.height = msg.Width, msg.Height
		a.layout()
		return a, nil
	case tea.BackgroundColorMsg:
		*a.vctx.Theme = *theme.New(msg.IsDark())
		a.styleHelp()
		return a, nil
	case changeMsg:
		a.sessionPushes += msg.Change.Pushes + msg.Change.Rejected
		a.sameFrame = true // the count shows with the reload's frame
		return a, tea.Batch(waitChange(a.changes, time.Now, time.Now(), a.streamWindow(), a.growStream(msg.Window)), a.reloadAsOne(msg))
	case reloadedMsg:
		return a, a.updateReloaded(msg)
	case auditMsg:
		if msg.err != nil {
			a.status = views.StatusMsg{Level: views.LevelError, Text: "audit log: " + msg.err.Error()}
		}
		a.tabs[TabAudit].(*logs.Audit).SetEntries(msg.entries)
		return a, nil
	case exchangesMsg:
		if msg.err != nil {
			a.status = views.StatusMsg{Level: views.LevelError, Text: "gateway log: " + msg.err.Error()}
		}
		a.tabs[TabGateway].(*logs.GatewayLog).SetExchanges(msg.entries)
		return a, nil
	case storeClosedMsg:
		return a, nil
	case countsMsg:
		a.counts = msg.Counts
		return a, nil
	case views.StatusMsg:
		a.status = msg
		return a, nil
	case pageMsg:
		return a, a.page(msg)
	case openDialogMsg:
		return a, a.pushDialog(msg.Dialog)
	}
	if cmd, ok := a.dialogMsg(msg); ok {
		return a, cmd
	}
	if i, ok := msg.(views.Intent); ok {
		return a, a.intent(i)
	}
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		cmd := a.key(msg)
		if a.takesText() {
			// The key typed into a text field, or opened one: it opened
			// nothing the next key must wait for. What it started (the
			// cursor's blink, the filter's read) keeps no key waiting.
			return a, cmd
		}
		return a, a.hold(cmd)
	case tea.MouseWheelMsg:
		if a.help || a.palette != nil || len(a.dialogs) > 0 {
			return a, nil
		}
		return a, a.top().Update(msg)
	case tea.PasteMsg:
		if a.palette != nil {
			a.palette.paste(msg.Content)
			return a, nil
		}
		if len(a.dialogs) == 0 {
			return a, a.top().Update(msg)
		}
		return a, nil
	}
	cmd := a.broadcast(msg)
	a.maybeOpenAttention()
	if len(a.afterFirstPage) > 0 {
		cmd = tea.Batch(cmd, a.firstPageAnswered())
	}
	return a, cmd
}

// attention is the attention tab.
func (a *App) attention() *views.Attention { return a.tabs[TabAttention].(*views.Attention) }

// maybeOpenAttention opens the console on the attention tab the first time
// it has something, unless the operator has moved already.
func (a *App) maybeOpenAttention() {
	if a.attnDone || a.cfg.NoAttentionStart {
		return
	}
	if a.active != TabReservations || len(a.stacks[a.active]) > 0 || len(a.dialogs) > 0 || a.help || a.palette != nil {
		a.attnDone = true
		return
	}
	if a.attention().Count() > 0 {
		a.active = TabAttention
		a.attnDone = true
	}
}

// tabOrder is the order of the tab bar and of tab/shift+tab: the attention
// tab first when it has anything (or is open), left out otherwise.
func (a *App) tabOrder() []int {
	order := []int{TabReservations, TabTransactions, TabPushes, TabAudit, TabGateway}
	if a.active == TabAttention || a.attention().Count() > 0 {
		order = append([]int{TabAttention}, order...)
	}
	for i := TabAttention + 1; i < len(a.tabs); i++ {
		order = append(order, i) // the saved views
	}
	return order
}

func (a *App) stepTab(d int) tea.Cmd {
	order := a.tabOrder()
	i := slices.Index(order, a.active)
	return a.switchTab(order[(i+d+len(order))%len(order)])
}

// ageTickMsg comes once a second so the ages tick while nobody types; it
// draws a frame only when the clock changed something on it
// (frameclock.go).
type ageTickMsg struct{}

func ageTick() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return ageTickMsg{} })
}

// takesText reports whether the keys go to a text field of the screen on
// top (a filter prompt, the batch page's path) and nothing covers it.
// Keys that stay in a text field are not held: a screen that takes text
// opens something only with a key after which it takes text no more.
func (a *App) takesText() bool {
	return !a.help && a.palette == nil && len(a.dialogs) == 0 && a.top().Capturing()
}

// heldMsg carries back what a held command returned.
type heldMsg struct{ msg tea.Msg }

// hold runs what a key started while the keys typed after it wait. A key's
// effect comes back as a message (c asks for the capture form, the form is
// loaded, then opened); keys typed faster than that (a scanner after c, a
// paste, a fast typist) would otherwise reach the list under the form and
// fire its commands. They are kept and handed out, in order, once the
// effect has landed.
func (a *App) hold(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	a.held++
	return func() tea.Msg { return heldMsg{cmd()} }
}

// unhold takes a held command's message: a batch is held part by part, an
// intent is handled and the load it starts is held too; then, when nothing
// is held any more, the waiting keys go on, in order.
func (a *App) unhold(m heldMsg) tea.Cmd {
	a.held--
	var cmds []tea.Cmd
	switch inner := m.msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range inner {
			cmds = append(cmds, a.hold(c))
		}
	case views.Intent:
		_, c := a.Update(inner)
		cmds = append(cmds, a.hold(c)) // the load that opens its form is held too
	case openDialogMsg, pageMsg, views.StatusMsg, tea.KeyPressMsg:
		_, c := a.Update(inner)
		cmds = append(cmds, c)
	default:
		// The program's own messages (quit, clipboard, window title) and
		// anything else go back to the runtime as they were.
		cmds = append(cmds, func() tea.Msg { return inner })
	}
	for a.held == 0 && len(a.waiting) > 0 {
		next := a.waiting[0]
		a.waiting = a.waiting[1:]
		_, c := a.Update(next)
		cmds = append(cmds, c)
	}
	return tea.Batch(cmds...)
}

// broadcast sends a data message to every screen.
func (a *App) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for i, s := range a.tabs {
		cmds = append(cmds, s.Update(msg))
		for _, p := range a.stacks[i] {
			cmds = append(cmds, p.Update(msg))
		}
	}
	return tea.Batch(cmds...)
}

func (a *App) key(msg tea.KeyPressMsg) tea.Cmd {
	k := a.keys
	if msg.String() == "ctrl+c" {
		return a.quit("ctrl+c")
	}
	if a.help {
		a.help = false
		return nil
	}
	if a.palette != nil {
		return a.paletteKey(msg)
	}
	top := a.top()
	if top.Capturing() {
		return top.Update(msg)
	}
	a.status = views.StatusMsg{}
	a.attnDone = true // the operator moves: no jump to the attention tab any more
	switch {
	case key.Matches(msg, k.Quit):
		return a.quit(msg.String())
	case key.Matches(msg, k.Help):
		a.help = true
		return nil
	case key.Matches(msg, k.Palette):
		a.palette = newPalette(a)
		return nil
	case key.Matches(msg, k.NextTab):
		return a.stepTab(1)
	case key.Matches(msg, k.PrevTab):
		return a.stepTab(-1)
	case key.Matches(msg, k.Tab0):
		return a.switchTab(TabAttention)
	case key.Matches(msg, k.Tab1):
		return a.switchTab(0)
	case key.Matches(msg, k.Tab2):
		return a.switchTab(1)
	case key.Matches(msg, k.Tab3):
		return a.switchTab(2)
	case key.Matches(msg, k.Tab4):
		return a.switchTab(3)
	case key.Matches(msg, k.Tab5):
		return a.switchTab(4)
	case len(msg.Text) == 1 && msg.Text >= "6" && msg.Text <= "9" && int(msg.Text[0]-'6')+TabAttention+1 < len(a.tabs):
		return a.switchTab(int(msg.Text[0]-'6') + TabAttention + 1) // a saved view
	case key.Matches(msg, k.Batch):
		if !a.allows(access.Batch) {
			a.status = views.StatusMsg{Level: views.LevelWarn, Text: a.whoMay(access.Batch)}
			return nil
		}
		return a.openBatch()
	case key.Matches(msg, k.Approvals):
		return a.openApprovals()
	case key.Matches(msg, k.Money):
		return a.openMoney()
	case key.Matches(msg, k.Deliveries):
		return a.openDeliveries("")
	case key.Matches(msg, k.Refresh):
		a.status = views.StatusMsg{Text: "reloaded from the cache"}
		return a.reload(store.Change{Overflow: true})
	case key.Matches(msg, k.Back) && len(a.stacks[a.active]) > 0:
		st := a.stacks[a.active]
		a.stacks[a.active] = st[:len(st)-1]
		return nil
	}
	if len(a.stacks[a.active]) == 0 && (key.Matches(msg, k.ExportCSV) || key.Matches(msg, k.ExportJSON)) {
		format := "csv"
		if key.Matches(msg, k.ExportJSON) {
			format = "json"
		}
		// The log tabs export what their filter keeps, as every list does.
		switch a.active {
		case TabAudit:
			es, err := a.tabs[TabAudit].(*logs.Audit).Visible()
			if err != nil {
				a.status = views.StatusMsg{Level: views.LevelWarn, Text: "nothing exported: " + views.FilterErrorText(err)}
				return nil
			}
			return a.export(views.AuditExport(es, format))
		case TabGateway:
			xs, err := a.tabs[TabGateway].(*logs.GatewayLog).Visible()
			if err != nil {
				a.status = views.StatusMsg{Level: views.LevelWarn, Text: "nothing exported: " + views.FilterErrorText(err)}
				return nil
			}
			return a.export(views.ExchangeExport(xs, format))
		}
	}
	if why := a.refusedKey(msg); why != "" {
		a.status = views.StatusMsg{Level: views.LevelWarn, Text: why}
		return nil
	}
	if a.cfg.ReadOnly && a.refusedInReadOnly(msg, top) {
		a.status = views.StatusMsg{Level: views.LevelWarn, Text: "read-only console: " + a.bindingDesc(msg) + " is off (--read-only, or a database role that may only read)"}
		return nil
	}
	return top.Update(msg)
}

// refusedInReadOnly reports whether the key is a changing action of the
// screen (the bindings are disabled, so the screen would ignore it; the
// console says why instead).
func (a *App) refusedInReadOnly(msg tea.KeyPressMsg, s views.Screen) bool {
	for _, b := range a.changingBindings() {
		for _, k := range b.Keys() {
			if msg.String() == k {
				return true
			}
		}
	}
	return false
}

func (a *App) bindingDesc(msg tea.KeyPressMsg) string {
	for _, b := range a.changingBindings() {
		for _, k := range b.Keys() {
			if msg.String() == k {
				return b.Help().Desc
			}
		}
	}
	return msg.String()
}

func (a *App) switchTab(i int) tea.Cmd {
	a.active = i
	return nil
}

// View draws the console.
func (a *App) View() tea.View {
	if !a.sameFrame || a.lastFrame == "" {
		now := a.cfg.Now()
		a.lastFrame = a.render()
		a.renders++
		a.frameUntil = a.frameUntilAfterRender(now)
	}
	v := tea.NewView(a.lastFrame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "paydesk"
	return v
}

// render draws the whole frame as a string (the goldens compare it).
func (a *App) render() string {
	body := a.top().View()
	switch {
	case len(a.dialogs) > 0:
		body = a.dialogView()
	case a.palette != nil:
		body = a.paletteView()
	case a.help:
		body = a.helpView()
	}
	body = fitBlock(body, a.width, a.bodyHeight())
	return a.tabBar() + "\n" + body + "\n" + a.statusBar() + "\n" + a.footer()
}
