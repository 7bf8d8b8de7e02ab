package forms

import (
	"fmt"
	"strings"

	"paydesk/internal/ops"
	"paydesk/store"
)

// How an open operation is settled: by asking the gateway (a lookup, the
// same as `paydesk resolve --ask`), or by hand with a note.
const (
	resolveAsk  = "ask"
	resolveHand = "hand"
)

// resolveSpec settles an operation whose outcome is unknown: by asking the
// gateway what became of it, or by hand, with a note saying what the
// gateway's back office showed.
type resolveSpec struct {
	op   *store.PendingOp
	how  string
	note string
	fs   []*field
}

// NewResolve is the form that settles an open operation. It opens on
// asking the gateway, which is always safe (nothing is sent again); a push
// still settles the operation by itself if it comes first.
func NewResolve(op *store.PendingOp, mode ops.Mode) Form {
	s := &resolveSpec{op: op, how: resolveAsk}
	s.fs = []*field{
		{key: "How", title: "Settle by", hint: "← → to choose", value: &s.how, options: []option{
			{"asking the gateway (a lookup: nothing is sent again)", resolveAsk}, {"hand, with a note", resolveHand}}},
		{key: "Note", title: "Note", hint: "by hand: what the gateway's back office shows for it (required; kept in the audit log)", value: &s.note},
	}
	return newKit("resolve", s, mode)
}

func (s *resolveSpec) title() string { return fmt.Sprintf("Resolve operation %d", s.op.ID) }

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
	return txt + "\n" + mutedStyle.Render("Asking looks the operation up at the gateway and settles it from the answer.\n"+
		"By hand: check the gateway's back office first; resolving only closes the journal entry.")
}

func (s *resolveSpec) fields() []*field { return s.fs }

func (s *resolveSpec) check() check {
	c := check{errs: map[string]string{}}
	if !s.op.State.IsOpen() {
		c.general = append(c.general, fmt.Sprintf("operation %d is %s: nothing to resolve", s.op.ID, s.op.State))
		return c
	}
	note := strings.TrimSpace(s.note)
	if s.how == resolveAsk {
		c.plain = []string{fmt.Sprintf("Ask the gateway what became of operation %d (%s on %s) and settle it from the answer.", s.op.ID, s.op.Action, Clean(s.op.Target)),
			"A lookup only: the request is never sent again. If the gateway holds nothing for it, it was not processed and the operation fails (it may then be sent again)."}
		c.sending = fmt.Sprintf("A lookup: the status of the operation's key, or (no key known) the transactions of invoice %s.\nNothing is sent again.", Clean(s.op.Invoice))
		c.summary = []string{mutedStyle.Render("Asking needs no note: enter goes on to the confirmation.")}
		c.intent = ops.AskRequest{OpID: s.op.ID}
		return c
	}
	if note == "" {
		c.errs["Note"] = "required: what did the gateway's back office show?"
		return c
	}
	c.sending = fmt.Sprintf("Nothing goes to the gateway.\nOperation %d (%s %s) is marked resolved with the note:\n%s", s.op.ID, s.op.Action, Clean(s.op.Target), Clean(note))
	c.plain = []string{fmt.Sprintf("Mark operation %d (%s on %s) as resolved by hand, with your note. Nothing is sent to the gateway.", s.op.ID, s.op.Action, Clean(s.op.Target))}
	c.intent = ops.ResolveRequest{OpID: s.op.ID, Note: note}
	return c
}
