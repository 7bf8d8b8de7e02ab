package ops

import (
	"context"
	"errors"
	"testing"

	"paydesk/api"
	"paydesk/store"
)

// TestReturnByLineAcrossTwoCaptures: against the embedded sandbox, two
// captures ship the shoes; a return of two shoes (one from each capture)
// and a pack of socks, with return shipping on top, becomes one refund per
// capture, each against the capture that shipped its units; the ledger
// then counts the refunded units per line and refuses units already
// refunded.
func TestReturnByLineAcrossTwoCaptures(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	r := e.reserved(ctx)
	number := r.ReservationNumber

	cap1, err := e.svc.Capture(ctx, CaptureRequest{Reservation: number, Quantities: map[string]int{"SHOE-42": 1, "SOCK-3P": 1}})
	if err != nil || cap1.State != store.OpSettled {
		t.Fatalf("first capture: %+v %v", cap1, err)
	}
	e.waitPush(ctx, cap1.Key)
	cap2, err := e.svc.Capture(ctx, CaptureRequest{Reservation: number, Quantities: map[string]int{"SHOE-42": 2, "SOCK-3P": 1}}) // the shipping line stays open: a partial capture
	if err != nil || cap2.State != store.OpSettled {
		t.Fatalf("second capture: %+v %v", cap2, err)
	}
	e.waitPush(ctx, cap2.Key)

	units := map[string]int{"SHOE-42": 2, "SOCK-3P": 1}
	reason := Reason{Code: ReasonReturn}
	r = e.mustReservation(number)
	txs, err := e.db.TransactionsFor(ctx, number)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanReturn(r, txs, units, dec("4.95"), reason)
	if err != nil {
		t.Fatalf("PlanReturn: %v", err)
	}
	// Oldest capture first: cap1 gives its shoe and its socks, cap2 the
	// second shoe; the return shipping goes where there is room (cap2).
	want := map[string]string{cap1.Key: "74.45", cap2.Key: "64.9"}
	if len(plan.Parts) != 2 || !plan.Total.Equal(dec("139.35")) {
		t.Fatalf("plan: %d parts, total %s; want 2, 139.35", len(plan.Parts), plan.Total)
	}
	for _, p := range plan.Parts {
		if w, ok := want[p.Capture.Key]; !ok || !p.Amount.Equal(dec(w)) {
			t.Fatalf("part against %s: %s %v, want %s", p.Capture.Key, p.Amount, p.Lines, w)
		}
	}

	res, err := e.svc.RefundReturn(ctx, ReturnRequest{Reservation: number, Units: units, Extra: dec("4.95"), Reason: reason})
	if err != nil || !res.OK() {
		t.Fatalf("RefundReturn: %+v %v", res, err)
	}
	if !res.Amount.Equal(dec("139.35")) {
		t.Fatalf("refunded %s, want 139.35", res.Amount)
	}
	// Both refunds, each against its own capture, with their pushes.
	refunds := map[string]*store.Transaction{}
	ok, err := e.svc.Waiter().until(ctx, stuck, func() (bool, error) {
		txs, err := e.db.TransactionsFor(ctx, number)
		for _, tx := range txs {
			if tx.Kind == store.KindRefund && tx.Status.IsSuccess() {
				refunds[tx.Original] = tx
			}
		}
		return len(refunds) == 2, err
	})
	if err != nil || !ok {
		t.Fatalf("refunds in the cache: %d, want 2 (%v)", len(refunds), err)
	}
	for key, w := range want {
		rf := refunds[key]
		if rf == nil || !rf.Amount.Equal(dec(w)) || len(rf.Lines) == 0 {
			t.Fatalf("refund against %s: %+v, want %s with its lines", key, rf, w)
		}
		e.waitPush(ctx, rf.Key)
	}
	r = e.mustReservation(number)
	for art, n := range map[string]int{"SHOE-42": 2, "SOCK-3P": 1, "SHIP": 0} {
		if l := lineOf(t, r, art); l.Refunded != n {
			t.Fatalf("%s refunded %d units, want %d (%+v)", art, l.Refunded, n, l)
		}
	}
	if c1, _ := e.db.Transaction(ctx, cap1.Key); !c1.Refundable().IsZero() {
		t.Fatalf("first capture still refundable %s, want 0", c1.Refundable())
	}
	if c2, _ := e.db.Transaction(ctx, cap2.Key); !c2.Refundable().Equal(dec("69.5")) {
		t.Fatalf("second capture refundable %s, want 69.50", c2.Refundable())
	}
	e.agree(number)

	// The second pack of socks came back too, but not three shoes: one is
	// left that was shipped and not refunded.
	_, err = e.svc.RefundReturn(ctx, ReturnRequest{Reservation: number, Units: map[string]int{"SHOE-42": 2}, Reason: reason})
	var ve *api.ValidationError
	if !errors.As(err, &ve) || !ve.Has(api.PArticleQuantity) {
		t.Fatalf("returning more shoes than are left: %v, want a field error", err)
	}
	res, err = e.svc.RefundReturn(ctx, ReturnRequest{Reservation: number, Units: map[string]int{"SOCK-3P": 1}, Reason: reason})
	if err != nil || !res.OK() || !res.Amount.Equal(dec("14.5")) {
		t.Fatalf("second return: %+v %v", res, err)
	}
	e.waitPush(ctx, res.Key)
	if l := lineOf(t, e.mustReservation(number), "SOCK-3P"); l.Refunded != 2 {
		t.Fatalf("SOCK-3P refunded %d, want 2", l.Refunded)
	}
}

func (e *env) waitPush(ctx context.Context, key string) {
	e.t.Helper()
	if ok, err := e.svc.Waiter().Push(ctx, key, stuck); !ok || err != nil {
		e.t.Fatalf("no push for %s: %v", key, err)
	}
}
