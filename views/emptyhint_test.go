package views

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// An empty console suggests --demo only where it works (the embedded
// sandbox); against a test gateway it suggests n, against a live one
// neither.
func TestEmptyConsoleSuggestsWhatWorks(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sandbox, live  bool
		want, wantNot  string
		pushes, pushNo string
	}{
		{"embedded sandbox", true, false, "start again with --demo", "", "Press 1 then n", ""},
		{"test gateway", false, false, "press n", "--demo", "Press 1 then n", "--demo"},
		{"live gateway", false, true, "pushes arrive", "press n", "gateway pushes", "--demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := NewContext(func() time.Time { return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) })
			ctx.CanResend, ctx.Live = tc.sandbox, tc.live
			s := NewReservations(ctx)
			s.SetSize(120, 20)
			s.Update(ReservationRowsMsg{Full: true})
			view := ansi.Strip(s.View())
			if !strings.Contains(strings.ToLower(view), strings.ToLower(tc.want)) || (tc.wantNot != "" && strings.Contains(strings.ToLower(view), strings.ToLower(tc.wantNot))) {
				t.Errorf("reservations, empty:\n%s\nwant %q, not %q", view, tc.want, tc.wantNot)
			}
			h := pushesEmptyHint(ctx)
			if !strings.Contains(h, tc.pushes) || (tc.pushNo != "" && strings.Contains(h, tc.pushNo)) {
				t.Errorf("pushes, empty: %q", h)
			}
		})
	}
}
