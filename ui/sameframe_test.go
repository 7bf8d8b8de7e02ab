package ui

import (
	"strings"
	"testing"

	"paydesk/store"
)

// TestChangeNoticeDrawsNoFrame: a change notice changes nothing on screen
// before its reload lands, so the frame after it is the frame before (the
// program is handed it again, not drawn: fifty consoles over SSH drew a
// frame for each notice); the reload's frame then shows the pushes the
// notice counted, and any other message draws again.
func TestChangeNoticeDrawsNoFrame(t *testing.T) {
	a := newTestApp(t, fixture(), 120, 36)
	before := a.View().Content
	_, reload := a.Update(changeMsg{Change: store.Change{Pushes: 3}})
	if got := a.View().Content; got != before {
		t.Fatalf("the frame after a change notice was drawn again:\n%s\nwant the frame before:\n%s", got, before)
	}
	pump(t, a, reload)
	after := a.View().Content
	if after == before || !strings.Contains(ascii(a), "+3") {
		t.Fatalf("after the reload the frame does not show the 3 pushes:\n%s", ascii(a))
	}
	if got := a.View().Content; got != after {
		t.Fatal("two frames of an unchanged console differ")
	}
}
