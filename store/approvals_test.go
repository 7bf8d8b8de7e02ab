package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"paydesk/store/postgres"
)

// TestApprovals runs on every engine the store suite is run on (bbolt;
// PAYDESK_STORE_BACKEND=postgres: the kv engine) and on the native one
// (TestApprovalsNative).
func TestApprovals(t *testing.T) { approvalRules(t, openTest(t)) }

func TestApprovalsNative(t *testing.T) {
	where := storeTemplate.StoreAt(t, "")
	if where == "" {
		t.Skip("the native engine needs PAYDESK_STORE_BACKEND=postgres and PAYDESK_TEST_PG")
	}
	db, err := Open(where, Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, native := db.repo.(*postgres.Engine); !native {
		t.Fatalf("opened on %T", db.repo)
	}
	approvalRules(t, db)
}

func approvalRules(t *testing.T, db *DB) {
	t.Helper()
	if as, err := db.Approvals(t.Context()); err != nil || len(as) != 0 {
		t.Fatalf("no requests yet: %v %v", as, err)
	}
	if _, err := db.Approval(t.Context(), 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing request: %v", err)
	}
	req := json.RawMessage(`{"Transaction":"K1","Amount":"150"}`)
	mk := func(amount string) *Approval {
		a, err := db.RequestApproval(t.Context(), Approval{Created: t0, Expires: t0.Add(72 * time.Hour), Requester: "alice",
			RequesterRole: "agent", RequestedBy: "alice", Kind: "refund", Target: "K1", Amount: dec(amount), Currency: "EUR",
			Note: "reason return", Request: req})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a1, a2, a3 := mk("150.00"), mk("200.00"), mk("300.00")
	if a1.ID != 1 || a2.ID != 2 || a3.ID != 3 || a1.State != ApprovalPending {
		t.Fatalf("ids %d %d %d state %s", a1.ID, a2.ID, a3.ID, a1.State)
	}
	got, err := db.Approval(t.Context(), 1)
	if err != nil || !got.Amount.Equal(dec("150")) || got.Requester != "alice" || got.Kind != "refund" ||
		!got.Created.Equal(t0) || !got.Expires.Equal(t0.Add(72*time.Hour)) {
		t.Fatalf("read back %+v %v", got, err)
	}
	var m map[string]any
	if err := json.Unmarshal(got.Request, &m); err != nil || m["Transaction"] != "K1" {
		t.Fatalf("request read back %s: %v", got.Request, err)
	}

	tests := []struct {
		name string
		id   uint64
		d    Decision
		want error
		text string
	}{
		{"the requester may not approve", 1, Decision{Decider: "alice", Approve: true, Time: t0.Add(time.Hour)}, ErrSelfApproval, "made by alice"},
		{"nor in other case", 1, Decision{Decider: "Alice", Approve: true, Time: t0.Add(time.Hour)}, ErrSelfApproval, ""},
		{"a denial needs a reason", 2, Decision{Decider: "bob", Time: t0.Add(time.Hour)}, nil, "a reason is required"},
		{"expired", 3, Decision{Decider: "bob", Approve: true, Time: t0.Add(72 * time.Hour)}, ErrApprovalClosed, "is expired"},
		{"missing", 9, Decision{Decider: "bob", Approve: true, Time: t0}, ErrNotFound, ""},
		{"bob approves", 1, Decision{Decider: "bob", DecidedBy: "bob (SHA256:x)", Approve: true, Time: t0.Add(time.Hour)}, nil, ""},
		{"decided once", 1, Decision{Decider: "carol", Approve: true, Time: t0.Add(2 * time.Hour)}, ErrApprovalClosed, "is approved"},
		{"bob denies", 2, Decision{Decider: "bob", Reason: "no receipt", Time: t0.Add(time.Hour)}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := db.DecideApproval(t.Context(), tc.id, tc.d)
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("err %v, want %v", err, tc.want)
			case tc.text != "" && (err == nil || !strings.Contains(err.Error(), tc.text)):
				t.Fatalf("err %v, want it to say %q", err, tc.text)
			case tc.want == nil && tc.text == "" && (err != nil || a.Decider != tc.d.Decider):
				t.Fatalf("decide: %+v %v", a, err)
			}
		})
	}
	if err := db.ApprovalSent(t.Context(), 1, 42, "190 S001 Success"); err != nil {
		t.Fatal(err)
	}
	all, err := db.Approvals(t.Context())
	if err != nil || len(all) != 3 {
		t.Fatalf("list: %v %v", all, err)
	}
	now := t0.Add(80 * time.Hour)
	if all[0].ID != 3 || all[0].StateAt(now) != ApprovalExpired || all[1].StateAt(now) != ApprovalDenied ||
		all[1].Reason != "no receipt" || all[2].StateAt(now) != ApprovalApproved || all[2].OpID != 42 || all[2].Decider != "bob" {
		t.Fatalf("newest first with states: %+v %+v %+v", all[0], all[1], all[2])
	}
	var actions []string
	es, err := db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		actions = append(actions, e.Operator+":"+e.Action)
	}
	want := "bob:approval-deny bob (SHA256:x):approval-approve alice:approval-request alice:approval-request alice:approval-request"
	if got := strings.Join(actions, " "); got != want {
		t.Fatalf("audit %s\nwant %s", got, want)
	}
}
