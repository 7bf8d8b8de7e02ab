package ui

import (
	"strings"
	"testing"

	"paydesk/api"
	"paydesk/internal/ops"
)

// TestFlowResendLeavesATrace: R on a push asks the embedded sandbox to send
// the key's pushes again; the status line says what was asked, the audit
// log says who asked for which key, and the repeat the sandbox sends shows
// on the Pushes tab as a second receipt of the push stored first (×2), on
// its page with both receipts.
func TestFlowResendLeavesATrace(t *testing.T) {
	e := newFlowEnvWith(t, true)
	r := e.reserveThroughConsole()
	first := e.waitPush(r.Key, api.StatusSuccess)

	e.press("3")
	e.waitText("Reserve")
	e.press("R")
	e.waitText("asked the sandbox to send the pushes of " + r.Key + " again")
	e.waitScreen("the repeat counted on the Pushes tab", func(f string) bool {
		return strings.Contains(f, "×2")
	})
	es, err := e.db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 || es[0].Action != ops.ActionResend || es[0].Target != r.Key || es[0].Operator != "flow-tester" {
		t.Fatalf("newest audit entry %+v, want %q of %s by flow-tester", es[0], ops.ActionResend, r.Key)
	}
	ps, err := e.db.PushesFor(t.Context(), r.Key)
	if err != nil || len(ps) != 1 || ps[0].ID != first.ID {
		t.Fatalf("push log of %s: %d pushes (%v), want the one stored first", r.Key, len(ps), err)
	}

	e.press("enter")
	e.waitText("Push ", "Received 2 times", "first", "repeat")
	e.press("esc")
	e.press("4")
	e.waitText(ops.ActionResend, "flow-tester")
}
