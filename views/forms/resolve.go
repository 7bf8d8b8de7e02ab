package forms

import (
	"fmt"
	"strings"

	"paydesk/internal/ops"
	"paydesk/store"
)

// resolveSpec closes an operation whose outcome is unknown, by hand, with
// a note saying what the gateway's back office showed.
type resolveSpec struct {
	op   *store.PendingOp
	note string
	fs   []*field
}

// NewResolve is the form that resolves an open operation by hand. A push
// still settles it by itself if it comes first.
func NewResolve(op *store.PendingOp, mode ops.Mode) Form {
	s := &resolveSpec{op: op}
	s.fs = []*field{{key: "Note", title: "Note", hint: "what the gateway's back office shows for it (required; kept in the audit log)", value: &s.note}}
	return newKit("resolve", s, mode)
}

func (s *resolveSpec) title() string { return fmt.Sprintf("Resolve operation %d by hand", s.op.ID) }

func (s *resolveSpec) header() string {
	o := s.op
	amt := ""
	if !o.Amount.IsZero() {
		amt = " · " + o.Amount.StringFixed(2) + " " + o.Currency
	}
	txt := fmt.Sprintf("%s %s on %s%s · %s since %s", o.Service, o.Action, Clean(o.Target), amt,
		strings.ToUpper(strings.ReplaceAll(string(o.State), "_", " ")), o.Updated.Format("2006-01-02 15:04:05"))
	if o.Error != "" {
		txt += "\n" + mutedStyle.Render("why: "+Clean(o.Error))
	}
	return txt + "\n" + mutedStyle.Render("Check the gateway first. Nothing is sent: resolving only closes the journal entry.")
}

func (s *resolveSpec) fields() []*field { return s.fs }

func (s *resolveSpec) check() check {
	c := check{errs: map[string]string{}}
	if !s.op.State.IsOpen() {
		c.general = append(c.general, fmt.Sprintf("operation %d is %s: nothing to resolve", s.op.ID, s.op.State))
		return c
	}
	note := strings.TrimSpace(s.note)
	if note == "" {
		c.errs["Note"] = "required: what did the gateway's back office show?"
		return c
	}
	c.sending = fmt.Sprintf("Nothing goes to the gateway.\nOperation %d (%s %s) is marked resolved with the note:\n%s", s.op.ID, s.op.Action, Clean(s.op.Target), Clean(note))
	c.plain = []string{fmt.Sprintf("Mark operation %d (%s on %s) as resolved by hand, with your note. Nothing is sent to the gateway.", s.op.ID, s.op.Action, Clean(s.op.Target))}
	c.intent = ops.ResolveRequest{OpID: s.op.ID, Note: note}
	return c
}
