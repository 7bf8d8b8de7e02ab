package views

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/shopspring/decimal"

	"paydesk/store"
)

// TestApproveAsksFirst: a on a waiting request asks "approve and send?"
// naming the request, its amount and target, and sends nothing; n or esc
// keeps it waiting; y approves and sends it — the request asked about,
// even when a reload moved the cursor meanwhile. Before, a alone sent
// the refund.
func TestApproveAsksFirst(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	list := []*store.Approval{
		{ID: 3, Created: now.Add(-time.Hour), Expires: now.Add(time.Hour), Requester: "alice", Kind: "refund", Target: "R-3",
			Amount: decimal.RequireFromString("150"), Currency: "EUR", State: store.ApprovalPending},
		{ID: 2, Created: now.Add(-2 * time.Hour), Expires: now.Add(time.Hour), Requester: "dave", Kind: "refund", Target: "R-2",
			Amount: decimal.RequireFromString("120"), Currency: "EUR", State: store.ApprovalPending},
	}
	key := func(p *Approvals, k string) tea.Msg {
		m := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
		if k == "esc" {
			m = tea.KeyPressMsg{Code: tea.KeyEscape}
		}
		if cmd := p.Update(m); cmd != nil {
			return cmd()
		}
		return nil
	}
	const asked = "approve request 3 and send the refund of 150.00 EUR against R-3 now?"
	for _, tc := range []struct {
		name   string
		answer string
		want   Intent // nil: nothing sent
	}{
		{"yes", "y", ApproveIntent{ID: 3}},
		{"no", "n", nil},
		{"esc", "esc", nil},
		{"another key", "d", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewApprovals(NewContext(func() time.Time { return now }), true)
			p.SetSize(120, 30)
			p.Update(ApprovalsMsg{List: list})
			if msg := key(p, "a"); msg != nil {
				t.Fatalf("a alone sent %#v", msg)
			}
			if view := ansi.Strip(p.View()); !strings.Contains(view, asked) || !p.Capturing() {
				t.Fatalf("a asks nothing:\n%s", view)
			}
			// A reload with another request first moves the cursor.
			p.Update(ApprovalsMsg{List: append([]*store.Approval{{ID: 4, Created: now, Expires: now.Add(time.Hour), Requester: "eve",
				Kind: "refund", Target: "R-4", Amount: decimal.RequireFromString("500"), Currency: "EUR", State: store.ApprovalPending}}, list...)})
			msg := key(p, tc.answer)
			var got Intent
			if i, ok := msg.(Intent); ok {
				got = i
			}
			if got != tc.want {
				t.Fatalf("answer %q sent %#v, want %#v", tc.answer, msg, tc.want)
			}
			if tc.want == nil && tc.answer != "d" && strings.Contains(ansi.Strip(p.View()), asked) {
				t.Fatalf("answer %q left the question open", tc.answer)
			}
		})
	}
}
