package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"paydesk/internal/access"
	"paydesk/store"
	"paydesk/views"
	"paydesk/views/forms"
)

// deliveriesFake is the fixture with an outbox: the store's selection
// rules (store.FailingEndpoints) judge its rows, its resends are recorded.
type deliveriesFake struct {
	*fakeStore
	ds     []*store.Delivery // newest first
	asked  []store.ResendRequest
	counts []store.ResendRequest
}

func (f *deliveriesFake) RecentDeliveries(_ context.Context, limit int) ([]*store.Delivery, error) {
	if limit > 0 && len(f.ds) > limit {
		return f.ds[:limit], nil
	}
	return f.ds, nil
}

func (f *deliveriesFake) CountResend(_ context.Context, r store.ResendRequest) (int, error) {
	f.counts = append(f.counts, r)
	return 7, nil
}

func (f *deliveriesFake) Redeliver(_ context.Context, r store.ResendRequest) (int, error) {
	f.asked = append(f.asked, r)
	if r.ID != 0 {
		return 1, nil
	}
	return 7, nil
}

const (
	shopDown = "https://shop.example/push/buckaroo?tenant=\x1b[31mred"
	shopUp   = "https://other.example/push"
)

func deliveriesFixture() *deliveriesFake {
	at := func(min int) time.Time { return testNow.Add(time.Duration(min) * time.Minute) }
	ms := time.Millisecond
	return &deliveriesFake{fakeStore: fixture(), ds: []*store.Delivery{
		{ID: 4, PushID: 12, Key: "9F3E6C2B1A0D4E5F8A7B6C5D4E3F2A1B", Endpoint: shopUp, Created: at(-3), State: store.DeliveryDelivered, DeliveredAt: at(-3),
			Attempts: []store.Attempt{{At: at(-3), Status: 200, Latency: 41 * ms}}},
		{ID: 3, PushID: 12, Key: "9F3E6C2B1A0D4E5F8A7B6C5D4E3F2A1B", Endpoint: shopDown, Created: at(-3), State: store.DeliveryPending, NextAt: at(4), Tries: 2,
			Attempts: []store.Attempt{{At: at(-3), Status: 500, Latency: 120 * ms, Excerpt: "Internal Server Error \x1b]52;c;evil\x07"},
				{At: at(-1), Error: "dial tcp 203.0.113.7:443: connect: connection refused", Latency: 3 * ms}}},
		{ID: 2, PushID: 11, Key: "1A2B3C4D5E6F708192A3B4C5D6E7F801", Endpoint: shopDown, Created: at(-90), State: store.DeliveryFailed,
			Attempts: []store.Attempt{{At: at(-90), Status: 503, Latency: 80 * ms, Excerpt: "maintenance"}}},
		{ID: 1, PushID: 10, Key: "1A2B3C4D5E6F708192A3B4C5D6E7F801", Endpoint: shopDown, Created: at(-120), State: store.DeliveryDelivered, DeliveredAt: at(-120),
			Attempts: []store.Attempt{{At: at(-120), Status: 200, Latency: 35 * ms}}},
	}}
}

// TestGoldenDeliveries pins the Deliveries page (D) at 100×24, newest
// first, the endpoint's escape codes and the answer's made inert; then
// one delivery's attempts (enter).
func TestGoldenDeliveries(t *testing.T) {
	a := newTestApp(t, deliveriesFixture(), 100, 24, func(c *Config) { c.Forwarding = true })
	press(t, a, "D", "down")
	out := ascii(a)
	if strings.Contains(out, "\x1b[31m") || strings.Contains(out, "\x1b]52") {
		t.Fatal("an escape code from outside reached the screen")
	}
	golden.RequireEqual(t, out)
	press(t, a, "enter")
	t.Run("attempts", func(t *testing.T) { golden.RequireEqual(t, ascii(a)) })
}

// A failing endpoint is one Attention row whatever its number of
// deliveries, with what to do; enter opens the Deliveries page filtered to
// it; r resends the selected delivery (no confirmation), R f every failed
// one to that endpoint after a confirmation with the count. The working
// endpoint has no row.
func TestAttentionFailingEndpointToDeliveries(t *testing.T) {
	f := deliveriesFixture()
	a := newTestApp(t, f, 120, 36)
	press(t, a, "0")
	out := ascii(a)
	if n := strings.Count(out, "shop not taking"); n != 1 || strings.Contains(out, shopUp) {
		t.Fatalf("want one row for the failing endpoint only:\n%s", out)
	}
	// Move to the row (the fixture has more urgent rows above it).
	for i := 0; i < 40 && !strings.Contains(rowUnderCursor(a), "shop not taking"); i++ {
		press(t, a, "down")
	}
	if out := ascii(a); !strings.Contains(out, "1 given up") || !strings.Contains(out, "fix the shop's endpoint, then resend") {
		t.Fatalf("the row does not say what to do:\n%s", out)
	}
	press(t, a, "enter")
	p, ok := a.top().(*views.Deliveries)
	if !ok || p.Endpoint() != shopDown {
		t.Fatalf("enter opened %T, want the Deliveries page filtered to the endpoint", a.top())
	}
	out = ascii(a)
	if strings.Contains(out, "other.example") || !strings.Contains(out, "3 · https://shop.example") {
		t.Fatalf("not filtered to the endpoint:\n%s", out)
	}
	press(t, a, "r")
	if len(f.asked) != 1 || f.asked[0].ID != 3 || f.asked[0].Via != "console" || !strings.Contains(a.status.Text, "1 delivery queued again") {
		t.Fatalf("r: asked %+v, status %q", f.asked, a.status.Text)
	}
	press(t, a, "R", "f")
	if len(a.dialogs) != 1 || len(f.asked) != 1 {
		t.Fatalf("R f: want a confirmation first, got %d dialogs, %d resends", len(a.dialogs), len(f.asked))
	}
	if d := ascii(a); !strings.Contains(d, "Send 7 deliveries again (every failed delivery to") {
		t.Fatalf("the confirmation does not give the count:\n%s", d)
	}
	press(t, a, "y")
	if len(f.asked) != 2 || !f.asked[1].Query.Failed || f.asked[1].Endpoint != shopDown || len(a.dialogs) != 0 {
		t.Fatalf("after y: %+v, %d dialogs", f.asked, len(a.dialogs))
	}
	press(t, a, "R", "h", "n")
	if len(f.asked) != 2 || len(a.dialogs) != 0 {
		t.Fatalf("n resent anyway: %+v", f.asked)
	}
}

// rowUnderCursor is the attention tab's selected row's detail line.
func rowUnderCursor(a *App) string {
	lines := strings.Split(ascii(a), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "───") && i+1 < len(lines) {
			return lines[i+1]
		}
	}
	return ""
}

// Only a role that may resend sees r and R; a warehouse user pressing r
// is told who may, and nothing is resent; a read-only console likewise.
func TestDeliveriesKeysByRole(t *testing.T) {
	for _, tc := range []struct {
		name string
		role access.Role
		ro   bool
		may  bool
	}{
		{"agent", access.Agent, false, true},
		{"finance", access.Finance, false, true},
		{"warehouse", access.Warehouse, false, false},
		{"viewer", access.Viewer, false, false},
		{"admin read-only", access.Admin, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := deliveriesFixture()
			a := newTestApp(t, f, 120, 36, func(c *Config) { c.Ops = roleService(t, "kim", tc.role, ""); c.ReadOnly = tc.ro })
			press(t, a, "D")
			var keys []string
			for _, b := range a.shortHelp() {
				keys = append(keys, b.Help().Key)
			}
			shown := strings.Contains(" "+strings.Join(keys, " ")+" ", " r ")
			if shown != tc.may {
				t.Fatalf("r in the footer = %v, want %v (%v)", shown, tc.may, keys)
			}
			press(t, a, "r")
			if tc.may != (len(f.asked) == 1) {
				t.Fatalf("r: resent %d, may %v; status %q", len(f.asked), tc.may, a.status.Text)
			}
			if !tc.may && !strings.Contains(a.status.Text, "agent, finance, admin") && !strings.Contains(a.status.Text, "read-only") {
				t.Fatalf("r refused without saying who may: %q", a.status.Text)
			}
		})
	}
}

// The marks' bulk menu offers r only when forwarding is configured; r
// counts the marked reservations' deliveries and resends them once
// confirmed, by reservation key.
func TestBulkResendMarked(t *testing.T) {
	for _, forwarding := range []bool{false, true} {
		f := deliveriesFixture()
		a := newTestApp(t, f, 120, 36, func(c *Config) { c.Forwarding = forwarding })
		press(t, a, "space", "down", "space", "b")
		menu := ascii(a)
		if strings.Contains(menu, "r resend to the shop") != forwarding {
			t.Fatalf("forwarding %v, menu:\n%s", forwarding, menu)
		}
		press(t, a, "r")
		if !forwarding {
			if len(f.counts) != 0 || len(a.dialogs) != 0 {
				t.Fatal("r without forwarding did something")
			}
			continue
		}
		if len(f.counts) != 1 || len(f.counts[0].Reservations) != 2 || len(a.dialogs) != 1 {
			t.Fatalf("r: counted %+v, %d dialogs", f.counts, len(a.dialogs))
		}
		if d := ascii(a); !strings.Contains(d, "Send 7 deliveries again") || !strings.Contains(d, "2 marked reservations") {
			t.Fatalf("confirmation:\n%s", d)
		}
		press(t, a, "y")
		if len(f.asked) != 1 || len(f.asked[0].Reservations) != 2 || f.asked[0].Operator == "" {
			t.Fatalf("resent %+v", f.asked)
		}
		if !strings.Contains(a.status.Text, "7 deliveries queued again") {
			t.Fatalf("status %q", a.status.Text)
		}
	}
}

// The console reads the deliveries again every deliveryPoll on its own
// clock: an attempt recorded by another process shows without a key.
func TestDeliveriesPolled(t *testing.T) {
	now := testNow
	f := deliveriesFixture()
	a := newTestApp(t, f, 120, 36, func(c *Config) { c.Now = func() time.Time { return now } })
	press(t, a, "D")
	if cmd := a.pollDeliveries(); cmd != nil {
		t.Fatal("polled again at once")
	}
	f.ds = append([]*store.Delivery{{ID: 9, PushID: 13, Endpoint: shopUp, Created: now, State: store.DeliveryDelivered,
		Attempts: []store.Attempt{{At: now, Status: 200}}}}, f.ds...)
	now = now.Add(deliveryPoll)
	_, cmd := a.Update(ageTickMsg{})
	pump(t, a, cmd)
	if out := ascii(a); !strings.Contains(out, "5 · all endpoints") {
		t.Fatalf("the new delivery does not show after a poll:\n%s", out)
	}
}

// Without the page open the Attention tab's deliveries are read every
// deliveryPollIdle, not every deliveryPoll.
func TestDeliveriesPolledIdle(t *testing.T) {
	now := testNow
	a := newTestApp(t, deliveriesFixture(), 120, 36, func(c *Config) { c.Now = func() time.Time { return now } })
	now = now.Add(deliveryPoll)
	if a.pollDeliveries() != nil {
		t.Fatal("polled after deliveryPoll with the page closed")
	}
	now = now.Add(deliveryPollIdle)
	if a.pollDeliveries() == nil {
		t.Fatal("no poll after deliveryPollIdle")
	}
}

// The confirmation's yes resends whatever order its close and its effect
// come back in (a program runs a batch's commands at once): here the
// effect's message comes first, while the dialog is still open.
func TestConfirmYesWhileDialogOpen(t *testing.T) {
	f := deliveriesFixture()
	a := newTestApp(t, f, 120, 36)
	press(t, a, "D", "R", "f")
	if len(a.dialogs) != 1 {
		t.Fatalf("no confirmation: %d dialogs", len(a.dialogs))
	}
	_, cmd := a.Update(keyPress("y"))
	if _, ok := cmd().(tea.BatchMsg); !ok {
		t.Fatalf("y gave %T, want a batch", cmd())
	}
	var closing []tea.Msg
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		msg := c()
		switch m := msg.(type) {
		case tea.BatchMsg:
			for _, c := range m {
				run(c)
			}
		case forms.CloseMsg:
			closing = append(closing, msg)
		default:
			_, next := a.Update(msg) // before the close
			pump(t, a, next)
		}
	}
	run(cmd)
	for _, m := range closing {
		_, next := a.Update(m)
		pump(t, a, next)
	}
	if len(f.asked) != 1 || !f.asked[0].Query.Failed || len(a.dialogs) != 0 {
		t.Fatalf("resent %+v, %d dialogs", f.asked, len(a.dialogs))
	}
}
