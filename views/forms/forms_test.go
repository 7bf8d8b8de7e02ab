package forms

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/teacmd"
	"paydesk/store"
)

var testNow = time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return testNow }

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// reservation is a reserved fixture: 3 shoes (1 captured), 2 socks, shipping.
func reservation() *store.Reservation {
	r := &store.Reservation{Key: "A1B2C3D4E5F60718293A4B5C6D7E8F90", ReservationNumber: "R-20260305-0001", Invoice: "T-20260305-1200",
		Currency: "EUR", LinesKnown: true, Created: testNow.Add(-5 * 24 * time.Hour),
		Status: store.Status{Code: api.StatusSuccess}, CustomerName: "Jan Jansen", Country: "NL",
		Lines: []store.Line{
			{ArticleNumber: "SHOE-42", Title: "Trail running shoe, size 42", Price: dec("59.95"), Vat: dec("21"), Reserved: 3, Captured: 1},
			{ArticleNumber: "SOCK-3P", Title: "Merino socks, 3 pairs", Price: dec("14.50"), Vat: dec("21"), Reserved: 2},
			{ArticleNumber: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: dec("4.95"), Vat: dec("21"), Reserved: 1},
		}}
	r.CapturedAmount = dec("59.95")
	return r
}

// render draws a form at a fixed size through the ASCII colour profile.
func render(t *testing.T, f Form) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.Ascii}
	if _, err := w.WriteString(f.View()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+s":
		return tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// drive sends messages to a form, running the commands it returns (and
// theirs) so huh's focus changes take effect; SubmitMsg and CloseMsg are
// collected instead of run.
func drive(f Form, msgs ...tea.Msg) (Form, []tea.Msg) {
	var out []tea.Msg
	queue := append([]tea.Msg(nil), msgs...)
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		var cmd tea.Cmd
		f, cmd = f.Update(m)
		// What a key causes (huh's focus change) happens before the next key.
		queue = append(runCmd(cmd, &out), queue...)
	}
	return f, out
}

// runCmd runs a command to its end, dropping the ones that wait on a
// timer (cursor blinks) so a test never waits for a clock.
func runCmd(cmd tea.Cmd, out *[]tea.Msg) []tea.Msg {
	if cmd == nil || teacmd.Timer(cmd) {
		return nil
	}
	msg := cmd()
	if cmds, ok := sequence(msg); ok {
		var next []tea.Msg
		for _, c := range cmds {
			next = append(next, runCmd(c, out)...)
		}
		return next
	}
	switch m := msg.(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var next []tea.Msg
		for _, c := range m {
			next = append(next, runCmd(c, out)...)
		}
		return next
	case SubmitMsg, CloseMsg:
		*out = append(*out, m)
		return nil
	}
	return []tea.Msg{msg}
}

func typeText(s string) []tea.Msg {
	var ms []tea.Msg
	for _, r := range s {
		ms = append(ms, press(string(r)))
	}
	return ms
}

func clearField(n int) []tea.Msg {
	var ms []tea.Msg
	for i := 0; i < n; i++ {
		ms = append(ms, press("backspace"))
	}
	return ms
}

// sequence unpacks tea.Sequence's unexported message ([]tea.Cmd underneath).
func sequence(msg tea.Msg) ([]tea.Cmd, bool) {
	v := reflect.ValueOf(msg)
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem() != reflect.TypeOf(tea.Cmd(nil)) {
		return nil, false
	}
	cmds := make([]tea.Cmd, v.Len())
	for i := range cmds {
		cmds[i] = v.Index(i).Interface().(tea.Cmd)
	}
	return cmds, true
}
