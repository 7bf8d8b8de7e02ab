package ui

import (
	"strings"
	"testing"

	"paydesk/api"
)

// The transaction detail shows the Order and the merchant's name/value
// pairs the gateway echoed.
func TestTransactionDetailShowsEchoedFields(t *testing.T) {
	f := fixture()
	found := false
	for _, tx := range f.txs {
		if tx.TransactionType == api.TypeDeferredRefund {
			tx.Order = "ORDER_NO_77"
			tx.Additional = []api.NameValue{{Name: "initiated_by", Value: "shop"}}
			tx.Custom = []api.NameValue{{Name: "cart", Value: "42\x1b[2J"}}
			found = true
		}
	}
	if !found {
		t.Fatal("the fixture has no C701")
	}
	a := newTestApp(t, f, 120, 40)
	press(t, a, "2", "/")
	typeText(t, a, "c701")
	press(t, a, "enter", "enter")
	screen := ascii(a)
	for _, want := range []string{"ORDER_NO_77", "initiated_by=shop", "cart=42"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("detail lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "\x1b[2J") {
		t.Fatal("an escape sequence from the gateway reached the screen")
	}
}
