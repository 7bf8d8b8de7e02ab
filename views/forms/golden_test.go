package forms

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

const goldenW, goldenH = 90, 40

func sized(f Form) Form {
	f.SetSize(goldenW, goldenH)
	f, _ = drive(f, f.Init())
	return f
}

func capture() *store.Transaction {
	return &store.Transaction{Key: "C0FFEE00C0FFEE00C0FFEE00C0FFEE00", Kind: store.KindCapture, Invoice: "T-20260305-1200",
		Currency: "EUR", Amount: dec("59.95"), Refunded: dec("10"), Status: store.Status{Code: api.StatusSuccess, SubCode: "S001"},
		InvoiceNumber: "40001234", ReservationNumber: "R-20260305-0001"}
}

func giftPayment(p api.Provider) *store.Transaction {
	return &store.Transaction{Key: "6A6A6A6A6A6A6A6A6A6A6A6A6A6A6A6A", Kind: store.KindGiftCardPay, ServiceCode: "voucherb",
		Invoice: "GC-1", Currency: "EUR", Amount: dec("10"), Status: store.Status{Code: api.StatusSuccess, SubCode: "S003"}, Provider: p}
}

// TestFormGoldens renders every form as it opens, and each with field
// errors, at a fixed size through the ASCII profile.
func TestFormGoldens(t *testing.T) {
	tests := []struct {
		name  string
		form  func() Form
		input []tea.Msg
	}{
		{"capture", func() Form { return NewCapture(reservation(), ops.ModeSandbox, fixedNow) }, nil},
		{"capture-field-errors", func() Form { return NewCapture(reservation(), ops.ModeSandbox, fixedNow) },
			append(append(clearField(2), typeText("5")...), press("tab"), press("backspace"), press("x"))},
		{"capture-line-done", func() Form {
			r := reservation()
			r.Lines[1].Captured = 2 // the socks are shipped: no input for them
			return NewCapture(r, ops.ModeSandbox, fixedNow)
		}, nil},
		{"cancel", func() Form { return NewCancel(reservation(), ops.ModeSandbox) }, nil},
		{"update", func() Form { return NewUpdate(reservation(), ops.ModeSandbox) }, nil},
		{"update-field-errors", func() Form { return NewUpdate(reservation(), ops.ModeSandbox) },
			append(append([]tea.Msg{press("tab"), press("tab")}, clearField(6)...), typeText("99.00")...)},
		{"refund", func() Form { return NewRefund([]*store.Transaction{capture()}, ops.ModeSandbox) }, nil},
		{"refund-field-errors", func() Form { return NewRefund([]*store.Transaction{capture()}, ops.ModeSandbox) },
			append([]tea.Msg{press("tab")}, typeText("60")...)},
		{"giftcard-pay", func() Form { return NewGiftCardPay(nil, "EUR", "", ops.ModeSandbox) }, nil},
		{"giftcard-pay-field-errors", func() Form { return NewGiftCardPay(nil, "EUR", "", ops.ModeSandbox) },
			append([]tea.Msg{press("tab"), press("tab"), press("tab")}, typeText("12.345")...)},
		{"giftcard-refund", func() Form { return NewGiftCardRefund(giftPayment(api.ProviderB), true, ops.ModeSandbox) }, nil},
		{"giftcard-refund-field-errors", func() Form { return NewGiftCardRefund(giftPayment(api.ProviderA), true, ops.ModeSandbox) },
			typeText("4")},
		{"test-reservation", func() Form {
			return newTestReservationFrom(ops.ModeSandbox, ops.TestReservationWith(testNow, "EUR", "0a1b2c"))
		}, nil},
		{"test-reservation-field-errors", func() Form {
			return newTestReservationFrom(ops.ModeSandbox, ops.TestReservationWith(testNow, "EUR", "0a1b2c"))
		},
			append([]tea.Msg{press("tab"), press("tab"), press("tab"), press("tab"), press("tab"), press("tab"), press("tab"), press("tab")}, typeText("@")...)},
		{"test-reservation-live", func() Form {
			return newTestReservationFrom(ops.ModeLive, ops.TestReservationWith(testNow, "EUR", "0a1b2c"))
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := sized(tt.form())
			f, _ = drive(f, tt.input...)
			out := render(t, f)
			if strings.HasSuffix(tt.name, "field-errors") && !strings.Contains(string(out), "✗ ") {
				t.Fatalf("no field error shown:\n%s", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestCaptureConfirmAndResultGoldens: the confirm step shows exactly what
// will be sent; the result shows the invoice number; an unknown outcome and
// a 491 are shown plainly.
func TestCaptureConfirmAndResultGoldens(t *testing.T) {
	f := sized(NewCapture(reservation(), ops.ModeSandbox, fixedNow))
	f, _ = drive(f, append(append([]tea.Msg{press("a")}, clearField(2)...), typeText("1")...)...)
	f, _ = drive(f, press("enter"), press("enter"), press("enter"))
	if !strings.Contains(f.View(), "[ Send ]") {
		t.Fatalf("not at the confirm step:\n%s", f.View())
	}
	t.Run("confirm", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	f, _ = drive(f, press("d"))
	t.Run("confirm-wire", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })

	// A stray word never sends: the y of "okay", enter on Back.
	f, out := drive(f, typeText("okay")...)
	if len(out) != 0 || !strings.Contains(f.View(), "Nothing was sent") {
		t.Fatalf("okay sent %v:\n%s", out, f.View())
	}
	f, out = drive(f, sendKeys()...)
	if len(out) != 1 {
		t.Fatalf("want one SubmitMsg, got %v", out)
	}
	sub := out[0].(SubmitMsg)
	req := sub.Intent.(ops.CaptureRequest)
	if req.Quantities["SHOE-42"] != 1 || req.Quantities["SOCK-3P"] != 2 || req.Quantities["SHIP"] != 1 {
		t.Fatalf("intent %+v", req)
	}
	// Pressing again while it is on its way sends nothing.
	f, out = drive(f, press("enter"), press("tab"), press("enter"))
	if len(out) != 0 || !f.Busy() {
		t.Fatalf("a second press sent %v (busy %v)", out, f.Busy())
	}
	t.Run("sending", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })

	done, _ := drive(f, ResultMsg{ID: sub.ID, Result: ops.Result{OpID: 7, Action: "Pay", Target: "R-20260305-0001", State: store.OpSettled,
		Key: "AB12AB12AB12AB12AB12AB12AB12AB12", Status: 190, SubCode: "S001", InvoiceNumber: "40001235", Amount: dec("93.95"), Currency: "EUR"}})
	t.Run("result", func(t *testing.T) { golden.RequireEqual(t, render(t, done)) })

	f, sub = sendingCapture(t)
	unknown, _ := drive(f, ResultMsg{ID: sub.ID, Result: ops.Result{OpID: 8, Action: "Pay", State: store.OpOutcomeUnknown, Amount: dec("93.95"), Currency: "EUR"},
		Err: &api.OutcomeUnknownError{Action: "Pay", Err: errors.New("connection reset by peer")}})
	t.Run("outcome-unknown", func(t *testing.T) { golden.RequireEqual(t, render(t, unknown)) })

	f, sub = sendingCapture(t)
	v491, _ := drive(f, ResultMsg{ID: sub.ID, Result: ops.Result{OpID: 9, Action: "Pay", State: store.OpFailed, Status: 491,
		Errors: []api.ErrorItem{{Name: "ArticleQuantity", Error: "ParameterInvalid", ErrorMessage: "article 1 ArticleQuantity: only 1 of article \"SHOE-42\" left to capture"},
			{Name: "AmountDebit", Error: "ParameterInvalid", ErrorMessage: "must equal the captured lines' total 59.95"}}},
		Err: &api.ValidationError{Action: "Pay", Gateway: &api.RequestErrors{}}})
	t.Run("gateway-491", func(t *testing.T) {
		out := render(t, v491)
		if !strings.Contains(string(out), "only 1 of article") || !strings.Contains(string(out), "AmountDebit") {
			t.Fatalf("491 items not shown:\n%s", out)
		}
		golden.RequireEqual(t, out)
	})
}

// TestCapturePastWindowAsksTwice: past the 14-day window the confirm step
// has a second, explicit confirmation; declining it goes back.
func TestCapturePastWindowAsksTwice(t *testing.T) {
	r := reservation()
	r.Created = testNow.AddDate(0, 0, -20)
	f := sized(NewCapture(r, ops.ModeSandbox, fixedNow))
	f, _ = drive(f, press("a"), press("enter"), press("enter"), press("enter"))
	if !strings.Contains(f.View(), "past the 14-day shipment window?") {
		t.Fatalf("no second confirmation:\n%s", f.View())
	}
	t.Run("confirm-late", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	// Send without the tick: refused, and the focus goes to the tick.
	f, out := drive(f, press("tab"), press("tab"), press("enter"))
	if len(out) != 0 || !strings.Contains(f.View(), "Nothing was sent: tick") {
		t.Fatalf("sent without the late confirmation: %v\n%s", out, f.View())
	}
	f, out = drive(f, press("space"), press("tab"), press("tab"), press("enter"))
	if len(out) != 1 || !out[0].(SubmitMsg).Intent.(ops.CaptureRequest).LateConfirmed {
		t.Fatalf("late capture intent %v\n%s", out, f.View())
	}
}

// TestLiveCancelNeedsTheInvoiceNumber: against a live gateway a y does
// nothing; only the typed invoice number sends, and it travels with the
// intent.
func TestLiveCancelNeedsTheInvoiceNumber(t *testing.T) {
	f := sized(NewCancel(reservation(), ops.ModeLive))
	f, out := drive(f, press("y"), press("enter"))
	if len(out) != 0 {
		t.Fatalf("sent without the invoice number: %v", out)
	}
	t.Run("live-confirm", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	f, out = drive(f, append(clearField(1), append(typeText("T-20260305-1200"), press("enter"))...)...)
	if len(out) != 1 || out[0].(SubmitMsg).Intent.(ops.CancelRequest).Confirm != "T-20260305-1200" {
		t.Fatalf("live cancel intent %v\n%s", out, f.View())
	}
}

// sendingCapture is a capture form that has sent its intent.
func sendingCapture(t *testing.T) (Form, SubmitMsg) {
	t.Helper()
	f := sized(NewCapture(reservation(), ops.ModeSandbox, fixedNow))
	f, out := drive(f, append([]tea.Msg{press("a"), press("enter"), press("enter"), press("enter")}, sendKeys()...)...)
	if len(out) != 1 {
		t.Fatalf("no SubmitMsg: %v", out)
	}
	return f, out[0].(SubmitMsg)
}

func TestResolveFormGolden(t *testing.T) {
	op := &store.PendingOp{ID: 8, Action: "Pay", Service: "deferredkp", Target: "R-20260305-0001", Amount: dec("93.95"), Currency: "EUR",
		State: store.OpOutcomeUnknown, Updated: testNow, Error: "Pay: outcome unknown: connection reset by peer"}
	f := sized(NewResolve(op, ops.ModeSandbox))
	t.Run("field-errors", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	f, _ = drive(f, append([]tea.Msg{press("right"), press("enter")}, append(typeText("captured per back office"), press("enter"))...)...)
	f, out := drive(f, sendKeys()...)
	if len(out) != 1 || out[0].(SubmitMsg).Intent.(ops.ResolveRequest).Note != "captured per back office" {
		t.Fatalf("resolve intent %v\n%s", out, f.View())
	}
}

// sendKeys choose the Send button of a confirm step (the focus starts on
// Back) and press it.
func sendKeys() []tea.Msg { return []tea.Msg{press("tab"), press("enter")} }

// twoCaptures is the fixture reservation after two captures: the first
// shipped a shoe and a pack of socks, the second two shoes and the socks.
func twoCaptures() (*store.Reservation, []*store.Transaction) {
	r := reservation()
	r.Lines[0].Captured, r.Lines[1].Captured = 3, 2
	t0 := testNow.Add(-48 * time.Hour)
	c1 := &store.Transaction{Key: "C1C1C1C1C1C1C1C1C1C1C1C1C1C1C1C1", Kind: store.KindCapture, Invoice: r.Invoice, Currency: "EUR",
		Amount: dec("74.45"), Status: store.Status{Code: api.StatusSuccess, Time: t0}, InvoiceNumber: "40001234",
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE-42", Quantity: 1}, {ArticleNumber: "SOCK-3P", Quantity: 1}}}
	c2 := &store.Transaction{Key: "C2C2C2C2C2C2C2C2C2C2C2C2C2C2C2C2", Kind: store.KindCapture, Invoice: r.Invoice, Currency: "EUR",
		Amount: dec("134.40"), Status: store.Status{Code: api.StatusSuccess, Time: t0.Add(time.Hour)}, InvoiceNumber: "40001299",
		Lines: []api.CaptureLine{{ArticleNumber: "SHOE-42", Quantity: 2}, {ArticleNumber: "SOCK-3P", Quantity: 1}}}
	r.CapturedAmount = dec("208.85")
	return r, []*store.Transaction{c1, c2}
}

// TestReturnFormGoldens: the return form lists only lines that can come
// back; two shoes and the socks split over both captures, shown before
// sending, and the intent carries the units.
func TestReturnFormGoldens(t *testing.T) {
	r, txs := twoCaptures()
	f := sized(NewReturn(r, txs, ops.ModeSandbox))
	t.Run("open", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	f, _ = drive(f, append(append(append(clearField(1), typeText("2")...), press("enter")), append(clearField(1), typeText("1")...)...)...)
	f, _ = drive(f, press("enter"), press("backspace"))
	f, _ = drive(f, typeText("4.95")...)
	if !strings.Contains(f.View(), "Refund 139.35 EUR") {
		t.Fatalf("no live total:\n%s", f.View())
	}
	t.Run("filled", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	f, _ = drive(f, press("enter"), press("enter"), press("enter"))
	if !strings.Contains(f.View(), "This sends 2 refunds") {
		t.Fatalf("not at the confirm step:\n%s", f.View())
	}
	t.Run("confirm", func(t *testing.T) { golden.RequireEqual(t, render(t, f)) })
	_, out := drive(f, sendKeys()...)
	if len(out) != 1 {
		t.Fatalf("want one SubmitMsg, got %v", out)
	}
	req := out[0].(SubmitMsg).Intent.(ops.ReturnRequest)
	if req.Units["SHOE-42"] != 2 || req.Units["SOCK-3P"] != 1 || !req.Extra.Equal(dec("4.95")) {
		t.Fatalf("intent %+v", req)
	}
}

// TestUpdateConfirmShowsOldAndNewTotal: the update's confirmation says the
// total before and after, and which line changes how.
func TestUpdateConfirmShowsOldAndNewTotal(t *testing.T) {
	f := sized(NewUpdate(reservation(), ops.ModeSandbox))
	if strings.Contains(stripANSI(f.View()), "✗") {
		t.Fatalf("the update form opens with an error:\n%s", f.View())
	}
	// SHOE-42 keeps 2 of 3.
	f, _ = drive(f, append(clearField(1), typeText("2")...)...)
	for i := 0; i < 11; i++ {
		f, _ = drive(f, press("enter"))
	}
	out := stripANSI(string(render(t, f)))
	for _, want := range []string{"total 213.80", "→ 153.85 EUR", "SHOE-42 3 → 2 units", "What was shipped stays captured (59.95 EUR)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("confirm lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, render(t, f))
}
