package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
	"paydesk/views"
	"paydesk/views/forms"
)

// An operation whose push does not come within pushWait is named in the
// status bar and once in the status line, until its push arrives.
func TestMissingPushIsSaid(t *testing.T) {
	now := testNow
	a := newTestApp(t, fixture(), 120, 36, func(c *Config) { c.Now = func() time.Time { return now } })
	a.Update(forms.ResultMsg{ID: "x", Result: ops.Result{Action: api.ActionPay, Key: "CAPKEY", State: store.OpSettled}})
	a.Update(forms.ResultMsg{ID: "y", Result: ops.Result{Action: api.ActionReserve, Key: "RESKEY", State: store.OpSent}})
	a.Update(forms.ResultMsg{ID: "z", Result: ops.Result{Action: api.ActionRefund, Key: "FAILED", State: store.OpFailed}})
	a.Update(ageTickMsg{})
	if strings.Contains(ansi.Strip(ascii(a)), "no push") {
		t.Fatal("missing push said before the wait was over")
	}
	now = now.Add(pushWait)
	a.Update(ageTickMsg{})
	frame := ansi.Strip(ascii(a))
	if !strings.Contains(frame, "no push ⚠ 1") || !strings.Contains(a.status.Text, "No push has arrived for 1 operation(s)") {
		t.Fatalf("missing push not said:\n%s\nstatus %q", frame, a.status.Text)
	}
	a.Update(views.PushRowsMsg{Rows: views.NewPushRows([]*store.PushRecord{{ID: 9, Key: "CAPKEY", ReceivedAt: now}})})
	if strings.Contains(ansi.Strip(ascii(a)), "no push") {
		t.Fatal("still said after the push arrived")
	}
}
