package ops

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"paydesk/api"
	"paydesk/store"
)

// lineOf finds a ledger line.
func lineOf(t *testing.T, r *store.Reservation, article string) store.Line {
	t.Helper()
	for _, l := range r.Lines {
		if l.ArticleNumber == article {
			return l
		}
	}
	t.Fatalf("no line %s", article)
	return store.Line{}
}

// TestDeferredFlow: reserve → approve → capture 2 of 3 units of one line
// and all of another → cancel the remainder → refund one capture partly.
// After every step the ledger, the transaction list and the pushes agree.
func TestDeferredFlow(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	r := e.reserved(ctx)
	number := r.ReservationNumber

	// Capture 2 of 3 shoes and both packs of socks.
	cap1, err := e.svc.Capture(ctx, CaptureRequest{Reservation: number, Quantities: map[string]int{"SHOE-42": 2, "SOCK-3P": 2}})
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	if cap1.Status != api.StatusSuccess || cap1.InvoiceNumber == "" || cap1.Key == "" || cap1.State != store.OpSettled {
		t.Fatalf("capture result %+v", cap1)
	}
	if !cap1.Amount.Equal(dec("148.9")) {
		t.Fatalf("capture amount %s, want 148.90 (2×59.95 + 2×14.50)", cap1.Amount)
	}
	if ok, err := e.svc.Waiter().Push(ctx, cap1.Key, stuck); !ok || err != nil {
		t.Fatalf("no push for the capture: %v", err)
	}
	r = e.mustReservation(number)
	if st := r.State(); st != store.StatePartlyCaptured {
		t.Fatalf("state after capture %s", st)
	}
	if l := lineOf(t, r, "SHOE-42"); l.Captured != 2 || l.Remaining() != 1 {
		t.Fatalf("SHOE-42 ledger %+v", l)
	}
	if l := lineOf(t, r, "SOCK-3P"); l.Captured != 2 || l.Remaining() != 0 {
		t.Fatalf("SOCK-3P ledger %+v", l)
	}
	e.agree(number)

	// Cancel the remainder: 1 shoe and the shipping line.
	can, err := e.svc.Cancel(ctx, CancelRequest{Reservation: number})
	if err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	if can.Status != api.StatusSuccess || !can.Amount.Equal(dec("64.9")) && !can.Amount.IsZero() {
		t.Fatalf("cancel result %+v", can)
	}
	if ok, _ := e.svc.Waiter().Push(ctx, can.Key, stuck); !ok {
		t.Fatal("no push for the cancel")
	}
	r = e.mustReservation(number)
	if st := r.State(); st != store.StateClosed {
		t.Fatalf("state after cancel %s, want closed", st)
	}
	if l := lineOf(t, r, "SHOE-42"); l.Cancelled != 1 || l.Remaining() != 0 {
		t.Fatalf("SHOE-42 after cancel %+v", l)
	}
	if _, err := e.svc.Capture(ctx, CaptureRequest{Reservation: number}); !errors.Is(err, ErrNotPossible) {
		t.Fatalf("capture after close: %v, want ErrNotPossible", err)
	}
	e.agree(number)

	// Refund 20 of the capture, then try to refund more than is left.
	ref, err := e.svc.Refund(ctx, RefundRequest{Transaction: cap1.Key, Amount: ptr(dec("20")), Reason: Reason{Code: ReasonReturn}})
	if err != nil {
		t.Fatalf("Refund: %v", err)
	}
	if ref.Status != api.StatusSuccess || !ref.Amount.Equal(dec("20")) {
		t.Fatalf("refund result %+v", ref)
	}
	if ok, _ := e.svc.Waiter().Push(ctx, ref.Key, stuck); !ok {
		t.Fatal("no push for the refund")
	}
	capTx, err := e.db.Transaction(ctx, cap1.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !capTx.Refundable().Equal(dec("128.9")) {
		t.Fatalf("refundable after 20 back: %s, want 128.90", capTx.Refundable())
	}
	_, err = e.svc.Refund(ctx, RefundRequest{Transaction: cap1.Key, Amount: ptr(dec("128.91")), Reason: Reason{Code: ReasonGoodwill}})
	var ve *api.ValidationError
	if !errors.As(err, &ve) || !ve.Has(api.FieldAmountCredit) {
		t.Fatalf("refund above what is left: %v, want a field error on AmountCredit", err)
	}
	if _, err := e.svc.Refund(ctx, RefundRequest{Transaction: cap1.Key, Reason: Reason{Code: ReasonOther}}); !errors.As(err, &ve) || !ve.Has("Reason") {
		t.Fatalf("refund with reason other and no text: %v", err)
	}
	e.agree(number)

	// The audit log has every action with its operator and reason.
	audit, err := e.db.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"reserve": false, "customer-approve": false, "capture": false, "cancel": false, "refund": false}
	for _, a := range audit {
		if _, ok := want[a.Action]; ok {
			want[a.Action] = true
		}
		if a.Operator != "tester" {
			t.Errorf("audit %s operator %q", a.Action, a.Operator)
		}
		if a.Action == "refund" && a.Reason != "return" {
			t.Errorf("refund audit reason %q", a.Reason)
		}
	}
	for a, seen := range want {
		if !seen {
			t.Errorf("audit log lacks %s", a)
		}
	}
	// The gateway log has every request, without the secret.
	xs, err := e.db.Exchanges(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) < 4 {
		t.Fatalf("gateway log has %d exchanges", len(xs))
	}
	for _, x := range xs {
		if containsSecret(x) {
			t.Fatalf("gateway log entry %d shows the secret", x.ID)
		}
	}
}

func containsSecret(x store.Exchange) bool {
	s := testCreds.SecretKey
	return contains(x.RequestBody, s) || contains(x.ResponseBody, s) || contains([]byte(x.Error), s) || contains([]byte(x.URL), s)
}

func contains(b []byte, s string) bool {
	return len(s) > 0 && len(b) >= len(s) && indexOf(string(b), s) >= 0
}

func indexOf(h, n string) int {
	for i := 0; i+len(n) <= len(h); i++ {
		if h[i:i+len(n)] == n {
			return i
		}
	}
	return -1
}

func (e *env) mustReservation(ref string) *store.Reservation {
	e.t.Helper()
	r, err := e.db.Reservation(context.Background(), ref)
	if err != nil {
		e.t.Fatalf("Reservation %s: %v", ref, err)
	}
	return r
}

// agree checks that the ledger, the transaction list and the pushes tell
// the same story: every capture's amount is its lines at their prices, the
// captured units equal the ledger's, every transaction has its push, and
// the reservation's captured and refunded sums match its transactions.
func (e *env) agree(ref string) {
	e.t.Helper()
	r := e.mustReservation(ref)
	txs, err := e.db.TransactionsFor(context.Background(), ref)
	if err != nil {
		e.t.Fatal(err)
	}
	captured := map[string]int{}
	capturedSum, refundedSum := dec("0"), dec("0")
	for _, tx := range txs {
		ps, err := e.db.PushesFor(context.Background(), tx.Key)
		if err != nil || len(ps) == 0 {
			e.t.Fatalf("transaction %s (%s) has no push (err %v)", tx.Key, tx.Kind, err)
		}
		if !ps[len(ps)-1].Amount.Equal(tx.Amount) {
			e.t.Fatalf("transaction %s amount %s, its push says %s", tx.Key, tx.Amount, ps[len(ps)-1].Amount)
		}
		switch tx.Kind {
		case store.KindCapture:
			capturedSum = capturedSum.Add(tx.Amount)
			if tx.FullCapture {
				continue
			}
			lineSum := dec("0")
			for _, l := range tx.Lines {
				captured[l.ArticleNumber] += l.Quantity
				lineSum = lineSum.Add(lineOf(e.t, r, l.ArticleNumber).Price.Mul(dec("1").Mul(decFromInt(l.Quantity))))
			}
			if !lineSum.Equal(tx.Amount) {
				e.t.Fatalf("capture %s amount %s but its lines add up to %s", tx.Key, tx.Amount, lineSum)
			}
		case store.KindRefund:
			refundedSum = refundedSum.Add(tx.Amount)
		}
	}
	for _, l := range r.Lines {
		if captured[l.ArticleNumber] != l.Captured {
			e.t.Fatalf("line %s: ledger captured %d, transactions say %d", l.ArticleNumber, l.Captured, captured[l.ArticleNumber])
		}
	}
	if !r.CapturedAmount.Equal(capturedSum) || !r.RefundedAmount.Equal(refundedSum) {
		e.t.Fatalf("reservation captured %s refunded %s; transactions %s / %s", r.CapturedAmount, r.RefundedAmount, capturedSum, refundedSum)
	}
	rp, err := e.db.PushesFor(context.Background(), r.Key)
	if err != nil || len(rp) == 0 {
		e.t.Fatalf("the Reserve of %s has no push", ref)
	}
}

// TestGiftCardPartialPaymentAndRefund: a provider B card with 10.00 pays
// part of 30.00 (S003, redirect and remainder 20.00); then the part is
// refunded, partly (the card allows it: B, enabled, contact given) and the
// rest in full.
func TestGiftCardPartialPaymentAndRefund(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{partialRefunds: true})
	pay, err := e.svc.GiftCardPay(ctx, GiftCardPayRequest{ServiceCode: "voucherb",
		Card: api.Card{Provider: api.ProviderB, Number: "6299440000000000023", PIN: "2222"}, Amount: dec("30"), Invoice: "GC-TEST-1"})
	if err != nil {
		t.Fatalf("GiftCardPay: %v", err)
	}
	if !pay.Partial() || pay.SubCode != api.SubCodePartialPayment || !pay.Remainder.Equal(dec("20")) || pay.RedirectURL == "" || pay.GroupTransaction == "" {
		t.Fatalf("partial payment result %+v", pay)
	}
	if ok, _ := e.svc.Waiter().Push(ctx, pay.Key, stuck); !ok {
		t.Fatal("no push for the gift card payment")
	}
	tx, err := e.db.Transaction(ctx, pay.Key)
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Amount.Equal(dec("10")) || tx.Kind != store.KindGiftCardPay {
		t.Fatalf("stored payment %+v", tx)
	}
	// A partial refund without contact details is refused before sending.
	before := e.requests.Load()
	_, err = e.svc.GiftCardRefund(ctx, GiftCardRefundRequest{Transaction: pay.Key,
		Change: GiftCardRefundChange{Amount: ptr(dec("4")), Reason: Reason{Code: ReasonDefect}}})
	var ve *api.ValidationError
	if !errors.As(err, &ve) || !ve.Has(api.PLastName) || !ve.Has(api.PEmail) {
		t.Fatalf("partial refund without contact: %v", err)
	}
	if e.requests.Load() != before {
		t.Fatal("a refused refund reached the gateway")
	}
	ref, err := e.svc.GiftCardRefund(ctx, GiftCardRefundRequest{Transaction: pay.Key, Change: GiftCardRefundChange{Amount: ptr(dec("4")),
		LastName: "Jansen", Email: "jan.jansen@example.com", Reason: Reason{Code: ReasonDefect}}})
	if err != nil || ref.Status != api.StatusSuccess {
		t.Fatalf("partial gift card refund: %+v %v", ref, err)
	}
	if ok, _ := e.svc.Waiter().Push(ctx, ref.Key, stuck); !ok {
		t.Fatal("no push for the gift card refund")
	}
	tx, _ = e.db.Transaction(ctx, pay.Key)
	if !tx.Refundable().Equal(dec("6")) {
		t.Fatalf("left to refund %s, want 6", tx.Refundable())
	}
}

// TestOutcomeUnknownIsNeverResent: the connection drops after the gateway
// processed the capture. The operation is "outcome unknown", a second
// capture is refused without reaching the gateway, and the push that comes
// later settles it.
func TestOutcomeUnknownIsNeverResent(t *testing.T) {
	ctx := context.Background()
	var drop atomic.Bool
	e := newEnv(t, envOpt{front: dropAfterForwarding(&drop)})
	r := e.reserved(ctx)

	e.pushDown.Store(true) // hold the push back until the client has given up
	drop.Store(true)
	before := e.requests.Load()
	res, err := e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if err == nil || !api.IsOutcomeUnknown(err) || !res.OutcomeUnknown() || res.OpID == 0 {
		t.Fatalf("capture over a dropped connection: res %+v err %v, want outcome unknown", res, err)
	}
	if got := e.requests.Load() - before; got != 1 {
		t.Fatalf("%d requests reached the gateway, want 1", got)
	}
	op, err := e.db.Op(ctx, res.OpID)
	if err != nil || op.State != store.OpOutcomeUnknown {
		t.Fatalf("journal entry %+v %v", op, err)
	}
	if r2 := e.mustReservation(r.ReservationNumber); !r2.OutcomeUnknown {
		t.Fatal("the reservation is not marked outcome unknown")
	}

	// The operator presses again: refused, nothing sent.
	drop.Store(false)
	_, err = e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if !errors.Is(err, ErrAlreadyOpen) {
		t.Fatalf("second capture: %v, want ErrAlreadyOpen", err)
	}
	if got := e.requests.Load() - before; got != 1 {
		t.Fatalf("%d requests reached the gateway after the refusal, want 1", got)
	}

	// The push arrives and settles it.
	e.pushDown.Store(false)
	op, ok, err := e.svc.Waiter().Op(ctx, res.OpID, stuck)
	if err != nil || !ok || op.State != store.OpSettled {
		t.Fatalf("after the push: %+v ok=%v err=%v, want settled", op, ok, err)
	}
	r2 := e.mustReservation(r.ReservationNumber)
	if r2.OutcomeUnknown || lineOf(t, r2, "SHOE-42").Captured != 1 {
		t.Fatalf("after the push: outcome unknown %v, SHOE-42 %+v", r2.OutcomeUnknown, lineOf(t, r2, "SHOE-42"))
	}
	audit, _ := e.db.Audit(ctx, 0)
	found := false
	for _, a := range audit {
		if a.Action == "capture" && a.OpID == res.OpID && strings.HasPrefix(a.Result, "outcome unknown") && strings.Contains(a.Result, "; then settled by push: 190") {
			found = true
		}
	}
	if !found {
		t.Fatal("the audit log does not say the capture's outcome was unknown")
	}
}
