package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/store"
)

// The approvals page is the same list as the other tabs: "/" takes the
// filter language (store.ApprovalFilter: state at the console's time,
// amount, created, operator, words), a filter it refuses shows why and no
// rows, and the cursor's request is the one a and d decide.
func TestApprovalsFilter(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	list := []*store.Approval{
		{ID: 3, Created: now.Add(-time.Hour), Expires: now.Add(time.Hour), Requester: "alice", Kind: "refund", Target: "R-3",
			Amount: decimal.RequireFromString("150"), Currency: "EUR", Note: "return shoes", State: store.ApprovalPending},
		{ID: 2, Created: now.Add(-48 * time.Hour), Expires: now.Add(time.Hour), Requester: "dave", Kind: "giftcard-refund", Target: "G-2",
			Amount: decimal.RequireFromString("120"), Currency: "EUR", Note: "Müller", State: store.ApprovalDenied, Decider: "bob", Reason: "no receipt"},
		{ID: 1, Created: now.Add(-72 * time.Hour), Expires: now.Add(-time.Hour), Requester: "alice", Kind: "return", Target: "R-1",
			Amount: decimal.RequireFromString("300"), Currency: "EUR", State: store.ApprovalPending},
	}
	for _, tc := range []struct {
		filter string
		ids    []uint64
		err    string
	}{
		{"", []uint64{3, 2, 1}, ""},
		{"state:pending", []uint64{3}, ""}, // 1 expired an hour ago
		{"state:expired", []uint64{1}, ""},
		{"operator:bob", []uint64{2}, ""},
		{"amount:>=150", []uint64{3, 1}, ""},
		{"created:<1d", []uint64{3}, ""},
		{"mueller", []uint64{2}, ""},
		{"receipt", []uint64{2}, ""},
		{"customer:x", nil, "Filter: customer: not a field of the approval list"},
		{"state:open", nil, "Filter: state: \"open\" is not a state of the approval list"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			p := NewApprovals(NewContext(func() time.Time { return now }), true)
			p.SetSize(120, 30)
			p.Update(ApprovalsMsg{List: list})
			if tc.filter != "" {
				press(p, append(append([]string{"/"}, typed(tc.filter)...), "enter")...)
			}
			view := ansi.Strip(p.View())
			if tc.err != "" {
				if !strings.Contains(view, tc.err) || p.rows.Len() != 0 && !strings.Contains(view, "Filter:") {
					t.Fatalf("want %q:\n%s", tc.err, view)
				}
				if strings.Contains(view, "R-3") {
					t.Fatalf("a refused filter shows rows:\n%s", view)
				}
				return
			}
			var ids []uint64
			for i := range p.rows.Len() {
				a, _ := p.rows.At(i)
				ids = append(ids, (*a).ID)
			}
			if !equalIDs(ids, tc.ids) {
				t.Fatalf("shows %v, want %v", ids, tc.ids)
			}
			if sel := p.selected(); sel == nil || sel.ID != tc.ids[0] {
				t.Fatalf("the cursor is on %v, want request %d", sel, tc.ids[0])
			}
		})
	}
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
