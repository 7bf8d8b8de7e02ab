package ui

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/pushlistener"
	"paydesk/store"
)

// recorder wraps the console in a running program and keeps, after every
// message, what the reservations tab and the push log show, so a test can
// watch the screens without pressing a key.
type recorder struct {
	app    *App
	mu     *sync.Mutex
	frames *map[int]string
	// wake is closed (and replaced) after every message: waitFrame wakes
	// on it instead of polling.
	wake *chan struct{}
}

func (r recorder) Init() tea.Cmd  { return r.app.Init() }
func (r recorder) View() tea.View { return r.app.View() }
func (r recorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := r.app.Update(msg)
	frames := map[int]string{}
	for i, s := range r.app.tabs {
		frames[i] = s.View()
	}
	frames[-1] = r.app.render()
	r.mu.Lock()
	*r.frames = frames
	close(*r.wake)
	*r.wake = make(chan struct{})
	r.mu.Unlock()
	return r, cmd
}

func (r recorder) frame(i int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return (*r.frames)[i]
}

// waitFrame waits until the recorded view of tab i satisfies ok.
func (r recorder) waitFrame(t *testing.T, i int, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.NewTimer(flowWait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		wake := *r.wake
		r.mu.Unlock()
		if f := r.frame(i); ok(f) {
			return f
		}
		select {
		case <-wake:
		case <-deadline.C:
			t.Fatalf("%s: not on screen within %s; last frame:\n%s", what, flowWait, plain(r.frame(i)))
			return ""
		}
	}
}

func plain(s string) string {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.NoTTY}
	w.WriteString(s)
	return b.String()
}

// livePair is a real cache and a real push listener in front of it.
type livePair struct {
	db    *store.DB
	srv   *httptest.Server
	creds api.Credentials
}

func newLivePair(t *testing.T) *livePair {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "cache.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	creds := api.Credentials{WebsiteKey: "live-test", SecretKey: "s3cret"}
	ln, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(creds)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ln)
	t.Cleanup(func() {
		srv.Close()
		db.Close()
	})
	return &livePair{db: db, srv: srv, creds: creds}
}

// post signs body like the gateway does and posts it to the listener.
func (p *livePair) post(t *testing.T, body []byte, sign bool) int {
	t.Helper()
	url := p.srv.URL + "/push"
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sign {
		auth := api.Sign(p.creds, http.MethodPost, api.HostPath(url), body, api.NewNonce(), time.Now().Unix())
		req.Header.Set("Authorization", auth.String())
	} else {
		req.Header.Set("Authorization", "hmac live-test:AAAA:nonce:1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func reservePushBody(t *testing.T, key, invoice, number string, at time.Time) []byte {
	t.Helper()
	p := &api.Push{DataRequest: &api.DataRequestPush{Key: key, Invoice: invoice, ServiceCode: "deferredkp", ActionCode: "Reserve",
		Status: api.Status{Code: api.Code{Code: 190, Description: "Success"}, DateTime: api.NewDateTime(at, true)}, IsTest: true, Currency: "EUR",
		Services: []api.ResponseService{{Name: "deferredkp", Parameters: []api.ResponseParameter{{Name: "ReservationNumber", Value: api.FlexString(number)}}}}}}
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func startConsole(t *testing.T, db *store.DB) recorder {
	t.Helper()
	frames := map[int]string{}
	wake := make(chan struct{})
	rec := recorder{mu: &sync.Mutex{}, frames: &frames, wake: &wake}
	rec.app = New(Config{Store: db, Mode: ops.ModeSandbox, GatewayURL: "http://127.0.0.1:8800", ListenAddr: "127.0.0.1:8801",
		Location: time.UTC, ExportDir: t.TempDir(), FixtureDir: t.TempDir()})
	tm := teatest.NewTestModel(t, rec, teatest.WithInitialTermSize(120, 36),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() {
		tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
		rec.app.Close()
	})
	return rec
}

// A push posted to the listener shows up in the push log and moves the
// reservation's state on screen, with no key pressed.
func TestLivePushUpdatesScreensWithoutKeyPress(t *testing.T) {
	p := newLivePair(t)
	now := time.Now()
	key := "0123456789ABCDEF0123456789ABCDEF"
	r := &store.Reservation{Key: key, Invoice: "INV-LIVE-1", Currency: "EUR", CustomerName: "Ida Live", Country: "NL", LinesKnown: true,
		Lines:  []store.Line{{ArticleNumber: "A1", Title: "Kettle", Price: dec("35.00"), Vat: dec("21"), Reserved: 1}},
		Status: store.Status{Code: 791, SubCode: "S002", Time: now}, Created: now}
	if err := p.db.PutReservations(t.Context(), []*store.Reservation{r}); err != nil {
		t.Fatal(err)
	}
	rec := startConsole(t, p.db)
	rec.waitFrame(t, TabReservations, "the reservation awaiting the customer", func(f string) bool {
		return strings.Contains(f, "INV-LIVE-1") && strings.Contains(f, "customer step")
	})
	rec.waitFrame(t, TabPushes, "the empty push log", func(f string) bool { return strings.Contains(f, "No pushes yet") })

	if code := p.post(t, reservePushBody(t, key, "INV-LIVE-1", "R7777777", now), true); code != 200 {
		t.Fatalf("listener answered %d, want 200", code)
	}
	log := rec.waitFrame(t, TabPushes, "the push in the log", func(f string) bool {
		return strings.Contains(plain(f), "Reserve") && strings.Contains(plain(f), "applied")
	})
	if !strings.Contains(plain(log), "valid") {
		t.Errorf("push log does not show the signature verdict:\n%s", plain(log))
	}
	rec.waitFrame(t, TabReservations, "the reservation moved to reserved", func(f string) bool {
		f = plain(f)
		return strings.Contains(f, "R7777777") && strings.Contains(f, "reserved") && !strings.Contains(f, "customer step")
	})
	rec.waitFrame(t, -1, "the live counter in the status bar", func(f string) bool { return strings.Contains(plain(f), "pushes 1 (+1 live)") })

	// A push with a bad signature is logged as rejected, with the reason.
	if code := p.post(t, reservePushBody(t, key, "INV-LIVE-1", "R7777777", now), false); code == 200 {
		t.Fatal("a push with a bad signature was accepted")
	}
	rec.waitFrame(t, TabPushes, "the rejected push with its reason", func(f string) bool {
		return strings.Contains(plain(f), "REJECTED: signature")
	})
}

// Escape sequences in a push (and in what the cache derived from it) are
// drawn inert: no OSC 52 clipboard write, no screen clear reaches the
// terminal.
func TestLiveEscapeSequencesAreInert(t *testing.T) {
	p := newLivePair(t)
	now := time.Now()
	key := "FEDCBA9876543210FEDCBA9876543210"
	evil := "INV-\u001b]52;c;cm0gLXJmIH4=\u0007EVIL\u001b[2J"
	body := reservePushBody(t, key, evil, "R\u001b[2J123", now)
	if !bytes.Contains(body, []byte(`\u001b]52`)) {
		t.Fatalf("the test push does not carry the escape: %s", body)
	}
	rec := startConsole(t, p.db)
	if code := p.post(t, body, true); code != 200 {
		t.Fatalf("listener answered %d", code)
	}
	rec.waitFrame(t, TabPushes, "the push", func(f string) bool { return strings.Contains(f, "Reserve") })
	rec.waitFrame(t, TabReservations, "the reservation", func(f string) bool { return strings.Contains(f, "EVIL") })
	for i, name := range map[int]string{TabReservations: "reservations", TabPushes: "push log", -1: "whole frame"} {
		assertInert(t, name, rec.frame(i))
	}
}

func assertInert(t *testing.T, where, frame string) {
	t.Helper()
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\x07", "\u009b", "\x1b]"} {
		if strings.Contains(frame, bad) {
			t.Errorf("%s: the frame carries %q", where, bad)
		}
	}
}
