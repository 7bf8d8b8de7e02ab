package ui

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/internal/teacmd"
	"paydesk/store"
)

// pump runs cmd and feeds every message it yields back into the app, as
// the program would, until nothing is left. The commands that wait for
// something no test step brings (a timer, a cursor's blink, the next cache
// change) are left; every other command runs to its end, however slow.
func pump(t testing.TB, a *App, cmd tea.Cmd) {
	t.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 10000 {
			t.Fatal("pump: too many messages")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil || waits(c) {
			continue
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		var msg tea.Msg
		select {
		case msg = <-done:
		case <-time.After(pumpStuck):
			t.Fatalf("pump: %s has not returned after %s: a command that waits (add it to waits)", teacmd.Name(c), pumpStuck)
		}
		if msg == nil {
			continue
		}
		if b, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, b...)
			continue
		}
		if fmt.Sprintf("%T", msg) == "tea.backgroundColorMsg" {
			continue
		}
		_, next := a.Update(msg)
		queue = append(queue, next)
	}
}

// pumpStuck only ends a stuck test: pump runs no command that waits.
const pumpStuck = time.Minute

// waits reports whether a command waits for something no test step brings:
// a timer or the next cache change.
func waits(c tea.Cmd) bool {
	// waitChange's closure, inlined where it is called or not.
	return teacmd.Timer(c) || strings.Contains(teacmd.Name(c), "waitChange.func")
}

// press sends keys (one per rune, or a named key) and runs what follows.
func press(t testing.TB, a *App, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, cmd := a.Update(keyPress(k))
		pump(t, a, cmd)
	}
}

func typeText(t testing.TB, a *App, s string) {
	t.Helper()
	for _, r := range s {
		press(t, a, string(r))
	}
}

// ascii renders the frame with the ASCII profile: no colours, so the
// golden files do not depend on the terminal the tests run in.
func ascii(a *App) string {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
	w.WriteString(a.render())
	return b.String()
}

func newTestApp(t testing.TB, st Store, width, height int, mutate ...func(*Config)) *App {
	t.Helper()
	cfg := Config{Store: st, Mode: ops.ModeSandbox, GatewayURL: "http://127.0.0.1:8800", ListenAddr: "127.0.0.1:8801",
		Now: func() time.Time { return testNow }, Location: time.UTC, ExportDir: t.TempDir(), FixtureDir: t.TempDir(),
		NoAttentionStart: true, NoFirstFrameSettle: true}
	for _, m := range mutate {
		m(&cfg)
	}
	a := New(cfg)
	a.Update(tea.WindowSizeMsg{Width: width, Height: height})
	pump(t, a, a.Init())
	return a
}

var sizes = []struct{ w, h int }{{120, 36}, {80, 24}}

func forSizes(t *testing.T, fn func(t *testing.T, w, h int)) {
	for _, s := range sizes {
		t.Run(fmt.Sprintf("%dx%d", s.w, s.h), func(t *testing.T) { fn(t, s.w, s.h) })
	}
}

func TestGoldenEmpty(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, &fakeStore{}, w, h)
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenEmptyPushes(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, &fakeStore{}, w, h)
		press(t, a, "3")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenReservations(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "down")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenReservationsFiltered(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "/")
		typeText(t, a, "cup")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenReservationDetail(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "/")
		typeText(t, a, "Gruber")
		press(t, a, "enter", "enter")
		golden.RequireEqual(t, ascii(a))
	})
}

// A reservation whose order never arrived: the detail says what is
// missing, how to bring it in, and what can be done meanwhile.
func TestGoldenPushOnlyDetail(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		f := &fakeStore{}
		r := &store.Reservation{Key: key32(9), ReservationNumber: "R0004109", Invoice: "SHOP-77003", Currency: "EUR", IsTest: true,
			Status: ok190(testNow.Add(-time.Hour)), Created: testNow.Add(-time.Hour)}
		r.Requests = []store.Request{{Key: r.Key, Action: api.ActionReserve, Status: r.Status}}
		f.res = append(f.res, r)
		a := newTestApp(t, f, w, h, func(c *Config) { c.IntakeURL = "http://127.0.0.1:8801/orders" })
		press(t, a, "enter")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenTransactions(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "2")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenTransactionDetail(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "2", "/")
		typeText(t, a, "c701")
		press(t, a, "enter", "enter")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenPushes(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "3")
		golden.RequireEqual(t, ascii(a))
	})
}

// TestGoldenPushReceiptsDetail: the page of a push received three times
// lists every receipt.
func TestGoldenPushReceiptsDetail(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "3")
		if !strings.Contains(ascii(a), "×3") {
			t.Fatalf("the Pushes tab does not mark the push received three times:\n%s", ascii(a))
		}
		// The filter language finds it: its kind and invoice.
		press(t, a, "/")
		typeText(t, a, "c700 INV-2026-0103")
		press(t, a, "enter", "enter")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenRejectedPushDetail(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "3", "v", "v", "v", "v", "enter")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenHelp(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, "?")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenPalette(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h)
		press(t, a, ":")
		golden.RequireEqual(t, ascii(a))
	})
}

func TestGoldenReadOnlyLive(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h, func(c *Config) {
			c.ReadOnly, c.Mode, c.GatewayURL = true, ops.ModeLive, "https://checkout.example.com"
		})
		press(t, a, "c")
		golden.RequireEqual(t, ascii(a))
	})
}

// Every tab exports its current list, the log tabs included.
func TestExportEveryTab(t *testing.T) {
	dir := t.TempDir()
	a := newTestApp(t, fixture(), 120, 36, func(c *Config) { c.ExportDir = dir })
	for _, tab := range []string{"1", "2", "3", "4", "5"} {
		press(t, a, tab, "e")
		if !strings.Contains(a.status.Text, "exported") {
			t.Fatalf("tab %s: %q", tab, a.status.Text)
		}
		press(t, a, "E")
	}
	files, _ := os.ReadDir(dir)
	if len(files) != 10 {
		t.Fatalf("%d files, want 10: %v", len(files), files)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "paydesk-reservations-20261123-100000.csv"))
	if !strings.Contains(string(csv), ",178.98,178.98,0.00,captured,") {
		t.Fatalf("reservations csv:\n%s", csv)
	}
}

// TestGoldenSavedView: the config's saved views are tabs of their own
// after the fixed ones (6, 7), each showing the reservations its filter
// keeps; "/" narrows a view further.
func TestGoldenSavedView(t *testing.T) {
	a := newTestApp(t, fixture(), 90, 24, func(c *Config) {
		c.Views = []SavedView{{Name: "open", Filter: "state:reserved created:<3d"}, {Name: "big", Filter: "amount:>100"}}
	})
	press(t, a, "6")
	golden.RequireEqual(t, ascii(a))
	// The other view, narrowed by "/": its own rows, not the first one's.
	press(t, a, "7", "/")
	typeText(t, a, "mueller")
	if v := ansi.Strip(ascii(a)); !strings.Contains(v, "view: amount:>100 · / mueller") || !strings.Contains(v, "Anna Müller") || strings.Contains(v, "state:reserved") {
		t.Fatalf("the second view:\n%s", v)
	}
}

// The log tabs export what their filter keeps, as every list does: a
// filter that keeps nothing exports the header alone, a refused one
// exports nothing and says why.
func TestLogExportKeepsTheFilter(t *testing.T) {
	dir := t.TempDir()
	a := newTestApp(t, fixture(), 120, 36, func(c *Config) { c.ExportDir = dir })
	lines := func() int {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(dir, "paydesk-gateway-log-*.csv"))
		if len(files) != 1 {
			t.Fatalf("gateway log exports: %v", files)
		}
		b, _ := os.ReadFile(files[0])
		return strings.Count(string(b), "\n")
	}
	press(t, a, "5", "e")
	all := lines()
	if all < 2 {
		t.Fatalf("the whole gateway log exported %d lines", all)
	}
	press(t, a, "/")
	typeText(t, a, "service:no-such-service")
	press(t, a, "enter", "e")
	if n := lines(); n != 1 {
		t.Fatalf("a filter that keeps nothing exported %d lines, want the header alone", n)
	}
	press(t, a, "esc", "4", "/")
	typeText(t, a, "amount:>x")
	press(t, a, "enter", "e")
	if !strings.Contains(a.status.Text, "nothing exported: Filter: amount:") {
		t.Fatalf("a refused filter: %q", a.status.Text)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "paydesk-audit-*")); len(files) != 0 {
		t.Fatalf("a refused filter exported %v", files)
	}
}
