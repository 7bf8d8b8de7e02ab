package api

import "testing"

// ErrorItem.Text says the parameter once, whether the gateway's message
// names it or not.
func TestErrorItemText(t *testing.T) {
	for _, c := range []struct {
		item ErrorItem
		want string
	}{
		{ErrorItem{Name: "ReservationNumber", ErrorMessage: "unknown reservation number"}, "ReservationNumber: unknown reservation number"},
		{ErrorItem{Name: "ReservationNumber", ErrorMessage: "ReservationNumber: unknown reservation number"}, "ReservationNumber: unknown reservation number"},
		{ErrorItem{Name: "AmountDebit", Error: "ParameterInvalid"}, "AmountDebit: ParameterInvalid"},
		{ErrorItem{ErrorMessage: "no such service"}, "no such service"},
	} {
		if got := c.item.Text(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.item, got, c.want)
		}
	}
	ve := &ValidationError{Action: ActionPay, Fields: []FieldError{{Field: FieldAmountDebit, Rule: "must equal 10"}, {Field: "ArticleQuantity", Group: "2", Rule: "too many"}}}
	re := ve.RequestErrors(ServiceDeferred)
	got := (&ValidationError{Action: ActionPay, Gateway: re}).Error()
	if want := "Pay: AmountDebit: must equal 10; ArticleQuantity: article 2: too many"; got != want {
		t.Errorf("a 491 reads %q, want %q", got, want)
	}
}
