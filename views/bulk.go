package views

import (
	tea "charm.land/bubbletea/v2"

	"paydesk/store"
)

// Bulk actions on the marked reservations: b opens a one-key menu; a money
// action (capture what remains, cancel the rest) becomes a batch on the
// batch page, with its pre-flight, one confirmation and the journal, as a
// manifest does; export writes the marked rows as the export key writes
// the list.

// Bulk action kinds, as the batch journal names them.
const (
	BulkCaptureRest = store.BatchCapture
	BulkCancelRest  = store.BatchCancelRest
)

// BulkIntent asks the console to plan a batch of kind over the marked
// reservations (keys in marking order) and open the batch page on its
// pre-flight.
type BulkIntent struct {
	Kind string
	Keys []string
}

func (BulkIntent) intent() {}

// bulkKey handles a key while the bulk menu is open: it closes the menu
// whatever the key.
func (s *Reservations) bulkKey(msg tea.KeyPressMsg) tea.Cmd {
	s.bulk = false
	rows := s.list.marks.rowsMarked()
	keys := make([]string, len(rows))
	for i := range rows {
		keys[i] = rows[i].Summary.Key
	}
	switch msg.String() {
	case "c":
		return send(BulkIntent{Kind: BulkCaptureRest, Keys: keys})
	case "x":
		return send(BulkIntent{Kind: BulkCancelRest, Keys: keys})
	case "r":
		if !s.ctx.Forwarding {
			return nil
		}
		return send(RedeliverIntent{Request: store.ResendRequest{Reservations: keys},
			What: "the deliveries of the pushes of " + plural(len(keys), "marked reservations") + ", to every endpoint"})
	case "e":
		sums := make([]store.Summary, len(rows))
		for i := range rows {
			sums[i] = rows[i].Summary
		}
		return send(s.export("csv", sums))
	}
	return nil
}

// bulkMenu is the info line while the menu is open.
func (s *Reservations) bulkMenu() string {
	t := s.ctx.Theme
	menu := "c capture what remains · x cancel the rest · e export CSV · "
	if s.ctx.Forwarding {
		menu += "r resend to the shop · "
	}
	return t.Accent.Render(s.list.marksText()+": ") + t.Muted.Render(menu+"esc nothing")
}
