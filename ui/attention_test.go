package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"paydesk/api"
	"paydesk/store"
	"paydesk/views"
)

// attentionStore is the fixture with one of every kind the attention tab
// shows (and the order intake's hook).
type attentionStore struct{ *fakeStore }

func (s attentionStore) AttentionRows(now time.Time) ([]views.AttentionRow, error) {
	return []views.AttentionRow{{Kind: views.AttnOrder, When: now.Add(-2 * time.Hour), Subject: "INV-2026-0199",
		What: "order arrived without a push: ask the customer to finish the checkout, or cancel the order", Open: views.OpenReservation{Key: "INV-2026-0199"}}}, nil
}

func attentionFixture() attentionStore {
	f := fixture()
	r2 := f.res[1]
	// A cancel the gateway refused yesterday, not done since.
	f.ops = append(f.ops, &store.PendingOp{ID: 12, Created: testNow.Add(-26 * time.Hour), Updated: testNow.Add(-26 * time.Hour),
		Action: api.ActionCancelReservation, Service: "deferredkp", Target: r2.ReservationNumber, ReservationKey: r2.Key,
		State: store.OpFailed, Error: "491 ReservationNumber: the reservation is being captured"})
	// A partial gift card payment whose remainder nobody paid.
	g := &store.Transaction{Key: key32(300), Kind: store.KindGiftCardPay, TransactionType: "V238", ServiceCode: "voucherb",
		Invoice: "GC-2026-0203", Currency: "EUR", Amount: dec("10.00"), Status: store.Status{Code: 190, SubCode: "S003", Time: testNow.Add(-5 * time.Hour)},
		RemainderAmount: dec("14.50"), Created: testNow.Add(-5 * time.Hour), Updated: testNow.Add(-5 * time.Hour)}
	f.txs = append(f.txs, g)
	return attentionStore{f}
}

// TestAttentionView runs the console on a cache where things need a person:
// it opens on the attention tab (first in the tab bar, with the count in
// the status bar), most urgent first, and enter on a row opens the place
// where it is fixed.
func TestAttentionView(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeLabel(size.w, size.h), func(t *testing.T) {
			st := attentionFixture()
			screen := &flowScreen{app: New(Config{Store: st, Mode: "sandbox", GatewayURL: "http://127.0.0.1:8800", ListenAddr: "127.0.0.1:8801",
				Now: func() time.Time { return testNow }, Location: time.UTC, ExportDir: t.TempDir(), FixtureDir: t.TempDir()})}
			tm := teatest.NewTestModel(t, flowModel{screen}, teatest.WithInitialTermSize(size.w, size.h),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
			t.Cleanup(func() {
				_ = tm.Quit()
				tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
			})
			wait := func(what string, ok func(string) bool) string {
				t.Helper()
				var got string
				teatest.WaitFor(lastFrameTB{TB: t, what: what, last: &got}, &frameReader{s: screen}, func(b []byte) bool {
					got = lastFrame(b)
					return ok(got)
				}, teatest.WithDuration(flowWait), teatest.WithCheckInterval(10*time.Millisecond))
				return got
			}
			f := wait("the attention tab", func(f string) bool {
				// The status bar's counts load apart from the rows: wait for
				// them too, or the golden may catch "pushes 0".
				return strings.Contains(f, "7 open") && strings.Contains(f, "unpaid remainder") && strings.Contains(f, "order") &&
					strings.Contains(f, "pushes 8") && strings.Contains(f, "⚠ 1")
			})
			first := strings.Split(f, "\n")[0]
			if !strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(first), "paydesk  "), "0 Att") {
				t.Fatalf("the attention tab is not first:\n%s", first)
			}
			if !strings.Contains(f, "⚑ 7") {
				t.Fatalf("no count in the status bar:\n%s", f)
			}
			order := []string{"outcome unknown", "window passed", "change failed", "window closing", "push rejected", "unpaid remainder", "order"}
			last := -1
			for _, w := range order {
				i := strings.Index(f, "\n"+w)
				if i < 0 || i < last {
					t.Fatalf("%q missing or out of order:\n%s", w, f)
				}
				last = i
			}
			golden.RequireEqual(t, []byte(f))

			// The first row (an unknown outcome on R0004108) opens its
			// reservation, where o resolves it.
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			wait("the reservation of the unknown outcome", func(f string) bool {
				return strings.Contains(f, "R0004108") && strings.Contains(f, "esc back")
			})
			// Back, down to the past window, enter: its reservation.
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
			tm.Send(tea.KeyPressMsg{Code: 'j', Text: "j"})
			tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
			wait("the reservation past its window", func(f string) bool {
				return strings.Contains(f, "R0004107") && strings.Contains(f, "esc back")
			})
		})
	}
}

func sizeLabel(w, h int) string { return itoa(w) + "x" + itoa(h) }

func itoa(n int) string {
	s := ""
	for n > 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// conflictStore adds an order the intake refused (409) yesterday, and one
// refused long ago (no longer shown).
type conflictStore struct{ *fakeStore }

func (s conflictStore) OrderConflicts(ctx context.Context, invoice string) ([]*store.Order, error) {
	all := []*store.Order{
		{Invoice: "INV-2026-0107", Currency: "EUR", Source: "intake 10.0.0.7:50312", Received: testNow.Add(-20 * time.Hour),
			Articles: []api.Article{{Number: "SHOE-42", Quantity: 9, Price: dec("59.95")}}},
		{Invoice: "INV-2025-0001", Currency: "EUR", Source: "import old.csv", Received: testNow.Add(-30 * 24 * time.Hour),
			Articles: []api.Article{{Number: "MUG", Quantity: 1, Price: dec("5.00")}}},
	}
	var out []*store.Order
	for _, o := range all {
		if invoice == "" || o.Invoice == invoice {
			out = append(out, o)
		}
	}
	return out, nil
}

// TestAttentionShowsOrderConflicts: an order refused with 409 for other
// lines shows on the attention tab (not only on its reservation page), and
// enter opens the reservation of its invoice.
func TestAttentionShowsOrderConflicts(t *testing.T) {
	st := conflictStore{fixture()}
	screen := &flowScreen{app: New(Config{Store: st, Mode: "sandbox", GatewayURL: "http://127.0.0.1:8800", ListenAddr: "127.0.0.1:8801",
		Now: func() time.Time { return testNow }, Location: time.UTC, ExportDir: t.TempDir(), FixtureDir: t.TempDir()})}
	tm := teatest.NewTestModel(t, flowModel{screen}, teatest.WithInitialTermSize(160, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() {
		_ = tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	var got string
	teatest.WaitFor(lastFrameTB{TB: t, what: "the refused order on the attention tab", last: &got}, &frameReader{s: screen}, func(b []byte) bool {
		got = lastFrame(b)
		return strings.Contains(got, "INV-2026-0107") && strings.Contains(got, "refused (409)")
	}, teatest.WithDuration(flowWait), teatest.WithCheckInterval(10*time.Millisecond))
	if strings.Contains(got, "INV-2025-0001") {
		t.Fatalf("a month-old refused order shows:\n%s", got)
	}
}
