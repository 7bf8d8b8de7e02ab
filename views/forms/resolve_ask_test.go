package forms

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/ops"
	"paydesk/store"
)

// TestResolveAsksTheGateway: the resolve form opens on asking the gateway
// (the lookup `paydesk resolve --ask` does); it sends an ask, no note
// needed. By hand still takes a note.
func TestResolveAsksTheGateway(t *testing.T) {
	op := func() *store.PendingOp {
		return &store.PendingOp{ID: 8, Action: "Pay", Service: "deferredkp", Target: "R-20260305-0001", Amount: dec("93.95"), Currency: "EUR",
			State: store.OpOutcomeUnknown, Updated: testNow, Invoice: "T-20260305-1200"}
	}
	tests := []struct {
		name  string
		input []tea.Msg
		want  ops.Intent
	}{
		{"ask", one(press("enter"), press("enter"), press("tab"), press("enter")), ops.AskRequest{OpID: 8}},
		{"by-hand", msgs(one(press("right"), press("enter")), typeText("captured per back office"), one(press("enter"), press("tab"), press("enter"))),
			ops.ResolveRequest{OpID: 8, Note: "captured per back office"}},
		{"by-hand-needs-a-note", one(press("right"), press("enter"), press("enter"), press("tab"), press("enter")), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := runFormUntil(t, NewResolve(op(), ops.ModeSandbox), tt.want != nil, tt.input...)
			if tt.want == nil {
				if len(h.submit) != 0 || !strings.Contains(plainView(h.f), "required: what did the gateway's back office show?") {
					t.Fatalf("sent %v without a note:\n%s", h.submit, plainView(h.f))
				}
				return
			}
			if len(h.submit) != 1 || h.submit[0].Intent != tt.want {
				t.Fatalf("sent %v, want %v:\n%s", h.submit, tt.want, plainView(h.f))
			}
		})
	}
}
