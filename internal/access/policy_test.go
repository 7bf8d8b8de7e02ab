package access

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestPolicyGrants(t *testing.T) {
	var pol Policy
	tests := []struct {
		role Role
		may  []Action
		not  []Action
	}{
		{Viewer, []Action{Read}, []Action{Capture, Cancel, CancelRest, Refund, Approve, Batch, Users, Redeliver}},
		{Warehouse, []Action{Read, Capture, CancelRest, Batch}, []Action{Cancel, Update, Refund, Approve, Reconcile, Redeliver}},
		{Agent, []Action{Read, Cancel, CancelRest, Update, Refund, Redeliver}, []Action{Capture, Approve, Reconcile, Users}},
		{Finance, []Action{Read, Refund, Approve, Reconcile, Resolve, Redeliver}, []Action{Capture, Cancel, Update, Users, Settings}},
		{Admin, []Action{Read, Capture, Cancel, Refund, Approve, Users, Settings, Redeliver}, nil},
	}
	for _, tc := range tests {
		t.Run(string(tc.role), func(t *testing.T) {
			for _, a := range tc.may {
				if !pol.Allows(tc.role, a) {
					t.Errorf("%s may not %s", tc.role, a)
				}
			}
			for _, a := range tc.not {
				if pol.Allows(tc.role, a) {
					t.Errorf("%s may %s", tc.role, a)
				}
			}
		})
	}
}

func TestRefundLimits(t *testing.T) {
	pol, err := ParseLimits(map[string]string{"agent-refund-limit": "250.00", "finance-refund-limit": "1000"})
	if err != nil {
		t.Fatal(err)
	}
	agent := Principal{User: "alice", Role: Agent}
	if err := pol.CheckRefund(agent, decimal.RequireFromString("250.00")); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	err = pol.CheckRefund(agent, decimal.RequireFromString("1000.01"))
	var de *DeniedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "at most 250.00") ||
		!strings.HasSuffix(err.Error(), "admin may refund it (nothing was sent)") || len(de.May) != 1 {
		t.Fatalf("above every limit but admin's: %v", err)
	}
	if l, ok := (Policy{}).Limit(Agent); !ok || !l.Equal(DefaultAgentRefundLimit) {
		t.Fatalf("default agent limit %s %v", l, ok)
	}
	if _, ok := (Policy{}).Limit(Finance); ok {
		t.Fatal("finance has no limit unless configured")
	}
	for _, bad := range []map[string]string{
		{"agent-limit": "1"}, {"boss-refund-limit": "1"}, {"agent-refund-limit": "ten"},
		{"agent-refund-limit": "-1"}, {"agent-refund-limit": "1.005"},
	} {
		if _, err := ParseLimits(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// FuzzParseLimits: the [roles] table of a config file is outside input:
// whatever it holds is read without a panic, and a limit accepted is a
// positive amount of cents for a known role.
func FuzzParseLimits(f *testing.F) {
	f.Add("agent-refund-limit", "100.00")
	f.Add("finance-refund-limit", "1e3")
	f.Add("boss-refund-limit", "-1")
	f.Add("agent-refund-limit", "0.001")
	f.Fuzz(func(t *testing.T, k, v string) {
		pol, err := ParseLimits(map[string]string{k: v})
		if err != nil {
			return
		}
		if len(pol.RefundLimit) != 1 {
			t.Fatalf("%q=%q: %d limits", k, v, len(pol.RefundLimit))
		}
		for r, l := range pol.RefundLimit {
			if _, err := ParseRole(string(r)); err != nil || !l.IsPositive() || !l.Equal(l.Round(2)) {
				t.Fatalf("%q=%q accepted as %s %s", k, v, r, l)
			}
		}
	})
}
