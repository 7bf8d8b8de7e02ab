package ui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/shopspring/decimal"

	"paydesk/internal/access"
	"paydesk/internal/ops"
	"paydesk/store"
)

// Stand-ins for a service that only answers who may do what: nothing is
// sent by these tests.
type (
	noStore   struct{ ops.Store }
	noGateway struct{ ops.Gateway }
)

func roleService(t testing.TB, user string, role access.Role, over string) *ops.Service {
	t.Helper()
	cfg := ops.Config{Gateway: noGateway{}, Store: noStore{}, Operator: user, Now: func() time.Time { return testNow },
		Principal: access.Principal{User: user, Role: role, Via: access.Local}}
	if over != "" {
		cfg.ApprovalOver = decimal.RequireFromString(over)
	}
	svc, err := ops.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestGoldenRoleWarehouse: carol (warehouse) sees capture in the footer
// and the help, not update or refund; the help says what is not hers;
// pressing u says who may instead of opening the form.
func TestGoldenRoleWarehouse(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, fixture(), w, h, func(c *Config) { c.Ops = roleService(t, "carol", access.Warehouse, "") })
		footer := a.shortHelp()
		var keys []string
		for _, b := range footer {
			keys = append(keys, b.Help().Key)
		}
		if got := strings.Join(keys, " "); strings.Contains(got, " u ") || strings.Contains(got, " f ") || !strings.Contains(got, " c ") {
			t.Fatalf("warehouse footer keys: %s", got)
		}
		press(t, a, "u")
		if !strings.Contains(a.status.Text, "carol (role warehouse) may not update: only agent, admin may") || len(a.dialogs) != 0 {
			t.Fatalf("u as warehouse: %q, %d dialogs", a.status.Text, len(a.dialogs))
		}
		press(t, a, "?")
		golden.RequireEqual(t, ascii(a))
	})
}

// approvalsFake is the fixture with approval requests.
type approvalsFake struct {
	*fakeStore
	list []*store.Approval
}

func (f *approvalsFake) Approvals(ctx context.Context) ([]*store.Approval, error) { return f.list, nil }

func approvalFixture() *approvalsFake {
	d := decimal.RequireFromString
	req := json.RawMessage(`{}`)
	at := testNow.Add(-2 * time.Hour)
	return &approvalsFake{fakeStore: fixture(), list: []*store.Approval{
		{ID: 3, Created: at, Expires: at.Add(72 * time.Hour), Requester: "alice", RequestedBy: "alice", RequesterRole: "agent",
			Kind: "refund", Target: "7A41C2D9E0F14B1C", Amount: d("150.00"), Currency: "EUR", Note: "reason return", Request: req,
			State: store.ApprovalPending},
		{ID: 2, Created: at.Add(-time.Hour), Expires: at.Add(71 * time.Hour), Requester: "dave", RequestedBy: "dave", Kind: "giftcard-refund",
			Target: "5B02D1E3", Amount: d("120.00"), Currency: "EUR", Note: "gift card, reason defect", Request: req,
			State: store.ApprovalDenied, Decider: "bob", Decided: at, Reason: "no receipt"},
		{ID: 1, Created: at.Add(-80 * time.Hour), Expires: at.Add(-8 * time.Hour), Requester: "alice", RequestedBy: "alice", Kind: "return",
			Target: "R0004101", Amount: d("300.00"), Currency: "EUR", Note: "return SHOE-42=5, reason return", Request: req,
			State: store.ApprovalPending},
	}}
}

// TestGoldenApprovals: the Attention tab has a row for the waiting
// request; A opens the Approvals page, where bob (finance) approves or
// denies, the reason typed on the page.
func TestGoldenApprovals(t *testing.T) {
	forSizes(t, func(t *testing.T, w, h int) {
		a := newTestApp(t, approvalFixture(), w, h, func(c *Config) { c.Ops = roleService(t, "bob", access.Finance, "100.00") })
		press(t, a, "0")
		if view := ascii(a); !strings.Contains(view, "needs approval") || !strings.Contains(view, "request 3") {
			t.Fatalf("no attention row for request 3:\n%s", view)
		}
		press(t, a, "A")
		t.Run("list", func(t *testing.T) { golden.RequireEqual(t, ascii(a)) })
		press(t, a, "d")
		typeText(t, a, "no receipt")
		t.Run("deny", func(t *testing.T) { golden.RequireEqual(t, ascii(a)) })
	})
}

// TestApprovalsPageViewer: a role that may not approve sees the requests
// without the deciding keys, and a or d does nothing.
func TestApprovalsPageViewer(t *testing.T) {
	a := newTestApp(t, approvalFixture(), 120, 36, func(c *Config) { c.Ops = roleService(t, "vera", access.Viewer, "100.00") })
	press(t, a, "A", "a", "d")
	view := ascii(a)
	if !strings.Contains(view, "finance or admin decides") || strings.Contains(view, "why?") || strings.Contains(view, "approve and send") {
		t.Fatalf("viewer's approvals page:\n%s", view)
	}
}
