package logs

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/shopspring/decimal"

	"paydesk/store"
	"paydesk/views"
)

var t0 = time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)

func ctx() *views.Context {
	c := views.NewContext(func() time.Time { return t0 })
	c.Location = time.UTC
	return c
}

func ascii(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.Ascii}
	if _, err := w.WriteString(s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestAuditGolden(t *testing.T) {
	a := NewAudit(ctx())
	a.SetSize(100, 20)
	a.SetEntries([]store.AuditEntry{
		{ID: 3, Time: t0.Add(2 * time.Minute), Operator: "anna", Action: "refund", Target: "A47283D0E15EA3258FA358B294F80CC3",
			Amount: decimal.RequireFromString("20"), Currency: "EUR", Result: "190 S001 Success key 2DF97C41", Reason: "return", OpID: 4},
		{ID: 2, Time: t0.Add(time.Minute), Operator: "anna", Action: "capture", Target: "R-1", Amount: decimal.RequireFromString("148.9"),
			Currency: "EUR", Result: "outcome unknown: Pay: connection reset", Reason: "partial SHOE-42=2", OpID: 3},
		{ID: 1, Time: t0, Operator: "anna\x1b[31m", Action: "reserve", Target: "T-1", Result: "791 S002 Pending processing"},
	})
	a.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	out := ascii(t, a.View())
	if bytes.Contains(out, []byte("\x1b[31m")) {
		t.Fatal("an escape sequence from the data reached the screen")
	}
	golden.RequireEqual(t, out)
}

func TestGatewayLogGoldenMasksPINs(t *testing.T) {
	g := NewGatewayLog(ctx())
	g.SetSize(100, 40)
	g.SetExchanges([]store.Exchange{{ID: 1, Time: t0, Action: "Pay", Service: "voucherb", Method: "POST",
		URL:          "http://127.0.0.1:8800/json/Transaction",
		RequestBody:  []byte(`{"Currency":"EUR","Invoice":"GC-1","AmountDebit":30,"Services":{"ServiceList":[{"Name":"voucherb","Action":"Pay","Parameters":[{"Name":"VoucherBCardnumber","Value":"6299440000000000023"},{"Name":"VoucherBPIN","Value":"2222"}]}]}}`),
		HTTPStatus:   200,
		ResponseBody: []byte(`{"Key":"ACF1","Status":{"Code":{"Code":190,"Description":"Success"},"SubCode":{"Code":"S003","Description":"partial"},"DateTime":"2026-03-10T15:00:00"}}`),
		Duration:     12 * time.Millisecond}})
	out := ascii(t, g.View())
	if strings.Contains(string(out), "2222") {
		t.Fatalf("the PIN is shown:\n%s", out)
	}
	if !strings.Contains(string(out), "190 S003 Success") || !strings.Contains(string(out), `"AmountDebit": 30`) {
		t.Fatalf("status or pretty body missing:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

// TestAuditFilterDetailOperator: the Operator column stays at 80 columns,
// / filters (backspace on an empty filter stays in it), enter shows one
// entry whole with its long reason wrapped, not cut.
func TestAuditFilterDetailOperator(t *testing.T) {
	a := NewAudit(ctx())
	a.SetSize(80, 22)
	long := "goodwill: the parcel arrived two weeks late and the customer asked for the shipping costs back, agreed by phone"
	a.SetEntries([]store.AuditEntry{
		{ID: 2, Time: t0.Add(time.Minute), Operator: "bram", Action: "refund", Target: "C0FFEE00C0FFEE00C0FFEE00C0FFEE00",
			Amount: decimal.RequireFromString("4.95"), Currency: "EUR", Result: "190 S001 Success", Reason: long, OpID: 5},
		{ID: 1, Time: t0, Operator: "anna", Action: "capture", Target: "R-1", Amount: decimal.RequireFromString("148.9"),
			Currency: "EUR", Result: "190 S001 Success", Reason: "partial SHOE-42=2", OpID: 3},
	})
	if out := string(ascii(t, a.View())); !strings.Contains(out, "Operator") || !strings.Contains(out, "bram") {
		t.Fatalf("no Operator column at 80 columns:\n%s", out)
	}
	key := func(s string) tea.KeyPressMsg {
		switch s {
		case "enter":
			return tea.KeyPressMsg{Code: tea.KeyEnter}
		case "backspace":
			return tea.KeyPressMsg{Code: tea.KeyBackspace}
		}
		return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
	}
	for _, s := range []string{"/", "backspace", "b", "r", "a", "m"} {
		a.Update(key(s))
	}
	if !a.Capturing() {
		t.Fatal("backspace on the empty filter left the filter")
	}
	a.Update(key("enter"))
	if out := string(ascii(t, a.View())); !strings.Contains(out, "1 of 2 entries") || strings.Contains(out, "anna") {
		t.Fatalf("filter bram:\n%s", out)
	}
	a.Update(key("enter"))
	out := ascii(t, a.View())
	if !strings.Contains(string(out), "agreed by phone") {
		t.Fatalf("the long reason is cut in the detail:\n%s", out)
	}
	golden.RequireEqual(t, out)
}
