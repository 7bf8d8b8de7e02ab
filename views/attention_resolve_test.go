package views

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

// An unknown outcome's row says "resolve it (o)": o on it opens the resolve
// form of its operation, whether enter opens the reservation or the form;
// o on any other row does nothing.
func TestAttentionResolveKeyOpensTheForm(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		op   *store.PendingOp
		want Intent // nil: no intent
	}{
		{"unknown, with its reservation", &store.PendingOp{ID: 7, Target: "R7", ReservationKey: "K7", State: store.OpOutcomeUnknown, Created: now},
			ResolveIntent{OpID: 7}},
		{"unknown, no reservation", &store.PendingOp{ID: 8, Target: "GC-8", State: store.OpOutcomeUnknown, Created: now},
			ResolveIntent{OpID: 8}},
		{"a failed cancel", &store.PendingOp{ID: 9, Target: "R9", ReservationKey: "K9", State: store.OpFailed, Error: "refused", Created: now},
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAttention(NewContext(func() time.Time { return now }))
			a.SetSize(100, 20)
			a.Update(AttentionOpsMsg{Ops: []*store.PendingOp{tc.op}})
			if a.Count() != 1 {
				t.Fatalf("%d rows, want 1", a.Count())
			}
			cmd := a.Update(tea.KeyPressMsg{Code: 'o', Text: "o"})
			var got Intent
			if cmd != nil {
				got, _ = cmd().(Intent)
			}
			if got != tc.want {
				t.Fatalf("o sent %#v, want %#v", got, tc.want)
			}
		})
	}
}
