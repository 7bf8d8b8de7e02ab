package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// as is a service on the same cache and gateway acting as user with role,
// under pol, with refunds above over kept for approval, on clock now.
func (e *env) as(user string, role access.Role, pol access.Policy, over string, now func() time.Time) *Service {
	e.t.Helper()
	cfg := e.svc.cfg
	cfg.Operator = user
	cfg.Principal = access.Principal{User: user, Role: role, Via: access.Socket}
	cfg.Policy = pol
	if over != "" {
		cfg.ApprovalOver = dec(over)
	}
	if now != nil {
		cfg.Now = now
	}
	s, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// captured is a reservation captured in full, and its capture's key.
func (e *env) captured(ctx context.Context) (*store.Reservation, string) {
	e.t.Helper()
	r := e.reserved(ctx)
	c, err := e.svc.Capture(ctx, CaptureRequest{Reservation: r.ReservationNumber})
	if err != nil || c.State != store.OpSettled {
		e.t.Fatalf("capture: %+v %v", c, err)
	}
	return r, c.Key
}

func (e *env) journalLen() int {
	e.t.Helper()
	ops, err := e.db.Ops(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return len(ops)
}

// TestRoleRefusalsSendNothing: an action a role may not do is refused
// before anything is journaled or sent, and the refusal names the roles
// that may; what the role may do goes through.
func TestRoleRefusalsSendNothing(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	_, capKey := e.captured(ctx)
	open := e.reserved(ctx) // nothing captured: a cancel is a whole cancel
	pol := access.Policy{RefundLimit: map[access.Role]decimal.Decimal{access.Agent: dec("100.00")}}
	refund := func(amount string) Intent {
		return RefundRequest{Transaction: capKey, Amount: ptr(dec(amount)), Reason: Reason{Code: ReasonReturn}}
	}
	tests := []struct {
		name   string
		role   access.Role
		intent Intent
		want   string // the roles the refusal names
	}{
		{"a viewer does not capture", access.Viewer, CaptureRequest{Reservation: open.ReservationNumber}, "only warehouse, admin may"},
		{"finance does not capture", access.Finance, CaptureRequest{Reservation: open.ReservationNumber}, "only warehouse, admin may"},
		{"the warehouse does not refund", access.Warehouse, refund("10"), "only agent, finance, admin may"},
		{"the warehouse cancels only the rest", access.Warehouse, CancelRequest{Reservation: open.ReservationNumber}, "only agent, admin may"},
		{"the warehouse does not update", access.Warehouse, UpdateRequest{Reservation: open.ReservationNumber,
			Change: UpdateChange{Shipping: api.Address{City: "Utrecht"}}}, "only agent, admin may"},
		{"an agent refunds up to the limit", access.Agent, refund("100.01"), "may refund at most 100.00 at once, not 100.01: finance, admin may refund it"},
		{"a viewer does not resolve", access.Viewer, ResolveRequest{OpID: 1, Note: "x"}, "only finance, admin may"},
		{"the warehouse takes no payment", access.Warehouse, ReserveRequest{Reserve: TestReservation(time.Now(), "EUR")}, "only agent, finance, admin may"},
		{"a viewer does not approve", access.Viewer, ApproveRequest{ID: 1}, "only finance, admin may"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sent, journal := e.requests.Load(), e.journalLen()
			_, err := tc.intent.Run(ctx, e.as("carol", tc.role, pol, "", nil))
			if !errors.Is(err, access.ErrDenied) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Fatalf("err %v, want a refusal naming %q", err, tc.want)
			}
			if e.requests.Load() != sent || e.journalLen() != journal {
				t.Fatalf("refused, yet %d requests sent and %d journal entries made", e.requests.Load()-sent, e.journalLen()-journal)
			}
		})
	}
	// What the roles may do goes through.
	if res, err := refund("100.00").Run(ctx, e.as("alice", access.Agent, pol, "", nil)); err != nil || res.State != store.OpSettled {
		t.Fatalf("an agent's refund within the limit: %+v %v", res, err)
	}
	if res, err := (CaptureRequest{Reservation: open.ReservationNumber, Quantities: map[string]int{"SHOE-42": 1}}).Run(ctx,
		e.as("carol", access.Warehouse, pol, "", nil)); err != nil || res.State != store.OpSettled {
		t.Fatalf("the warehouse's capture: %+v %v", res, err)
	}
	if res, err := (CancelRequest{Reservation: open.ReservationNumber}).Run(ctx, e.as("carol", access.Warehouse, pol, "", nil)); err != nil || !res.OK() {
		t.Fatalf("the warehouse cancels the rest: %+v %v", res, err)
	}
}

// TestFourEyes: alice (agent) asks for a 150.00 refund above the approval
// threshold: kept, nothing sent; she cannot approve it herself; bob
// (finance) approves and it is sent and settled; the audit log holds the
// request, the decision and the send, each with who.
func TestFourEyes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	_, capKey := e.captured(ctx)
	pol := access.Policy{}
	alice := e.as("alice", access.Agent, pol, "100.00", nil)
	bob := e.as("bob", access.Finance, pol, "100.00", nil)

	sent, journal := e.requests.Load(), e.journalLen()
	res, err := alice.Refund(ctx, RefundRequest{Transaction: capKey, Amount: ptr(dec("150.00")), Reason: Reason{Code: ReasonReturn}})
	if err != nil || !res.AwaitsApproval() || !res.OK() || res.Approval == 0 {
		t.Fatalf("alice's refund: %+v %v", res, err)
	}
	if e.requests.Load() != sent || e.journalLen() != journal {
		t.Fatal("a refund kept for approval was sent or journaled")
	}
	id := res.Approval
	if _, err := alice.Approve(ctx, id); !errors.Is(err, access.ErrDenied) {
		t.Fatalf("alice (agent) approving: %v", err)
	}
	// Self-approval is refused even for a role that may approve.
	aliceFinance := e.as("alice", access.Finance, pol, "100.00", nil)
	if _, err := aliceFinance.Approve(ctx, id); !errors.Is(err, store.ErrSelfApproval) {
		t.Fatalf("alice approving her own: %v", err)
	}
	if e.requests.Load() != sent {
		t.Fatal("a refused approval sent something")
	}
	got, err := bob.Approve(ctx, id)
	if err != nil || got.State != store.OpSettled || !got.Amount.Equal(dec("150")) || got.Approval != id || got.OpID == 0 {
		t.Fatalf("bob's approval: %+v %v", got, err)
	}
	if _, err := bob.Approve(ctx, id); !errors.Is(err, store.ErrApprovalClosed) {
		t.Fatalf("approved twice: %v", err)
	}
	capTx, err := e.db.Transaction(ctx, capKey)
	if err != nil || !capTx.Refunded.Equal(dec("150")) {
		t.Fatalf("capture after the approved refund: refunded %v %v", capTx.Refunded, err)
	}
	a, err := e.db.Approval(ctx, id)
	if err != nil || a.State != store.ApprovalApproved || a.Decider != "bob" || a.OpID != got.OpID || !strings.Contains(a.Result, "190") {
		t.Fatalf("request after approval: %+v %v", a, err)
	}
	op, err := e.db.Op(ctx, got.OpID)
	if err != nil || op.Operator != "bob" {
		t.Fatalf("the send is bob's: %+v %v", op, err)
	}
	entries, err := e.db.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var trail []string
	for _, en := range entries {
		switch en.Action {
		case "approval-request", "approval-approve", "approval-deny", "refund":
			trail = append(trail, en.Operator+" "+en.Action+" "+en.Reason)
		}
	}
	want := []string{
		"bob refund return; approval request 1 by alice",
		"bob approval-approve ",
		"alice approval-request reason return",
	}
	if strings.Join(trail, "|") != strings.Join(want, "|") {
		t.Fatalf("audit trail\n%s\nwant\n%s", strings.Join(trail, "\n"), strings.Join(want, "\n"))
	}
}

// TestApprovalExpiresAndDenied: a request past its time cannot be
// approved; a denied one is never sent; a denial needs a reason.
func TestApprovalExpiresAndDenied(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	_, capKey := e.captured(ctx)
	clock := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	alice := e.as("alice", access.Agent, access.Policy{}, "100.00", now)
	bob := e.as("bob", access.Finance, access.Policy{}, "100.00", now)
	ask := func() uint64 {
		res, err := alice.Refund(ctx, RefundRequest{Transaction: capKey, Amount: ptr(dec("120.00")), Reason: Reason{Code: ReasonDefect}})
		if err != nil || !res.AwaitsApproval() {
			t.Fatalf("request: %+v %v", res, err)
		}
		return res.Approval
	}
	first, second := ask(), ask()
	sent := e.requests.Load()
	if err := bob.Deny(ctx, first, " "); err == nil || !strings.Contains(err.Error(), "a reason is required") {
		t.Fatalf("deny without a reason: %v", err)
	}
	if err := bob.Deny(ctx, first, "no receipt"); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(DefaultApprovalTTL)
	if _, err := bob.Approve(ctx, second); !errors.Is(err, store.ErrApprovalClosed) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("approving an expired request: %v", err)
	}
	if _, err := bob.Approve(ctx, first); !errors.Is(err, store.ErrApprovalClosed) {
		t.Fatalf("approving a denied request: %v", err)
	}
	if e.requests.Load() != sent {
		t.Fatal("a denied or expired request was sent")
	}
}

// TestApproverLimit: an approver whose own limit is below the amount
// leaves the request pending for another.
func TestApproverLimit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	_, capKey := e.captured(ctx)
	pol := access.Policy{RefundLimit: map[access.Role]decimal.Decimal{access.Finance: dec("120.00")}}
	res, err := e.as("alice", access.Agent, pol, "50.00", nil).Refund(ctx, RefundRequest{Transaction: capKey, Amount: ptr(dec("130.00")), Reason: Reason{Code: ReasonReturn}})
	if err != nil || !res.AwaitsApproval() {
		t.Fatalf("request: %+v %v", res, err)
	}
	if _, err := e.as("bob", access.Finance, pol, "50.00", nil).Approve(ctx, res.Approval); !errors.Is(err, access.ErrDenied) || !strings.Contains(err.Error(), "admin may refund it") {
		t.Fatalf("bob above his limit: %v", err)
	}
	if a, _ := e.db.Approval(ctx, res.Approval); a.State != store.ApprovalPending {
		t.Fatalf("left %s, want pending", a.State)
	}
	if got, err := e.as("root", access.Admin, pol, "50.00", nil).Approve(ctx, res.Approval); err != nil || got.State != store.OpSettled {
		t.Fatalf("admin approves: %+v %v", got, err)
	}
}

// TestFourEyesReturn: a return refunded by line above the threshold is
// one request for the whole return; approved, its refunds go out by line.
func TestFourEyesReturn(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpt{})
	r, capKey := e.captured(ctx)
	alice := e.as("alice", access.Agent, access.Policy{}, "100.00", nil)
	sent := e.requests.Load()
	res, err := alice.RefundReturn(ctx, ReturnRequest{Reservation: r.ReservationNumber, Units: map[string]int{"SHOE-42": 2},
		Reason: Reason{Code: ReasonReturn}})
	if err != nil || !res.AwaitsApproval() || !res.Amount.Equal(dec("119.90")) || e.requests.Load() != sent {
		t.Fatalf("return request: %+v %v", res, err)
	}
	a, err := e.db.Approval(ctx, res.Approval)
	if err != nil || a.Kind != "return" || !strings.Contains(a.Note, "SHOE-42=2") {
		t.Fatalf("request %+v %v", a, err)
	}
	got, err := e.as("bob", access.Finance, access.Policy{}, "100.00", nil).Approve(ctx, res.Approval)
	if err != nil || got.State != store.OpSettled {
		t.Fatalf("approve the return: %+v %v", got, err)
	}
	op, err := e.db.Op(ctx, got.OpID)
	if err != nil || len(op.Lines) != 1 || op.Lines[0].ArticleNumber != "SHOE-42" || op.Lines[0].Quantity != 2 || op.Target != capKey {
		t.Fatalf("the refund by line: %+v %v", op, err)
	}
}
