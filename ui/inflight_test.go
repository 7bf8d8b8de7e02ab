package ui

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/internal/pgtest"
	"paydesk/store"
	"paydesk/views"
)

// holdingGateway is a gateway whose requests hang until released (a slow
// gateway mid-capture), or fail after sending (a dropped connection). It
// can be asked about transactions and knows none.
type holdingGateway struct {
	arrived chan struct{} // one per request that reached it
	release chan struct{} // closed: the hanging requests end
	fail    bool          // answer at once with an unknown outcome
}

func (g *holdingGateway) Do(ctx context.Context, req *api.Request) (*api.Response, error) {
	g.arrived <- struct{}{}
	if g.fail {
		return nil, &api.OutcomeUnknownError{Action: "Pay", Err: errors.New("connection reset by peer")}
	}
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	return nil, &api.OutcomeUnknownError{Action: "Pay", Err: errors.New("the console went away")}
}

func (g *holdingGateway) Rules() api.Rules { return api.Rules{} }

func (g *holdingGateway) StatusFor(ctx context.Context, action, key string) (*api.Response, error) {
	return nil, api.ErrUnknownTransaction
}

func (g *holdingGateway) InvoiceInfo(ctx context.Context, invoice string) (*api.InvoiceInfo, error) {
	return &api.InvoiceInfo{Invoice: invoice}, nil
}

// watchModel runs the console and tells a test when its frame first
// satisfies a condition: no polling, no sleeping — the check runs after
// every message the console takes.
type watchModel struct {
	a    *App
	want func(frame string) bool
	hit  chan string
}

// watchMsg sets the condition (inside the program, so nothing races).
type watchMsg struct {
	want func(string) bool
	hit  chan string
}

func (m *watchModel) Init() tea.Cmd { return m.a.Init() }

func (m *watchModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	if w, ok := msg.(watchMsg); ok {
		m.want, m.hit = w.want, w.hit
	} else {
		_, cmd = m.a.Update(msg)
	}
	if m.want != nil {
		if f := ansi.Strip(m.a.render()); m.want(f) {
			m.hit <- f
			m.want = nil
		}
	}
	return m, cmd
}

func (m *watchModel) View() tea.View { return m.a.View() }

type inflightEnv struct {
	t  *testing.T
	db *store.DB
	gw *holdingGateway
	tm *teatest.TestModel
	r  *store.Reservation
}

// newInflightEnv is the console over a cache with one reserved
// reservation and a gateway that holds (or drops) its requests.
func newInflightEnv(t *testing.T, fail bool, opts ...func(*Config)) *inflightEnv {
	t.Helper()
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "paydesk.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	r := &store.Reservation{Key: "F1F1F1F1F1F1F1F1F1F1F1F1F1F1F1F1", ReservationNumber: "R-INFLIGHT-1", Invoice: "T-INFLIGHT-1",
		Currency: "EUR", LinesKnown: true, Created: time.Now().Add(-24 * time.Hour),
		Status: store.Status{Code: api.StatusSuccess}, CustomerName: "Jan Jansen", Country: "NL",
		Original: store.Update{Articles: []api.Article{
			{Number: "SHOE-42", Title: "Trail running shoe", Price: decimal.RequireFromString("59.95"), Vat: decimal.RequireFromString("21"), Quantity: 2},
			{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: decimal.RequireFromString("4.95"), Vat: decimal.RequireFromString("21"), Quantity: 1},
		}}}
	if err := db.PutReservations(t.Context(), []*store.Reservation{r}); err != nil {
		t.Fatalf("PutReservations: %v", err)
	}
	gw := &holdingGateway{arrived: make(chan struct{}, 8), release: make(chan struct{}), fail: fail}
	t.Cleanup(func() {
		select {
		case <-gw.release:
		default:
			close(gw.release)
		}
	})
	svc, err := ops.New(ops.Config{Gateway: gw, Store: db, Mode: ops.ModeSandbox, Operator: "inflight-tester"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := Config{Store: db, Ops: svc, Mode: ops.ModeSandbox, Location: time.UTC, NoAttentionStart: true, Context: ctx}
	for _, o := range opts {
		o(&cfg)
	}
	app := New(cfg)
	t.Cleanup(app.Close)
	tm := teatest.NewTestModel(t, &watchModel{a: app}, teatest.WithInitialTermSize(120, 40))
	return &inflightEnv{t: t, db: db, gw: gw, tm: tm, r: r}
}

// wait blocks until the console's frame satisfies ok (a generous
// deadline only fails a stuck test).
func (e *inflightEnv) wait(what string, ok func(string) bool) string {
	e.t.Helper()
	hit := make(chan string, 1)
	e.tm.Send(watchMsg{want: ok, hit: hit})
	select {
	case f := <-hit:
		return f
	case <-time.After(30 * time.Second):
		e.t.Fatalf("the console never showed %s:\n%s", what, ansi.Strip(e.lastFrame()))
		return ""
	}
}

// lastFrame is the frame now, for a failure's message.
func (e *inflightEnv) lastFrame() string {
	hit := make(chan string, 1)
	e.tm.Send(watchMsg{want: func(string) bool { return true }, hit: hit})
	select {
	case f := <-hit:
		return f
	case <-time.After(5 * time.Second):
		return "(the console does not answer)"
	}
}

func (e *inflightEnv) waitText(texts ...string) string {
	e.t.Helper()
	return e.wait(strings.Join(texts, " · "), func(f string) bool {
		// The dialog's frame and its wrapped lines do not count.
		flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╭", " ", "╰", " ", "─", " ").Replace(f)), " ")
		for _, s := range texts {
			if !strings.Contains(flat, s) {
				return false
			}
		}
		return true
	})
}

func (e *inflightEnv) keys(names ...string) {
	for _, n := range names {
		switch n {
		case "ctrl+c":
			e.tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
		default:
			e.tm.Send(flowKey(n))
		}
	}
}

// sendCapture opens the capture form, chooses all that remains and sends;
// it returns once the request has reached the gateway.
func (e *inflightEnv) sendCapture() {
	e.t.Helper()
	e.tm.Send(views.CaptureIntent{ReservationKey: e.r.Key})
	e.waitText("Capture shipment · reservation R-INFLIGHT-1")
	e.keys("a", "enter", "enter", "tab", "enter")
	select {
	case <-e.gw.arrived:
	case <-time.After(30 * time.Second):
		e.t.Fatalf("the capture never reached the gateway:\n%s", e.lastFrame())
	}
	e.waitText("Sending…")
}

// TestQuitWhileSendingAsks: ctrl+c and q while a capture is on its way
// never quit without a word — before, ctrl+c quit at once (exit 0) and q
// did nothing silently. The console says what quitting now means; the
// second ctrl+c quits, leaving the operation pending (the next start
// makes it "outcome unknown").
func TestQuitWhileSendingAsks(t *testing.T) {
	for _, first := range []string{"ctrl+c", "q"} {
		t.Run(first, func(t *testing.T) {
			e := newInflightEnv(t, false)
			e.sendCapture()
			e.keys(first)
			e.waitText("An operation is being sent: wait for its answer", "ctrl+c again", "outcome unknown and shown after restart")
			if first == "q" {
				// q never quits while sending; the ctrl+c after it is the
				// first one, it asks again.
				e.keys("ctrl+c")
				e.waitText("An operation is being sent")
			}
			e.keys("ctrl+c")
			e.tm.WaitFinished(t, teatest.WithFinalTimeout(30*time.Second))
			open, err := e.db.Ops(t.Context(), store.OpPending)
			if err != nil || len(open) != 1 {
				t.Fatalf("pending operations %d (%v), want the capture left on its way", len(open), err)
			}
		})
	}
}

// TestQuitWhileSendingWaitsForTheAnswer: after the warning, the answer
// comes; nothing is in flight any more, the warning goes and one ctrl+c
// quits.
func TestQuitWhileSendingWaitsForTheAnswer(t *testing.T) {
	e := newInflightEnv(t, false)
	e.sendCapture()
	e.keys("ctrl+c")
	e.waitText("An operation is being sent")
	close(e.gw.release)
	f := e.waitText("OUTCOME UNKNOWN")
	if strings.Contains(f, "An operation is being sent") {
		t.Fatalf("the warning stays after the answer:\n%s", f)
	}
	e.keys("ctrl+c")
	e.tm.WaitFinished(t, teatest.WithFinalTimeout(30*time.Second))
}

// TestResolveFormAsksTheGateway: an unknown outcome is settled from the
// console by asking the gateway (what `paydesk resolve --ask` does): here
// the gateway holds nothing for the request, so it was not processed and
// the operation fails — nothing is sent again.
func TestResolveFormAsksTheGateway(t *testing.T) {
	e := newInflightEnv(t, true)
	e.sendCaptureUnknown()
	open, err := e.db.Ops(t.Context(), store.OpOutcomeUnknown)
	if err != nil || len(open) != 1 {
		t.Fatalf("unknown outcomes %d (%v), want 1", len(open), err)
	}
	id := open[0].ID
	e.keys("enter") // close the result
	e.wait("the list again", func(f string) bool { return !strings.Contains(f, "Capture shipment") })
	e.tm.Send(views.ResolveIntent{OpID: id}) // o on the attention tab
	e.waitText("Resolve operation", "Settle by", "asking the gateway")
	e.keys("enter", "enter", "tab", "enter")
	e.waitText("Operation 1 (failed)", "asked the gateway: it holds no transaction for this request")
	op, err := e.db.Op(t.Context(), id)
	if err != nil || op.State != store.OpFailed {
		t.Fatalf("operation after asking: %+v %v, want failed", op, err)
	}
	if n := len(e.gw.arrived); n != 0 {
		t.Fatalf("%d more requests reached the gateway: asking must not send again", n)
	}
}

// sendCaptureUnknown sends a capture whose connection drops: outcome
// unknown.
func (e *inflightEnv) sendCaptureUnknown() {
	e.t.Helper()
	e.tm.Send(views.CaptureIntent{ReservationKey: e.r.Key})
	e.waitText("Capture shipment · reservation R-INFLIGHT-1")
	e.keys("a", "enter", "enter", "tab", "enter")
	<-e.gw.arrived
	e.waitText("OUTCOME UNKNOWN")
}

// TestConsoleScanAffixes: the console hands the configured scanner prefix
// and suffix to the capture form, which takes them off every scan.
func TestConsoleScanAffixes(t *testing.T) {
	e := newInflightEnv(t, false, func(c *Config) { c.ScanPrefix, c.ScanSuffix = "]C1", "#" })
	e.tm.Send(views.CaptureIntent{ReservationKey: e.r.Key})
	e.waitText("Capture shipment · reservation R-INFLIGHT-1")
	e.tm.Send(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	for _, r := range "]C1SHIP#" {
		e.tm.Send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	e.keys("enter")
	e.waitText("1 ✓ counted SHIP · Shipping: 1 of 1")
}

// TestQuitWhileABatchRuns: a running batch is an operation in flight too:
// q and the first ctrl+c say so; once the batch is done, ctrl+c quits.
func TestQuitWhileABatchRuns(t *testing.T) {
	a := New(Config{Store: fixture(), Mode: ops.ModeSandbox, Location: time.UTC, NoAttentionStart: true})
	quits := func(cmd tea.Cmd) bool {
		if cmd == nil {
			return false
		}
		msg := cmd()
		if h, ok := msg.(heldMsg); ok { // a key's command comes back through the key hold
			msg = h.msg
		}
		_, ok := msg.(tea.QuitMsg)
		return ok
	}
	ctrlC := tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	a.Update(views.BatchRunIntent{Path: filepath.Join(t.TempDir(), "manifest.csv")}) // its run command is not run here
	for _, k := range []tea.KeyPressMsg{{Code: 'q', Text: "q"}, ctrlC} {
		if _, cmd := a.Update(k); quits(cmd) {
			t.Fatalf("%s quit while the batch runs", k)
		}
		if a.status.Text != inFlightText {
			t.Fatalf("after %s the status says %q", k, a.status.Text)
		}
	}
	a.Update(views.BatchDoneMsg{})
	if a.quitArmed || a.status.Text == inFlightText {
		t.Fatalf("the warning stays after the batch is done (armed %v, status %q)", a.quitArmed, a.status.Text)
	}
	if _, cmd := a.Update(ctrlC); !quits(cmd) {
		t.Fatalf("ctrl+c does not quit once nothing is in flight (batches %d, held %d, armed %v)", a.batchRuns, a.held, a.quitArmed)
	}
}
