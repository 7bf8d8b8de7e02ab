package sandbox

import (
	"strings"
	"testing"

	"paydesk/api"
)

// A refusal names its field once: the gateway's item carries the field as
// its Name and the rule as its message, and the error reads "Field: rule",
// never "Field: Field: rule".
func TestRefusalNamesTheFieldOnce(t *testing.T) {
	e := newEnv(t, nil)
	_, number := e.reserved("INV-ONCE")
	for _, c := range []struct {
		name, number, amount, want string
		lines                      []api.CaptureLine
	}{
		{"unknown number", "NO-SUCH-RESERVATION", "30.45", "ReservationNumber: unknown reservation number", nil},
		{"amount off", number, "1.00", "AmountDebit: must equal the captured lines' total", []api.CaptureLine{{ArticleNumber: "A1", Quantity: 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.capture(c.number, c.amount, c.lines...)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Fatalf("error %q lacks %q", msg, c.want)
			}
			for _, f := range []string{api.PReservationNumber, api.FieldAmountDebit} {
				if strings.Contains(msg, f+": "+f) {
					t.Fatalf("error %q names %s twice", msg, f)
				}
			}
		})
	}
}
