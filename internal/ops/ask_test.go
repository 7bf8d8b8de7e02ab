package ops

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store"
)

// The connection dies after the capture was sent; no push comes. Asking the
// gateway settles the operation with what it did, and nothing is sent
// twice.
func TestOutcomeUnknownSettledByAsking(t *testing.T) {
	ctx := context.Background()
	var drop atomic.Bool
	e := newEnv(t, envOpt{front: dropAfterForwarding(&drop)})
	r := e.reserved(ctx)

	e.pushDown.Store(true) // no push settles it: only asking can
	drop.Store(true)
	before := e.requests.Load()
	res, err := e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if !api.IsOutcomeUnknown(err) || !res.OutcomeUnknown() {
		t.Fatalf("capture over a dropped connection: %+v %v, want outcome unknown", res, err)
	}
	drop.Store(false)

	asked, err := e.svc.Ask(ctx, res.OpID)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if asked.State != store.OpSettled || asked.Status != api.StatusSuccess || asked.Key == "" || asked.InvoiceNumber == "" {
		t.Fatalf("after asking: %+v, want settled 190 with the key and invoice number", asked)
	}
	if got := e.requests.Load() - before; got != 1 {
		t.Fatalf("%d requests reached the gateway, want 1: asking must not send again", got)
	}
	op, err := e.db.Op(ctx, res.OpID)
	if err != nil || op.State != store.OpSettled || op.ResultKey != asked.Key {
		t.Fatalf("journal entry %+v %v", op, err)
	}
	r2 := e.mustReservation(r.ReservationNumber)
	if r2.OutcomeUnknown || lineOf(t, r2, "SHOE-42").Captured != 1 {
		t.Fatalf("after asking: outcome unknown %v, SHOE-42 %+v", r2.OutcomeUnknown, lineOf(t, r2, "SHOE-42"))
	}
	if _, err := e.svc.Ask(ctx, res.OpID); !errors.Is(err, ErrNotPossible) {
		t.Fatalf("asking about a settled operation: %v, want ErrNotPossible", err)
	}

	// The late push changes nothing more.
	e.pushDown.Store(false)
	if ok, err := e.svc.Waiter().Push(ctx, asked.Key, stuck); !ok || err != nil {
		t.Fatalf("push after asking: ok=%v err=%v", ok, err)
	}
	if r3 := e.mustReservation(r.ReservationNumber); lineOf(t, r3, "SHOE-42").Captured != 1 {
		t.Fatalf("after the push: SHOE-42 %+v", lineOf(t, r3, "SHOE-42"))
	}
	audit, _ := e.db.Audit(ctx, 0)
	found := false
	for _, a := range audit {
		if a.Action == "ask" && a.OpID == res.OpID && strings.Contains(a.Result, asked.Key) {
			found = true
		}
	}
	if !found {
		t.Fatal("the audit log does not record the asking")
	}
}

// The connection dies before the gateway saw the request: asking finds
// nothing, the operation fails and may be sent again.
func TestAskingFindsNothing(t *testing.T) {
	ctx := context.Background()
	var drop atomic.Bool
	e := newEnv(t, envOpt{front: func(e *env, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !drop.Load() {
				h.ServeHTTP(w, r)
				return
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			conn.Close()
		})
	}})
	r := e.reserved(ctx)
	drop.Store(true)
	res, err := e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if !api.IsOutcomeUnknown(err) {
		t.Fatalf("capture: %v, want outcome unknown", err)
	}
	drop.Store(false)
	asked, err := e.svc.Ask(ctx, res.OpID)
	if err != nil || asked.State != store.OpFailed {
		t.Fatalf("Ask: %+v %v, want failed", asked, err)
	}
	again, err := e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if err != nil || again.State != store.OpSettled {
		t.Fatalf("sending again after asking: %+v %v", again, err)
	}
}

// A Reserve still waiting for the customer: asking reports it pending, and
// once the customer approved, reserved.
func TestAskingAboutAPendingReserve(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	e.pushDown.Store(true)
	res, err := e.svc.Reserve(ctx, TestReservation(time.Now(), "EUR"))
	if err != nil {
		t.Fatal(err)
	}
	asked, err := e.svc.Ask(ctx, res.OpID)
	if err != nil || asked.State != store.OpSent || asked.Status != api.StatusPendingProcessing {
		t.Fatalf("Ask while pending: %+v %v", asked, err)
	}
	if err := e.sb.Approve(ctx, res.Key); err != nil {
		t.Fatal(err)
	}
	asked, err = e.svc.Ask(ctx, res.OpID)
	if err != nil || asked.State != store.OpSettled || asked.Status != api.StatusSuccess {
		t.Fatalf("Ask after approval: %+v %v", asked, err)
	}
}

// The connection dies after the capture was sent and no push comes; nobody
// asks about the operation. The next sync finds the capture among the
// invoice's at the gateway, books it and settles the operation with it:
// nothing is sent twice.
func TestOutcomeUnknownSettledBySync(t *testing.T) {
	ctx := context.Background()
	var drop atomic.Bool
	e := newEnv(t, envOpt{front: dropAfterForwarding(&drop)})
	r := e.reserved(ctx)

	e.pushDown.Store(true)
	drop.Store(true)
	before := e.requests.Load()
	res, err := e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if !api.IsOutcomeUnknown(err) || !res.OutcomeUnknown() {
		t.Fatalf("capture over a dropped connection: %+v %v, want outcome unknown", res, err)
	}
	drop.Store(false)

	got, err := e.svc.Sync(ctx, time.Time{})
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if len(got.Learned) != 1 || got.Learned[0].Kind != api.TypeDeferredPay || len(got.Learned[0].Result.Settled) != 1 ||
		got.Learned[0].Result.Settled[0] != res.OpID {
		t.Fatalf("sync learned %+v, want the capture, settling operation %d", got.Learned, res.OpID)
	}
	if n := e.requests.Load() - before; n != 1 {
		t.Fatalf("%d requests changed money at the gateway, want 1: sync only looks", n)
	}
	op, err := e.db.Op(ctx, res.OpID)
	if err != nil || op.State != store.OpSettled || op.ResultKey != got.Learned[0].Key {
		t.Fatalf("journal entry %+v %v, want settled with the capture's key", op, err)
	}
	r2 := e.mustReservation(r.ReservationNumber)
	if r2.OutcomeUnknown || lineOf(t, r2, "SHOE-42").Captured != 1 {
		t.Fatalf("after sync: outcome unknown %v, SHOE-42 %+v", r2.OutcomeUnknown, lineOf(t, r2, "SHOE-42"))
	}
}
