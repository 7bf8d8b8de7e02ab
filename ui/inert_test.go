package ui

import (
	"net/http"
	"strings"
	"testing"
)

// Every string that came from outside goes through textsafe before it is
// drawn: a customer name, an article title, push headers and a push body
// with raw escape sequences leave no escape sequence in any frame.
func TestEscapeSequencesDrawnInert(t *testing.T) {
	const osc52 = "\x1b]52;c;cm0gLXJmIH4=\x07"
	const clear = "\x1b[2J"
	f := fixture()
	r := f.res[0]
	r.CustomerName = "Mallory" + clear + " Evil"
	r.Invoice = "INV-" + osc52 + "X"
	r.Lines[0].Title = "Scarf" + osc52
	p := f.pushes[0]
	p.Invoice = r.Invoice
	p.Header = http.Header{"X-Evil": {"a" + clear + "b"}, "Authorization": {"hmac k:" + osc52 + ":n:1"}}
	p.Body = []byte(`{"DataRequest":{"Invoice":"` + osc52 + clear + `\u009b31m"}}`) // raw ESC: not JSON
	f.rejected[0].Reason = "signature: " + osc52 + "mismatch"
	f.txs[0].Invoice = "T" + clear

	a := newTestApp(t, f, 120, 36)
	frames := map[string]string{"reservations": a.render()}
	press(t, a, "2")
	frames["transactions"] = a.render()
	press(t, a, "1", "/")
	typeText(t, a, "mallory")
	press(t, a, "enter", "enter")
	frames["reservation detail"] = a.render()
	// Shown as text, its ESC a picture: inert, and nothing hidden.
	if !strings.Contains(frames["reservation detail"], "Mallory␛[2J Evil") {
		t.Fatalf("the detail page did not open:\n%s", plain(frames["reservation detail"]))
	}
	press(t, a, "esc", "esc", "3")
	frames["push log"] = a.render()
	press(t, a, "/")
	typeText(t, a, "inv-␛") // the OSC is text in the invoice now, its ESC a picture
	press(t, a, "enter", "enter")
	frames["push detail"] = a.render()
	if !strings.Contains(plain(frames["push detail"]), "X-Evil: a␛[2Jb") {
		t.Fatalf("the push page does not show the header:\n%s", plain(frames["push detail"]))
	}
	for name, fr := range frames {
		assertInert(t, name, fr)
	}
}
