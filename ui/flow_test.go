package ui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"paydesk/internal/pgtest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/ops"
	"paydesk/pushlistener"
	"paydesk/store"
)

// The flows in this file drive the whole console with key presses, as an
// operator would: the real App with its forms, the embedded sandbox on an
// httptest server, the real push listener on another (the sandbox pushes
// to it), the real cache in a temp dir and the operations layer. After
// every step they check the cache (ledger, state, transactions, pushes)
// and the screen.

// flowCreds are the embedded sandbox's test credentials.
var flowCreds = api.Credentials{WebsiteKey: "FLOWTESTKEY", SecretKey: "flow-test-secret-not-real"}

const (
	flowWidth, flowHeight = 130, 48
	// flowWait bounds every wait for the screen or the cache: generous, so
	// a loaded machine does not fail the test, and still finite.
	flowWait = 2 * time.Minute
)

// flowScreen keeps the frame the program drew last (through the ASCII
// profile, escape codes stripped), numbered, and counts the key presses
// the console has handled.
type flowScreen struct {
	app *App

	mu    sync.Mutex
	seq   int
	frame string
	keys  int
	// wake is closed (and replaced) whenever a key is handled or the
	// frame changes: waits for a key wake on it instead of polling.
	wake chan struct{}
}

// changed is closed at the next handled key or new frame.
func (s *flowScreen) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// signalLocked wakes the waiters of changed; s.mu is held.
func (s *flowScreen) signalLocked() {
	if s.wake != nil {
		close(s.wake)
	}
	s.wake = make(chan struct{})
}

// flowModel is the console as the program runs it, with the screen
// recorder around it.
type flowModel struct{ s *flowScreen }

func (m flowModel) Init() tea.Cmd { return m.s.app.Init() }

func (m flowModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.s.app.Update(msg)
	if _, ok := msg.(tea.KeyPressMsg); ok {
		m.s.mu.Lock()
		m.s.keys++
		m.s.signalLocked()
		m.s.mu.Unlock()
	}
	return m, cmd
}

func (m flowModel) View() tea.View {
	v := m.s.app.View()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
	_, _ = w.WriteString(v.Content)
	text := ansi.Strip(b.String())
	m.s.mu.Lock()
	if text != m.s.frame {
		m.s.frame = text
		m.s.seq++
		m.s.signalLocked()
	}
	m.s.mu.Unlock()
	return v
}

func (s *flowScreen) current() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frame, s.seq
}

func (s *flowScreen) handledKeys() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys
}

// frameSep separates frames in what a frameReader yields.
const frameSep = "\x00--frame--\x00"

// frameReader yields every new frame once, after a separator, so
// teatest.WaitFor reads the screen as it reads a program's output.
type frameReader struct {
	s    *flowScreen
	last int
	buf  []byte
}

func (r *frameReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		f, seq := r.s.current()
		if seq == r.last {
			return 0, io.EOF
		}
		r.last = seq
		r.buf = []byte(frameSep + f)
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// lastFrame is the newest frame of what a frameReader yielded.
func lastFrame(b []byte) string {
	s := string(b)
	if i := strings.LastIndex(s, frameSep); i >= 0 {
		return s[i+len(frameSep):]
	}
	return s
}

// lastFrameTB reports a failed wait with the last frame only, not every
// frame the wait saw.
type lastFrameTB struct {
	testing.TB
	what string
	last *string
}

func (l lastFrameTB) Fatal(args ...any) {
	l.TB.Helper()
	l.TB.Fatalf("waiting for %s: not on screen within %s; last frame:\n%s", l.what, flowWait, *l.last)
}

// flowEnv is the console wired to the real parts.
type flowEnv struct {
	t        *testing.T
	ctx      context.Context
	sb       *sandbox.Sandbox
	gateway  *httptest.Server
	listener *httptest.Server
	db       *store.DB
	screen   *flowScreen
	tm       *teatest.TestModel

	requests atomic.Int64 // requests that reached /json/Transaction or /json/DataRequest
	pushesOK atomic.Int64 // pushes the listener stored and answered 200
}

func newFlowEnv(t *testing.T) *flowEnv {
	t.Helper()
	return newFlowEnvWith(t, false)
}

// newFlowEnvWith is newFlowEnv; withResend gives the console the sandbox
// as its embedded one (R resends).
func newFlowEnvWith(t *testing.T, withResend bool) *flowEnv {
	t.Helper()
	e := &flowEnv{t: t, ctx: context.Background()}
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "paydesk.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	e.db = db
	ln, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(flowCreds), Logf: t.Logf,
		Observe: func(ev pushlistener.Event) {
			if ev.HTTPStatus == http.StatusOK {
				e.pushesOK.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	e.listener = httptest.NewServer(ln)

	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{flowCreds}, Seed: 7,
		RetryBase: 50 * time.Millisecond, Merchant: api.Merchant{PartialRefunds: []api.Provider{api.ProviderB}}})
	if err != nil {
		t.Fatal(err)
	}
	e.sb = sb
	e.gateway = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := strings.TrimSuffix(r.URL.Path, "/"); p == api.PathTransaction || p == api.PathDataRequest {
			e.requests.Add(1)
		}
		sb.ServeHTTP(w, r)
	}))
	sb.SetPushURL(e.listener.URL + "/push")
	runCtx, stopSandbox := context.WithCancel(context.Background())
	sbDone := make(chan error, 1)
	go func() { sbDone <- sb.Run(runCtx) }()

	var exMu sync.Mutex
	client, err := api.NewClient(api.Config{BaseURL: e.gateway.URL, Credentials: flowCreds, Timeout: 10 * time.Second,
		Observe: func(x api.Exchange) {
			exMu.Lock()
			defer exMu.Unlock()
			if _, err := db.AppendExchange(t.Context(), store.ExchangeFrom(x)); err != nil {
				t.Errorf("AppendExchange: %v", err)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	// CustomerStep is left nil: the service presses the sandbox checkout
	// page's approve button over HTTP, as the customer's browser would.
	svc, err := ops.New(ops.Config{Gateway: client, Store: db, Mode: ops.ModeSandbox, Operator: "flow-tester", Merchant: api.Merchant{PartialRefunds: []api.Provider{api.ProviderB}}})
	if err != nil {
		t.Fatal(err)
	}

	appCtx, stopApp := context.WithCancel(context.Background())
	e.screen = &flowScreen{}
	cfg := Config{Store: db, Ops: svc, Mode: ops.ModeSandbox, GatewayURL: e.gateway.URL,
		ListenAddr: strings.TrimPrefix(e.listener.URL, "http://"), PartialRefunds: true, Currency: "EUR",
		Location: time.UTC, ExportDir: t.TempDir(), FixtureDir: t.TempDir(), Context: appCtx}
	if withResend {
		cfg.Sandbox = sb
	}
	e.screen.app = New(cfg)
	e.tm = teatest.NewTestModel(t, flowModel{e.screen}, teatest.WithInitialTermSize(flowWidth, flowHeight),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))

	t.Cleanup(func() {
		_ = e.tm.Quit()
		e.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		e.screen.app.Close()
		stopApp()
		e.gateway.Close()
		stopSandbox()
		<-sbDone
		_ = sb.Close()
		e.listener.Close()
		_ = db.Close()
	})
	e.waitText("1 Reservations", "0 reservations")
	return e
}

// ---- the screen ----

// waitScreen waits (teatest.WaitFor over the frames) until the newest
// frame satisfies ok, and returns it.
func (e *flowEnv) waitScreen(what string, ok func(frame string) bool) string {
	e.t.Helper()
	var got string
	teatest.WaitFor(lastFrameTB{TB: e.t, what: what, last: &got}, &frameReader{s: e.screen}, func(b []byte) bool {
		got = lastFrame(b)
		return ok(got)
	}, teatest.WithDuration(flowWait), teatest.WithCheckInterval(10*time.Millisecond))
	return got
}

// waitText waits until the screen shows every one of texts at once.
func (e *flowEnv) waitText(texts ...string) string {
	e.t.Helper()
	return e.waitScreen(strings.Join(texts, " + "), func(f string) bool {
		for _, s := range texts {
			if !strings.Contains(f, s) {
				return false
			}
		}
		return true
	})
}

// press sends one key and waits until the console has handled it.
func (e *flowEnv) press(name string) {
	e.t.Helper()
	before := e.screen.handledKeys()
	e.tm.Send(flowKey(name))
	deadline := time.NewTimer(flowWait)
	defer deadline.Stop()
	for {
		wake := e.screen.changed()
		if e.screen.handledKeys() > before {
			return
		}
		select {
		case <-wake:
		case <-deadline.C:
			e.t.Fatalf("key %q not handled within %s", name, flowWait)
		}
	}
}

// typeText types s one key at a time.
func (e *flowEnv) typeText(s string) {
	e.t.Helper()
	for _, r := range s {
		e.press(string(r))
	}
}

// flowKey is the key event for a key name ("enter", "x", "backspace").
func flowKey(name string) tea.KeyPressMsg {
	named := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "backspace": tea.KeyBackspace,
		"left": tea.KeyLeft, "right": tea.KeyRight, "up": tea.KeyUp, "down": tea.KeyDown}
	if r, ok := named[name]; ok {
		return tea.KeyPressMsg{Code: r}
	}
	r := []rune(name)
	return tea.KeyPressMsg{Code: r[0], Text: name}
}

// focusedLines are the lines of the form field that has the focus (huh
// marks them with a thick bar), without the bar: the title first, then the
// hint or error, then the value ("> 2" for an input, "← NL →" for a
// select).
func focusedLines(frame string) []string {
	var out []string
	for _, l := range strings.Split(frame, "\n") {
		i := strings.Index(l, "┃")
		if i < 0 {
			continue
		}
		rest := strings.TrimRight(l[i+len("┃"):], " │…")
		out = append(out, strings.TrimSpace(rest))
	}
	return out
}

// focusedValue is the value the focused input or select shows.
func focusedValue(frame string) (string, bool) {
	for _, l := range focusedLines(frame)[min(1, len(focusedLines(frame))):] {
		switch {
		case strings.HasPrefix(l, ">"):
			return strings.TrimSpace(strings.TrimPrefix(l, ">")), true
		case strings.HasPrefix(l, "←") && strings.HasSuffix(l, "→"):
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "←"), "→")), true
		}
	}
	return "", false
}

// focus waits until the field whose title starts with title has the
// focus, and returns the frame.
func (e *flowEnv) focus(title string) string {
	e.t.Helper()
	return e.waitScreen("the focus on the field "+title, func(f string) bool {
		ls := focusedLines(f)
		return len(ls) > 0 && strings.HasPrefix(ls[0], title)
	})
}

// next presses enter on the focused field and waits for the focus to move
// to the field titled title.
func (e *flowEnv) next(title string) {
	e.t.Helper()
	e.press("enter")
	e.focus(title)
}

// setInput replaces the value of the input titled title with value and
// waits until the field shows it.
func (e *flowEnv) setInput(title, value string) {
	e.t.Helper()
	f := e.focus(title)
	cur, ok := focusedValue(f)
	if !ok {
		e.t.Fatalf("field %s shows no value line:\n%s", title, f)
	}
	for range []rune(cur) {
		e.press("backspace")
	}
	e.typeText(value)
	e.waitScreen(fmt.Sprintf("%s = %q", title, value), func(f string) bool {
		v, ok := focusedValue(f)
		return ok && v == value && strings.HasPrefix(focusedLines(f)[0], title)
	})
}

// setPassword types a PIN into the empty password input titled title and
// waits until it shows as many dots.
func (e *flowEnv) setPassword(title, value string) {
	e.t.Helper()
	e.focus(title)
	e.typeText(value)
	dots := strings.Repeat("*", len(value))
	e.waitScreen(title+" masked", func(f string) bool {
		v, ok := focusedValue(f)
		return ok && (v == dots || v == strings.Repeat("•", len(value)))
	})
}

// choose moves the inline select titled title to option.
func (e *flowEnv) choose(title, option string) {
	e.t.Helper()
	f := e.focus(title)
	for i := 0; i < 8; i++ {
		v, _ := focusedValue(f)
		if v == option {
			return
		}
		e.press("right")
		f = e.waitScreen(title+" moved from "+v, func(f string) bool {
			w, ok := focusedValue(f)
			return ok && w != v
		})
	}
	e.t.Fatalf("select %s never showed %s:\n%s", title, option, f)
}

// confirmSend waits for the confirm step, unfolds the wire detail, checks
// it shows every one of want, chooses the Send button (tab from Back) and
// presses it, and waits for the answer (the result screen).
func (e *flowEnv) confirmSend(want ...string) string {
	e.t.Helper()
	e.waitText("» [ Back ] «", "[ Send ]", "press d to show it")
	e.press("d")
	e.waitText(append([]string{"What is sent (d hides it)"}, want...)...)
	e.press("tab")
	e.waitText("» [ Send ] «")
	e.press("enter")
	return e.waitScreen("the result of the operation", func(f string) bool {
		return strings.Contains(f, "✓ Done") || strings.Contains(f, "✗ Not done") || strings.Contains(f, "OUTCOME UNKNOWN")
	})
}

// resultField reads a "Label   value" line of a form's result.
func resultField(frame, label string) string {
	re := regexp.MustCompile(`│ ` + regexp.QuoteMeta(label) + ` {2,}(\S[^│]*?)\s*│`)
	m := re.FindStringSubmatch(frame)
	if m == nil {
		return ""
	}
	return m[1]
}

// row finds the line of a table that starts (after the indent) with
// first and returns its cells as the words of the line.
func row(frame, first string) []string {
	for _, l := range strings.Split(frame, "\n") {
		fs := strings.Fields(l)
		if len(fs) > 0 && fs[0] == first {
			return fs
		}
	}
	return nil
}

// lineWith reports whether one line of the frame holds every one of parts.
func lineWith(frame string, parts ...string) bool {
	for _, l := range strings.Split(frame, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// lineCell reads one cell of the reservation page's article table: the
// row of article, the column titled column. The table's header names the
// columns after ARTICLE and TITLE; they are the last cells of the row (a
// title may hold spaces), so dropped columns do not shift the reading.
func lineCell(frame, article, column string) string {
	header := row(frame, "ARTICLE")
	cells := row(frame, article)
	if len(header) < 3 || len(cells) < len(header) {
		return ""
	}
	tail := cells[len(cells)-(len(header)-2):]
	for i, h := range header[2:] {
		if h == column {
			return tail[i]
		}
	}
	return ""
}

// lineRowOK reports whether the reservation page's row of article shows
// the ledger: reserved, captured, cancelled, refunded and left units.
func lineRowOK(frame, article string, res, capd, canc, refd, left int) bool {
	want := map[string]int{"RES": res, "CAP": capd, "CNC": canc, "REF": refd, "LEFT": left}
	for col, n := range want {
		if lineCell(frame, article, col) != fmt.Sprint(n) {
			return false
		}
	}
	return true
}

// ---- the cache ----

func (e *flowEnv) reservation(ref string) *store.Reservation {
	e.t.Helper()
	r, err := e.db.Reservation(context.Background(), ref)
	if err != nil {
		e.t.Fatalf("reservation %s: %v", ref, err)
	}
	return r
}

func (e *flowEnv) transaction(key string) *store.Transaction {
	e.t.Helper()
	tx, err := e.db.Transaction(context.Background(), key)
	if err != nil {
		e.t.Fatalf("transaction %s: %v", key, err)
	}
	return tx
}

// waitPush waits until the listener has stored a push about key, and
// checks it: signed validly, not rejected, with the transaction's status.
// (Applied or not: when the answer settled the operation first, the push
// finds the final status stored and changes nothing.)
func (e *flowEnv) waitPush(key string, code int) *store.PushRecord {
	e.t.Helper()
	ok, err := ops.NewWaiter(e.db).Push(e.ctx, key, flowWait)
	if err != nil || !ok {
		e.t.Fatalf("no push about %s within %s (err %v)", key, flowWait, err)
	}
	ps, err := e.db.PushesFor(context.Background(), key)
	if err != nil || len(ps) == 0 {
		e.t.Fatalf("pushes of %s: %v", key, err)
	}
	p := ps[len(ps)-1]
	if p.Signature != store.SignatureValid || p.Rejected || p.Status.Code != code {
		e.t.Fatalf("push of %s: signature %s rejected %v status %d (%s), want valid, stored, %d", key, p.Signature, p.Rejected, p.Status.Code, p.Ignored, code)
	}
	return p
}

func flowLine(t *testing.T, r *store.Reservation, article string) store.Line {
	t.Helper()
	for _, l := range r.Lines {
		if l.ArticleNumber == article {
			return l
		}
	}
	t.Fatalf("reservation %s has no line %s", r.ReservationNumber, article)
	return store.Line{}
}

// ledger checks one line's quantities: reserved, captured, cancelled,
// and what remains.
func (e *flowEnv) ledger(r *store.Reservation, article string, res, capd, canc, left int) {
	e.t.Helper()
	l := flowLine(e.t, r, article)
	if l.Reserved != res || l.Captured != capd || l.Cancelled != canc || l.Remaining() != left {
		e.t.Fatalf("ledger of %s: reserved %d captured %d cancelled %d left %d; want %d %d %d %d",
			article, l.Reserved, l.Captured, l.Cancelled, l.Remaining(), res, capd, canc, left)
	}
}

// agree checks that the ledger, the transaction list and the pushes tell
// one story: every transaction has its push with its amount, each partial
// capture's amount is its lines at their prices, the captured units per
// line are the ledger's, and the reservation's sums are its transactions'.
func (e *flowEnv) agree(ref string) {
	e.t.Helper()
	r := e.reservation(ref)
	txs, err := e.db.TransactionsFor(context.Background(), ref)
	if err != nil {
		e.t.Fatal(err)
	}
	captured := map[string]int{}
	capturedSum, refundedSum := decimal.Zero, decimal.Zero
	for _, tx := range txs {
		ps, err := e.db.PushesFor(context.Background(), tx.Key)
		if err != nil || len(ps) == 0 {
			e.t.Fatalf("transaction %s (%s) has no push (err %v)", tx.Key, tx.Kind, err)
		}
		if last := ps[len(ps)-1]; !last.Amount.Equal(tx.Amount) {
			e.t.Fatalf("transaction %s amount %s, its push says %s", tx.Key, tx.Amount, last.Amount)
		}
		switch tx.Kind {
		case store.KindCapture:
			capturedSum = capturedSum.Add(tx.Amount)
			sum := decimal.Zero
			for _, l := range tx.Lines {
				captured[l.ArticleNumber] += l.Quantity
				sum = sum.Add(flowLine(e.t, r, l.ArticleNumber).Price.Mul(decimal.NewFromInt(int64(l.Quantity))))
			}
			if !tx.FullCapture && !sum.Equal(tx.Amount) {
				e.t.Fatalf("capture %s amount %s, its lines add up to %s", tx.Key, tx.Amount, sum)
			}
		case store.KindRefund:
			refundedSum = refundedSum.Add(tx.Amount)
		}
	}
	for _, l := range r.Lines {
		if captured[l.ArticleNumber] != l.Captured {
			e.t.Fatalf("line %s: ledger captured %d, the captures say %d", l.ArticleNumber, l.Captured, captured[l.ArticleNumber])
		}
	}
	if !r.CapturedAmount.Equal(capturedSum) || !r.RefundedAmount.Equal(refundedSum) {
		e.t.Fatalf("reservation captured %s refunded %s; its transactions %s / %s", r.CapturedAmount, r.RefundedAmount, capturedSum, refundedSum)
	}
	if ps, err := e.db.PushesFor(context.Background(), r.Key); err != nil || len(ps) == 0 {
		e.t.Fatalf("the Reserve of %s has no push (err %v)", ref, err)
	}
}

// noOpenOps checks the journal has nothing open: every operation was
// settled by its answer or its push.
func (e *flowEnv) noOpenOps() {
	e.t.Helper()
	open, err := e.db.Ops(context.Background(), store.OpPending, store.OpSent, store.OpOutcomeUnknown)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, op := range open {
		e.t.Errorf("operation %d (%s %s) is still %s", op.ID, op.Action, op.Target, op.State)
	}
}

func dAmt(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// ---- the flows ----

// reserveThroughConsole creates the test reservation with the console's
// form (n), approves the customer step from the result, and returns the
// reservation as the cache has it.
func (e *flowEnv) reserveThroughConsole() *store.Reservation {
	e.t.Helper()
	e.press("n")
	e.waitText("New test reservation (sandbox)", "Total 213.80 EUR")
	for _, title := range []string{"Invoice", "First name", "Last name", "Street", "House number", "Postal code", "City", "Country", "E-mail"} {
		e.focus(title)
		e.press("enter")
	}
	e.focus("Phone")
	e.press("enter")
	// The confirm step shows every parameter as sent (a PIN would be
	// masked; ShippingSameAsBilling is not a PIN).
	f := e.confirmSend("deferredkp Reserve", "Article group 1: ArticleNumber SHOE-42", "BillingLastName = Jansen",
		"ShippingSameAsBilling = true")
	key := resultField(f, "Key")
	if !strings.Contains(f, "791 S002") || len(key) != 32 || !strings.Contains(f, "/sandbox/checkout/"+key) {
		e.t.Fatalf("reserve result: want 791 with the checkout redirect:\n%s", f)
	}
	r := e.reservation(key)
	if r.State() != store.StateAwaitingCustomer || len(r.Lines) != 3 {
		e.t.Fatalf("after Reserve: state %s, %d lines", r.State(), len(r.Lines))
	}

	// The customer step, from the form's result: approve.
	if !strings.Contains(focusedLines(f)[1], "Approve as the customer") {
		e.t.Fatalf("approve is not the first choice:\n%s", f)
	}
	e.press("enter")
	f = e.waitText("190 Success", "reserved: reservation number")
	e.waitPush(key, api.StatusSuccess)
	r = e.reservation(key)
	if r.State() != store.StateReserved || r.ReservationNumber == "" || !strings.Contains(f, r.ReservationNumber) {
		e.t.Fatalf("after approve: state %s, number %q; screen:\n%s", r.State(), r.ReservationNumber, f)
	}
	for _, a := range []string{"SHOE-42", "SOCK-3P", "SHIP"} {
		l := flowLine(e.t, r, a)
		e.ledger(r, a, l.Reserved, 0, 0, l.Reserved)
	}
	e.press("enter") // close the form
	e.waitScreen("the reserved reservation in the list", func(f string) bool {
		return strings.Contains(f, "1 reservation") && lineWith(f, r.ReservationNumber[:8], "Jan Jansen", "213.80", " reserved ")
	})
	return r
}

// TestFlowDeferredCaptureCancelRefund drives the console through a
// reservation's life: reserve → approve → capture 2 of 3 shoes and both
// packs of socks (shipping skipped) → cancel the remainder → refund 20.00
// of the capture with a reason. After every step the cache (ledger, state,
// transactions, pushes) and the screen agree.
func TestFlowDeferredCaptureCancelRefund(t *testing.T) {
	e := newFlowEnv(t)
	r := e.reserveThroughConsole()
	number := r.ReservationNumber
	if n := e.requests.Load(); n != 1 {
		t.Fatalf("%d gateway requests after the Reserve, want 1", n)
	}

	// Open the reservation.
	e.press("enter")
	f := e.waitScreen("the reservation's page", func(f string) bool {
		return strings.Contains(f, "Reservation "+number) && lineWith(f, "reserved", "213.80") && lineCell(f, "SHOE-42", "RES") == "3"
	})
	for _, l := range []struct {
		a        string
		res, cap int
	}{{"SHOE-42", 3, 0}, {"SOCK-3P", 2, 0}, {"SHIP", 1, 0}} {
		if !lineRowOK(f, l.a, l.res, 0, 0, 0, l.res) {
			t.Fatalf("reservation page row %s: %v", l.a, row(f, l.a))
		}
	}

	// Capture: 2 of 3 shoes, all socks, no shipping.
	e.press("c")
	e.waitText("Capture shipment · reservation "+number, "days left in the 14-day shipment window")
	e.setInput("SHOE-42", "2")
	e.next("SOCK-3P")
	f = e.focus("SOCK-3P")
	if v, _ := focusedValue(f); v != "0" {
		t.Fatalf("SOCK-3P defaults to %q, want nothing chosen (0)", v)
	}
	e.setInput("SOCK-3P", "2")
	e.next("SHIP")
	e.setInput("SHIP", "0")
	e.waitText("Amount to capture: 148.90 EUR", "PARTIAL capture")
	e.press("enter")
	f = e.confirmSend("deferredkp Pay", "AmountDebit 148.9", "ReservationNumber = "+number,
		"ArticleNumber SHOE-42, ArticleQuantity 2", "ArticleNumber SOCK-3P, ArticleQuantity 2")
	if strings.Contains(f, "ArticleNumber SHIP") {
		t.Fatalf("the skipped shipping line was sent:\n%s", f)
	}
	captureKey := resultField(f, "Key")
	if len(captureKey) != 32 || !strings.Contains(f, "190 S001") || !lineWith(f, "Amount", "148.90 EUR") {
		t.Fatalf("capture result: want 190 S001 for 148.90:\n%s", f)
	}
	capTx := e.transaction(captureKey)
	invoiceNumber := capTx.InvoiceNumber
	if capTx.Kind != store.KindCapture || invoiceNumber == "" || !capTx.Amount.Equal(dAmt("148.90")) || capTx.FullCapture {
		t.Fatalf("stored capture %+v", capTx)
	}
	// The result shows the provider's invoice number, as the gateway gave it.
	e.waitScreen("the invoice number "+invoiceNumber, func(f string) bool { return resultField(f, "Invoice number") == invoiceNumber })
	e.waitPush(captureKey, api.StatusSuccess)
	if p, _ := e.db.PushesFor(t.Context(), captureKey); p[len(p)-1].Kind != api.TypeDeferredPay {
		t.Fatalf("the capture's push is a %q", p[len(p)-1].Kind)
	}
	r = e.reservation(number)
	if st := r.State(); st != store.StatePartlyCaptured {
		t.Fatalf("state after the capture %s, want partly_captured", st)
	}
	e.ledger(r, "SHOE-42", 3, 2, 0, 1)
	e.ledger(r, "SOCK-3P", 2, 2, 0, 0)
	e.ledger(r, "SHIP", 1, 0, 0, 1)
	e.agree(number)
	e.press("enter") // close the result
	e.waitScreen("the page after the capture", func(f string) bool {
		return lineWith(f, "State", "partly captured") && lineWith(f, "capture", "148.90", invoiceNumber) &&
			lineRowOK(f, "SHOE-42", 3, 2, 0, 0, 1) && lineRowOK(f, "SOCK-3P", 2, 2, 0, 0, 0) && lineRowOK(f, "SHIP", 1, 0, 0, 0, 1) &&
			lineWith(f, "captured 148.90")
	})

	// Cancel the remainder: 1 shoe and the shipping line (64.90).
	e.press("x")
	e.waitText("Cancel reservation "+number, "Cancel what was not shipped", "64.90 EUR is released")
	f = e.confirmSend("deferredkp CancelReservation", "ReservationNumber = "+number)
	cancelKey := resultField(f, "Key")
	if !strings.Contains(f, "✓ Done") || !strings.Contains(f, "190") || len(cancelKey) != 32 {
		t.Fatalf("cancel result:\n%s", f)
	}
	e.waitPush(cancelKey, api.StatusSuccess)
	r = e.reservation(number)
	if st := r.State(); st != store.StateClosed || !r.Cancelled {
		t.Fatalf("state after cancelling the remainder %s (cancelled %v), want closed", st, r.Cancelled)
	}
	e.ledger(r, "SHOE-42", 3, 2, 1, 0)
	e.ledger(r, "SOCK-3P", 2, 2, 0, 0)
	e.ledger(r, "SHIP", 1, 0, 1, 0)
	if !r.RemainingAmount().IsZero() {
		t.Fatalf("remaining after the cancel %s", r.RemainingAmount())
	}
	e.agree(number)
	e.press("enter")
	e.waitScreen("the closed reservation", func(f string) bool {
		return lineWith(f, "State", "closed") && lineRowOK(f, "SHOE-42", 3, 2, 1, 0, 0) && lineRowOK(f, "SHIP", 1, 0, 1, 0, 0) &&
			strings.Contains(f, "remaining 0.00")
	})
	// Nothing is left to capture: the console says so instead of a form.
	e.press("c")
	e.waitText("is closed: nothing to capture")
	if n := e.requests.Load(); n != 3 {
		t.Fatalf("%d gateway requests after Reserve, capture and cancel, want 3", n)
	}

	// Refund 20.00 of the capture, reason "defect" with a text: from the
	// transaction list, filtered to the capture, its page, then f.
	e.press("2")
	e.waitText("1 transaction")
	e.press("/")
	e.typeText(strings.ToLower(captureKey[:12]))
	e.press("enter")
	e.waitText("filter: " + strings.ToLower(captureKey[:12]))
	e.press("enter")
	e.waitScreen("the capture's page", func(f string) bool {
		return strings.Contains(f, "Transaction capture") && lineWith(f, "Amount", "148.90 EUR") && strings.Contains(f, invoiceNumber)
	})
	e.press("f")
	e.waitText("Refund · reservation "+number, "Captured 148.90 EUR · refunded 0.00 · left 148.90")
	e.focus("Capture")
	e.next("Amount")
	e.setInput("Amount", "20.00")
	e.next("Reason")
	e.choose("Reason", "defect")
	e.next("Reason text")
	e.setInput("Reason text", "strap torn")
	e.waitText("Refund 20.00 EUR · partial refund · reason defect: strap torn")
	e.press("enter")
	f = e.confirmSend("deferredkp Refund", "AmountCredit 20", "OriginalTransactionKey "+captureKey, "Reason (audit log only): defect: strap torn")
	refundKey := resultField(f, "Key")
	if !strings.Contains(f, "✓ Done") || !strings.Contains(f, "20.00 EUR") || len(refundKey) != 32 {
		t.Fatalf("refund result:\n%s", f)
	}
	e.waitPush(refundKey, api.StatusSuccess)
	ref := e.transaction(refundKey)
	if ref.Kind != store.KindRefund || ref.Original != captureKey || !ref.Amount.Equal(dAmt("20")) {
		t.Fatalf("stored refund %+v", ref)
	}
	capTx = e.transaction(captureKey)
	if !capTx.Refunded.Equal(dAmt("20")) || !capTx.Refundable().Equal(dAmt("128.90")) {
		t.Fatalf("capture after the refund: refunded %s, refundable %s; want 20 and 128.90", capTx.Refunded, capTx.Refundable())
	}
	r = e.reservation(number)
	if !r.RefundedAmount.Equal(dAmt("20")) || r.State() != store.StateClosed {
		t.Fatalf("reservation after the refund: refunded %s, state %s", r.RefundedAmount, r.State())
	}
	e.agree(number)
	e.press("enter")
	e.waitScreen("the refund on the capture's page", func(f string) bool {
		return lineWith(f, "Refunded", "20.00", "refundable 128.90") && lineWith(f, "refund", refundKey[:8], "-20.00", "190")
	})
	// The transaction list shows both, the refund as money going back.
	e.press("esc")
	e.press("esc") // clear the filter
	// The rows, not a frame of the list while it reads.
	e.waitText("2 transactions", "148.90", "20.00")

	// Pushes: the Reserve, the capture, the cancel, the refund; each
	// stored, valid and applied, and the push log shows them.
	if n := e.pushesOK.Load(); n < 4 {
		t.Fatalf("the listener stored %d pushes, want at least 4", n)
	}
	e.press("3")
	e.waitScreen("the push log", func(f string) bool {
		return strings.Contains(f, "4 pushes") && lineWith(f, "DataRequest", "Reserve ", "valid") && lineWith(f, "Transaction", "C700", "valid") &&
			lineWith(f, "DataRequest", "CancelReservation", "valid") && lineWith(f, "Transaction", "C701", "valid") && !strings.Contains(f, "REJECTED")
	})

	// The audit log keeps who did what, with the refund's reason; the
	// gateway log has every request and never the secret.
	audit, err := e.db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range audit {
		seen[a.Action] = true
		if a.Operator != "flow-tester" {
			t.Errorf("audit %s by %q", a.Action, a.Operator)
		}
		if a.Action == "refund" && a.Reason != "defect: strap torn" {
			t.Errorf("refund audit reason %q", a.Reason)
		}
	}
	for _, a := range []string{"reserve", "customer-approve", "capture", "cancel", "refund"} {
		if !seen[a] {
			t.Errorf("the audit log lacks %s", a)
		}
	}
	e.press("4")
	e.waitText("defect: strap torn")
	xs, err := e.db.Exchanges(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 4 {
		t.Errorf("gateway log has %d exchanges, want 4", len(xs))
	}
	for _, x := range xs {
		if bytes.Contains(x.RequestBody, []byte(flowCreds.SecretKey)) || bytes.Contains(x.ResponseBody, []byte(flowCreds.SecretKey)) {
			t.Errorf("gateway log entry %d shows the secret", x.ID)
		}
	}
	if n := e.requests.Load(); n != 4 {
		t.Fatalf("%d gateway requests in all, want 4 (each form sends once)", n)
	}
	e.noOpenOps()
}

// TestFlowGiftCardPartialPaymentAndRefund pays 30.00 with the test card
// 0000000000000000001 and PIN 1000 (a balance of 10.00) through the gift
// card form: a partial payment (S003) with the remainder and its redirect.
// Then the payment is refunded through the refund form: 4.00 first (a
// partial refund: provider B, enabled, contact on the payment), then
// everything left.
func TestFlowGiftCardPartialPaymentAndRefund(t *testing.T) {
	e := newFlowEnv(t)
	e.press("p")
	e.waitText("Gift card payment", "Card fields of voucherb: VoucherBCardnumber + VoucherBPIN")
	if v, _ := focusedValue(e.focus("Service code")); v != "voucherb" {
		t.Fatalf("service code defaults to %q", v)
	}
	e.next("Card number")
	e.setInput("Card number", api.TestCardNumber)
	e.next("PIN")
	e.setPassword("PIN", "1000")
	e.next("Amount (EUR)")
	e.setInput("Amount (EUR)", "30.00")
	e.next("Invoice")
	e.setInput("Invoice", "GC-FLOW-1")
	e.next("Last name")
	e.setInput("Last name", "Jansen")
	e.next("E-mail")
	e.setInput("E-mail", "jan.jansen@example.com")
	e.waitText("Pay 30.00 EUR with voucherb card ••••0001")
	e.press("enter")
	f := e.confirmSend("voucherb Pay", "AmountDebit 30", "VoucherBCardnumber = "+api.TestCardNumber, "VoucherBPIN = ••••")
	if strings.Contains(f, "VoucherBPIN = 1000") {
		t.Fatalf("the PIN is on screen:\n%s", f)
	}
	payKey := resultField(f, "Key")
	if !strings.Contains(f, "190 S003") || len(payKey) != 32 ||
		!strings.Contains(f, "20.00 EUR still to pay (partial payment)") || resultField(f, "Redirect") == "" {
		t.Fatalf("gift card result: want a partial payment with the remainder and its redirect:\n%s", f)
	}
	e.waitPush(payKey, api.StatusSuccess)
	pay := e.transaction(payKey)
	if pay.Kind != store.KindGiftCardPay || !pay.Amount.Equal(dAmt("10")) || pay.Status.SubCode != api.SubCodePartialPayment ||
		!pay.RemainderAmount.Equal(dAmt("20")) || pay.Provider != api.ProviderB || !pay.HasContact || pay.Invoice != "GC-FLOW-1" {
		t.Fatalf("stored gift card payment %+v", pay)
	}
	if ps, _ := e.db.PushesFor(t.Context(), payKey); !ps[len(ps)-1].Amount.Equal(dAmt("10")) || ps[len(ps)-1].Status.SubCode != api.SubCodePartialPayment {
		t.Fatalf("the payment's push: amount %s subcode %s", ps[len(ps)-1].Amount, ps[len(ps)-1].Status.SubCode)
	}
	e.press("enter")
	e.waitScreen("the payment form closed", func(f string) bool { return !strings.Contains(f, "Gift card payment") })

	// Open the payment from the transaction list.
	e.press("2")
	e.waitText("1 transaction")
	e.press("/")
	e.typeText(strings.ToLower(payKey[:12]))
	e.press("enter")
	e.press("enter")
	e.waitText("GC-FLOW-1", "S003")

	// Refund 4.00 of it.
	e.press("f")
	e.waitText("Gift card refund · "+payKey, "paid 10.00 EUR · refunded 0.00 · left 10.00",
		"partial refunds: possible (LastName and Email were on the payment)")
	e.setInput("Amount", "4.00")
	e.next("Reason")
	e.choose("Reason", "return")
	e.next("Reason text")
	e.waitText("Refund 4.00 EUR · partial refund")
	e.press("enter")
	f = e.confirmSend("voucherb Refund", "AmountCredit 4", "OriginalTransactionKey "+payKey)
	ref1 := resultField(f, "Key")
	if !strings.Contains(f, "✓ Done") || !strings.Contains(f, "4.00 EUR") || len(ref1) != 32 {
		t.Fatalf("first gift card refund:\n%s", f)
	}
	e.waitPush(ref1, api.StatusSuccess)
	if r := e.transaction(ref1); r.Kind != store.KindGiftCardRefund || r.Original != payKey || !r.Amount.Equal(dAmt("4")) {
		t.Fatalf("stored gift card refund %+v", r)
	}
	if p := e.transaction(payKey); !p.Refundable().Equal(dAmt("6")) {
		t.Fatalf("left to refund %s, want 6", p.Refundable())
	}
	e.press("enter")
	e.waitScreen("the refund on the payment's page", func(f string) bool {
		return lineWith(f, "Refunded", "4.00", "refundable 6.00") && lineWith(f, ref1[:8], "-4.00")
	})

	// Refund the rest: "all" takes everything left.
	e.press("f")
	e.waitText("Gift card refund · "+payKey, "paid 10.00 EUR · refunded 4.00 · left 6.00")
	e.setInput("Amount", "all")
	e.next("Reason")
	e.next("Reason text")
	e.waitText("Refund 6.00 EUR")
	e.press("enter")
	f = e.confirmSend("voucherb Refund", "AmountCredit 6")
	ref2 := resultField(f, "Key")
	if !strings.Contains(f, "✓ Done") || len(ref2) != 32 || ref2 == ref1 {
		t.Fatalf("second gift card refund:\n%s", f)
	}
	e.waitPush(ref2, api.StatusSuccess)
	if p := e.transaction(payKey); !p.Refunded.Equal(dAmt("10")) || !p.Refundable().IsZero() {
		t.Fatalf("payment after both refunds: refunded %s, left %s", p.Refunded, p.Refundable())
	}
	e.press("enter")
	e.waitScreen("both refunds on the payment's page", func(f string) bool {
		return lineWith(f, "Refunded", "10.00", "refundable 0.00") && lineWith(f, ref1[:8], "-4.00") && lineWith(f, ref2[:8], "-6.00")
	})
	// Nothing is left: the refund form says so and cannot be sent.
	e.press("f")
	e.waitText("nothing left to refund")

	// The transaction list: the payment and both refunds.
	e.press("esc")
	e.press("esc")
	e.press("esc")
	// "… 0 of 3 transactions" is a frame of the list while it reads:
	// wait for the rows themselves.
	e.waitScreen("the payment and both refunds in the list", func(f string) bool {
		return strings.Contains(f, "3 transactions") &&
			strings.Contains(f, payKey[:8]) && strings.Contains(f, ref1[:8]) && strings.Contains(f, ref2[:8])
	})
	if n := e.pushesOK.Load(); n < 3 {
		t.Fatalf("the listener stored %d pushes, want at least 3", n)
	}
	audit, err := e.db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, a := range audit {
		count[a.Action]++
	}
	if count["giftcard-pay"] != 1 || count["giftcard-refund"] != 2 {
		t.Fatalf("audit log %v, want one gift card payment and two refunds", count)
	}
	if n := e.requests.Load(); n != 3 {
		t.Fatalf("%d gateway requests, want 3 (each form sends once)", n)
	}
	e.noOpenOps()
}
