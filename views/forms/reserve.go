package forms

import (
	"fmt"
	"strings"
	"time"

	"paydesk/api"
	"paydesk/internal/ops"
)

// reserveSpec: a new test reservation, prefilled with realistic test data.
type reserveSpec struct {
	base api.Reserve
	mode ops.Mode
	inv  string
	b    addrFields
	cty  string
	fs   []*field
}

// NewTestReservation is the "new test reservation" form: a Reserve with
// prefilled test data, then the customer step (approve or decline in the
// sandbox). Against a live gateway it only says it is refused.
func NewTestReservation(mode ops.Mode, now time.Time, currency string) Form {
	return newTestReservationFrom(mode, ops.TestReservation(now, currency))
}

// newTestReservationFrom is the form for a given Reserve.
func newTestReservationFrom(mode ops.Mode, base api.Reserve) Form {
	s := &reserveSpec{base: base, mode: mode, inv: base.Invoice, b: addrFrom(base.Billing), cty: base.Billing.Country}
	if !mode.IsLive() {
		s.fs = []*field{
			{key: api.FieldInvoice, title: "Invoice", value: &s.inv},
			{key: "BillingFirstName", title: "First name", value: &s.b.FirstName},
			{key: "BillingLastName", title: "Last name", hint: "\"Decline\" is declined by the sandbox's risk check", value: &s.b.LastName},
			{key: "BillingStreet", title: "Street", value: &s.b.Street},
			{key: "BillingHouseNumber", title: "House number", value: &s.b.HouseNumber},
			{key: "BillingPostalCode", title: "Postal code", value: &s.b.PostalCode},
			{key: "BillingCity", title: "City", value: &s.b.City},
			{key: "BillingCountry", title: "Country", value: &s.cty, options: []option{{"NL", "NL"}, {"DE", "DE"}, {"AT", "AT"}}},
			{key: "BillingEmail", title: "E-mail", value: &s.b.Email},
			{key: "BillingPhoneNumber", title: "Phone", value: &s.b.Phone},
		}
	}
	return newKit("reserve", s, mode)
}

func (s *reserveSpec) title() string { return "New test reservation (" + string(s.mode) + ")" }

func (s *reserveSpec) header() string {
	var b strings.Builder
	for _, a := range s.base.Articles {
		fmt.Fprintf(&b, "%-8s %-28s %2d × %7s\n", a.Number, a.Title, a.Quantity, a.Price.StringFixed(2))
	}
	fmt.Fprintf(&b, "Total %s %s", api.ArticlesTotal(s.base.Articles).StringFixed(2), s.base.Currency)
	return b.String()
}

func (s *reserveSpec) fields() []*field { return s.fs }

func (s *reserveSpec) reserve() api.Reserve {
	r := s.base
	r.Invoice = strings.TrimSpace(s.inv)
	t := strings.TrimSpace
	r.Billing = api.Address{FirstName: t(s.b.FirstName), LastName: t(s.b.LastName), Street: t(s.b.Street), HouseNumber: t(s.b.HouseNumber),
		PostalCode: t(s.b.PostalCode), City: t(s.b.City), Country: s.cty, Email: t(s.b.Email), PhoneNumber: t(s.b.Phone)}
	r.Customer.OperatingCountry = s.cty
	return r
}

func (s *reserveSpec) check() check {
	c := check{errs: map[string]string{}}
	if s.mode.IsLive() {
		c.general = append(c.general, "a new test reservation is refused against a live gateway")
		return c
	}
	r := s.reserve()
	if err := r.Validate(api.Rules{}); err != nil {
		if ve, ok := asValidation(err); ok {
			known := map[string]bool{}
			for _, f := range s.fs {
				known[f.key] = true
			}
			for _, fe := range ve.Fields {
				if known[fe.Field] {
					c.errs[fe.Field] = fe.Rule
				} else {
					c.general = append(c.general, fe.String())
				}
			}
		}
		return c
	}
	c.summary = []string{titleStyle.Render("Reserve " + api.ArticlesTotal(r.Articles).StringFixed(2) + " " + r.Currency + " for " + r.Billing.FirstName + " " + r.Billing.LastName)}
	c.sending = sendingText(r.Request(), false)
	c.intent = ops.ReserveRequest{Reserve: r}
	return c
}

// next offers the customer step while the reservation awaits the customer.
func (s *reserveSpec) next(res ops.Result) []choice {
	if !api.IsPending(res.Status) || res.Key == "" {
		return nil
	}
	return []choice{
		{label: "Approve as the customer (sandbox checkout)", intent: ops.CustomerStepRequest{Reservation: res.Key, Approve: true}},
		{label: "Decline as the customer", intent: ops.CustomerStepRequest{Reservation: res.Key, Approve: false}},
		{label: "Close (leave it awaiting the customer)"},
	}
}
