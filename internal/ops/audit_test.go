package ops

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"paydesk/api"
	"paydesk/store"
)

// gatewayHook runs before before each request is sent on.
type gatewayHook struct {
	Gateway
	before func()
}

func (g gatewayHook) Do(ctx context.Context, req *api.Request) (*api.Response, error) {
	g.before()
	return g.Gateway.Do(ctx, req)
}

// fullDisk fails the cache's writes after sending as a full disk does.
type fullDisk struct {
	*store.DB
	full        bool // every write fails, not only recording the answer
	applyFailed bool
}

var errNoSpace = fmt.Errorf("write /cache/paydesk.db: %w", syscall.ENOSPC)

func (f *fullDisk) ApplyResponse(context.Context, uint64, *api.Response) (*store.PendingOp, error) {
	f.applyFailed = true
	return nil, errNoSpace
}

func (f *fullDisk) MarkOutcomeUnknown(ctx context.Context, id uint64, reason string) error {
	if f.full {
		return errNoSpace
	}
	return f.DB.MarkOutcomeUnknown(ctx, id, reason)
}

func (f *fullDisk) CompleteAudit(ctx context.Context, id uint64, result string) error {
	if f.full {
		return errNoSpace
	}
	return f.DB.CompleteAudit(ctx, id, result)
}

// TestAuditEntryBeforeSending (F4): the operation's audit entry exists
// while its request is on its way (a process killed then leaves it in the
// log) and is completed with the answer.
func TestAuditEntryBeforeSending(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	r := e.reserved(ctx)
	var inFlight []store.AuditEntry
	svc, err := New(Config{Gateway: gatewayHook{Gateway: e.client, before: func() {
		inFlight, _ = e.db.Audit(ctx, 0)
	}}, Store: e.db, Mode: ModeSandbox, Operator: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if err != nil || !res.OK() {
		t.Fatalf("capture: %+v %v", res, err)
	}
	if len(inFlight) == 0 || inFlight[0].Action != "capture" || inFlight[0].OpID != res.OpID || inFlight[0].Result != store.AuditPending ||
		inFlight[0].Operator != "tester" {
		t.Fatalf("audit log while the capture was being sent: %+v", inFlight)
	}
	after, _ := e.db.Audit(ctx, 0)
	if len(after) != len(inFlight) || after[0].ID != inFlight[0].ID || !strings.HasPrefix(after[0].Result, "190") {
		t.Fatalf("audit entry after the answer: %+v (before %d entries, after %d)", after[0], len(inFlight), len(after))
	}
}

// TestFullDiskAfterSending (F4): when the gateway executed a capture but
// the cache cannot record the answer, the outcome is unknown (exit 3), not
// failed, and the reason says what happened.
func TestFullDiskAfterSending(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(map[bool]string{false: "the answer does not fit", true: "nothing fits"}[full], func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, envOpt{})
			r := e.reserved(ctx)
			e.pushDown.Store(true) // the push would settle it before the test looks
			fd := &fullDisk{DB: e.db, full: full}
			svc, err := New(Config{Gateway: e.client, Store: fd, Mode: ModeSandbox, Operator: "tester"})
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
			if !fd.applyFailed || err == nil || !res.OutcomeUnknown() {
				t.Fatalf("capture on a full disk: state %s, err %v; want outcome unknown", res.State, err)
			}
			for _, want := range []string{"190", "no space left on device"} {
				if !strings.Contains(err.Error(), want) || !strings.Contains(res.Message, want) {
					t.Errorf("reason %q / %q does not say %q", err, res.Message, want)
				}
			}
			op, _ := e.db.Op(ctx, res.OpID)
			if full {
				if op.State != store.OpPending || !strings.Contains(res.Message, "nor mark the journal entry") {
					t.Errorf("journal %s, message %q", op.State, res.Message)
				}
				return
			}
			if op.State != store.OpOutcomeUnknown || !strings.Contains(op.Error, "no space left on device") || !strings.Contains(op.Error, "190") {
				t.Errorf("journal entry: %s %q, want outcome unknown with the true reason", op.State, op.Error)
			}
			audit, _ := e.db.Audit(ctx, 1)
			if len(audit) != 1 || audit[0].OpID != res.OpID || !strings.HasPrefix(audit[0].Result, "outcome unknown") {
				t.Errorf("audit %+v", audit)
			}
		})
	}
}

// cancelAfterSend sends the request on, then cancels the caller's
// context before answering: an operator who gave up (Ctrl-C, a closed
// console) while the gateway was acting on the request.
type cancelAfterSend struct {
	Gateway
	cancel context.CancelFunc
}

func (g cancelAfterSend) Do(ctx context.Context, req *api.Request) (*api.Response, error) {
	resp, err := g.Gateway.Do(context.WithoutCancel(ctx), req)
	g.cancel()
	return resp, err
}

// TestAnswerJournaledAfterTheCallerGaveUp: once a request is sent, its
// answer is journaled and its audit entry completed even though the
// operation's context ended while it was on its way; the operation is
// never left pending.
func TestAnswerJournaledAfterTheCallerGaveUp(t *testing.T) {
	e := newEnv(t, envOpt{})
	r := e.reserved(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	svc, err := New(Config{Gateway: cancelAfterSend{Gateway: e.client, cancel: cancel}, Store: e.db, Mode: ModeSandbox, Operator: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}})
	if err != nil || !res.OK() {
		t.Fatalf("capture: %+v %v", res, err)
	}
	if ctx.Err() == nil {
		t.Fatal("the context was not cancelled while the request was on its way")
	}
	op, err := e.db.Op(t.Context(), res.OpID)
	if err != nil {
		t.Fatal(err)
	}
	if op.State != store.OpSettled {
		t.Fatalf("operation %d is %s after the answer, want %s", op.ID, op.State, store.OpSettled)
	}
	audit, err := e.db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) == 0 || audit[0].OpID != res.OpID || !strings.HasPrefix(audit[0].Result, "190") {
		t.Fatalf("the operation's audit entry was not completed: %+v", audit)
	}
}
