package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// TestFlowReturnByLineOverTwoCaptures: the whole console against the
// embedded sandbox. A reservation is shipped in two captures; f on its page
// opens the return form, a burst of keys (sent with no delay, as a fast
// typist) returns two shoes (one from each capture) and a pack of socks
// with 4.95 return shipping; the confirmation shows the two refunds before
// sending; after Send each capture has its refund and the page shows the
// refunded units per line.
func TestFlowReturnByLineOverTwoCaptures(t *testing.T) {
	e := newFlowEnv(t)
	r := e.reserveThroughConsole()
	number := r.ReservationNumber
	svc := e.screen.app.cfg.Ops

	cap1, err := svc.Capture(e.ctx, ops.CaptureRequest{Reservation: number, Quantities: map[string]int{"SHOE-42": 1, "SOCK-3P": 1}})
	if err != nil {
		t.Fatalf("first capture: %v", err)
	}
	e.waitPush(cap1.Key, api.StatusSuccess)
	cap2, err := svc.Capture(e.ctx, ops.CaptureRequest{Reservation: number, Quantities: map[string]int{"SHOE-42": 2, "SOCK-3P": 1}})
	if err != nil {
		t.Fatalf("second capture: %v", err)
	}
	e.waitPush(cap2.Key, api.StatusSuccess)

	e.press("enter")
	e.waitScreen("the page after two captures", func(f string) bool {
		return strings.Contains(f, "Reservation "+number) && lineWith(f, "partly captured") && lineCell(f, "SHOE-42", "CAP") == "3"
	})
	e.press("f")
	e.waitText("Refund a return · reservation "+number, "2 capture(s) shipped it")
	// The whole form in one burst: 2 shoes, 1 pack of socks, 4.95 extra,
	// reason return, no text, on to the confirmation.
	for _, k := range []string{"backspace", "2", "enter", "backspace", "1", "enter", "4", ".", "9", "5", "enter", "enter", "enter"} {
		e.tm.Send(flowKey(k))
	}
	e.waitText("Refund 139.35 EUR to", "This sends 2 refunds",
		"74.45 EUR against the capture with invoice "+cap1.InvoiceNumber+" (1 × SHOE-42, 1 × SOCK-3P)",
		"64.90 EUR against the capture with invoice "+cap2.InvoiceNumber+" (1 × SHOE-42 + 4.95 extra)")
	f := e.confirmSend("Refund 1 of 2:", "Refund 2 of 2:", "OriginalTransactionKey "+cap1.Key, "OriginalTransactionKey "+cap2.Key)
	if !strings.Contains(f, "✓ Done") || !strings.Contains(f, "139.35 EUR") || !strings.Contains(f, "2 refunds:") {
		t.Fatalf("return result:\n%s", f)
	}

	refunds := map[string]*store.Transaction{}
	txs, err := e.db.TransactionsFor(t.Context(), number)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range txs {
		if tx.Kind == store.KindRefund {
			e.waitPush(tx.Key, api.StatusSuccess)
			refunds[tx.Original] = e.transaction(tx.Key)
		}
	}
	if a, b := refunds[cap1.Key], refunds[cap2.Key]; a == nil || b == nil || !a.Amount.Equal(dAmt("74.45")) || !b.Amount.Equal(dAmt("64.9")) {
		t.Fatalf("refunds per capture: %+v / %+v", a, b)
	}
	r = e.reservation(number)
	for art, n := range map[string]int{"SHOE-42": 2, "SOCK-3P": 1, "SHIP": 0} {
		for _, l := range r.Lines {
			if l.ArticleNumber == art && l.Refunded != n {
				t.Fatalf("%s refunded %d units, want %d", art, l.Refunded, n)
			}
		}
	}
	e.press("enter") // close the result: the page shows the refunded units
	e.waitScreen("refunded units on the page", func(f string) bool {
		return lineCell(f, "SHOE-42", "REF") == "2" && lineCell(f, "SOCK-3P", "REF") == "1"
	})
}

// TestFlowKeysRightAfterCaptureKey: c and the form's keys in one burst, as
// a scanner or a fast typist sends them before the form is even open: the
// keys wait for the form and land in its fields in order (none reaches the
// list, where they are commands).
func TestFlowKeysRightAfterCaptureKey(t *testing.T) {
	e := newFlowEnv(t)
	r := e.reserveThroughConsole()
	for _, k := range []string{"c", "backspace", "0", "enter", "backspace", "1", "enter", "backspace", "0", "enter"} {
		e.tm.Send(flowKey(k))
	}
	f := e.waitText("Capture 14.50 EUR from", "Ships: 1 × SOCK-3P", "» [ Back ] «")
	if strings.Contains(f, "SHOE-42 Trail") && strings.Contains(f, "Ships: 1 × SHOE") {
		t.Fatalf("keys landed in the wrong fields:\n%s", f)
	}
	if n := e.requests.Load(); n != 1 {
		t.Fatalf("%d gateway requests, want only the Reserve", n)
	}
	if st := e.reservation(r.ReservationNumber).State(); st != store.StateReserved {
		t.Fatalf("state %s: something was sent", st)
	}
}

// TestQuitKeyQuits: q goes through the key hold and still ends the program.
func TestQuitKeyQuits(t *testing.T) {
	screen := &flowScreen{app: New(Config{Store: fixture(), Mode: "sandbox", Now: func() time.Time { return testNow }, Location: time.UTC,
		NoAttentionStart: true})}
	tm := teatest.NewTestModel(t, flowModel{screen}, teatest.WithInitialTermSize(80, 24))
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
