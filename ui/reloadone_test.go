package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"paydesk/api"
	"paydesk/store"
)

// TestReloadAsOne: a change's reload reaches the console as one message
// (one screen drawn, not one per read), and leaves the console as the
// reload message by message does.
func TestReloadAsOne(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change store.Change
	}{
		{"a new reservation", store.Change{Reservations: []string{key32(40)}}},
		{"everything", store.Change{Overflow: true}},
		{"pushes and the audit log", store.Change{Pushes: 2, Audit: true, Ops: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var screens []string
			for _, asOne := range []bool{false, true} {
				f := fixture()
				a := newTestApp(t, f, 120, 36)
				r := &store.Reservation{Key: key32(40), ReservationNumber: "R0004140", Invoice: "INV-2026-0140", Currency: "EUR",
					IsTest: true, CustomerName: "Nina Nieuw", Status: ok190(testNow), Created: testNow, Updated: testNow}
				r.Requests = []store.Request{{Key: r.Key, Action: api.ActionReserve, Status: r.Status}}
				f.res = append(f.res, r)
				if !asOne {
					pump(t, a, a.reload(tc.change))
					screens = append(screens, ascii(a))
					continue
				}
				msg := a.reloadAsOne(changeMsg{Change: tc.change})()
				one, ok := msg.(reloadedMsg)
				if !ok || len(one.msgs) < 2 {
					t.Fatalf("reloadAsOne gave %T with %d results; want one reloadedMsg of the reload's results", msg, len(one.msgs))
				}
				for _, m := range one.msgs {
					if _, batch := m.(tea.BatchMsg); batch {
						t.Fatalf("a batch left in the reload's results")
					}
				}
				_, next := a.Update(one)
				pump(t, a, next)
				screens = append(screens, ascii(a))
			}
			if screens[0] != screens[1] {
				t.Errorf("the console after the reload as one message differs:\n%s\nfrom the reload message by message:\n%s", screens[1], screens[0])
			}
		})
	}
}
