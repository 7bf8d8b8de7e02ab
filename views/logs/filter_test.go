package logs

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

func typeFilter(update func(tea.Msg) tea.Cmd, text string) {
	for _, r := range "/" + text {
		update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	update(tea.KeyPressMsg{Code: tea.KeyEnter})
}

// TestGatewayLogFilterLanguage: "/" on the Gateway tab takes the filter
// language — service:, created: and words, as store.KeepExchange keeps
// them — and a filter it refuses shows "Filter: …" and no rows.
func TestGatewayLogFilterLanguage(t *testing.T) {
	xs := []store.Exchange{
		{ID: 3, Time: t0.Add(-2 * time.Hour), Action: "Refund", Service: "klarnakp", Method: "POST", URL: "http://gw/json/Transaction", HTTPStatus: 200},
		{ID: 2, Time: t0.Add(-26 * time.Hour), Action: "Pay", Service: "klarnakp", Method: "POST", URL: "http://gw/json/Transaction", HTTPStatus: 200},
		{ID: 1, Time: t0.Add(-50 * time.Hour), Action: "Pay", Service: "paypal", Method: "POST", URL: "http://gw/json/Transaction", HTTPStatus: 500, Error: "gateway said 500"},
	}
	for _, tc := range []struct {
		filter string
		want   []string // actions shown, newest first
		err    string
	}{
		{"service:klarna", []string{"Refund", "Pay"}, ""},
		{"service:klarna created:<1d", []string{"Refund"}, ""},
		{"pay", []string{"Pay", "Pay"}, ""},
		{"500", []string{"Pay"}, ""},
		{"operator:anna", nil, "Filter: operator: not a field of the gateway log list"},
		{"created:soon", nil, "Filter: created: soon is not a date or an age"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			g := NewGatewayLog(ctx())
			g.SetSize(120, 30)
			g.SetExchanges(xs)
			typeFilter(g.Update, tc.filter)
			out := string(ascii(t, g.View()))
			if tc.err != "" {
				if !strings.Contains(out, tc.err) || strings.Contains(out, "klarnakp") || !strings.Contains(out, "0 of 3 requests") {
					t.Fatalf("want %q and no rows:\n%s", tc.err, out)
				}
				return
			}
			var got []string
			for i := range g.list.Len() {
				r, _ := g.list.At(i)
				got = append(got, r.v.Action)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAuditFilterLanguage: the Audit tab's "/" takes operator:, amount:
// and created: as `paydesk audit --filter` does (the command line's test
// compares the two on one cache).
func TestAuditFilterLanguage(t *testing.T) {
	a := NewAudit(ctx())
	a.SetSize(120, 30)
	a.SetEntries([]store.AuditEntry{
		{ID: 2, Time: t0, Operator: "Jürgen", Action: "resend pushes", Target: "K2", Result: "asked the sandbox"},
		{ID: 1, Time: t0.Add(-48 * time.Hour), Operator: "anna", Action: "capture", Target: "R-1", Result: "190 S001 Success"},
	})
	typeFilter(a.Update, "operator:jurgen created:<1d")
	if r, ok := a.list.Selected(); a.list.Len() != 1 || !ok || r.v.Target != "K2" {
		t.Fatalf("operator:jurgen created:<1d kept %d rows", a.list.Len())
	}
}
