package forms

import (
	"fmt"
	"strconv"
	"strings"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// updateSpec edits titles, quantities and prices of the lines and the
// addresses; only what changed is sent.
type updateSpec struct {
	res      *store.Reservation
	titles   []string
	qty      []string
	price    []string
	billing  addrFields
	shipping addrFields
	fs       []*field
}

// addrFields are the editable address fields, as typed.
type addrFields struct {
	FirstName, LastName, Street, HouseNumber, PostalCode, City, Email, Phone string
}

func addrFrom(a api.Address) addrFields {
	return addrFields{a.FirstName, a.LastName, a.Street, a.HouseNumber, a.PostalCode, a.City, a.Email, a.PhoneNumber}
}

// changed returns only the fields that differ from the stored address.
func (f addrFields) changed(old api.Address) api.Address {
	var a api.Address
	set := func(dst *string, v, was string) {
		if v = strings.TrimSpace(v); v != was {
			*dst = v
		}
	}
	set(&a.FirstName, f.FirstName, old.FirstName)
	set(&a.LastName, f.LastName, old.LastName)
	set(&a.Street, f.Street, old.Street)
	set(&a.HouseNumber, f.HouseNumber, old.HouseNumber)
	set(&a.PostalCode, f.PostalCode, old.PostalCode)
	set(&a.City, f.City, old.City)
	set(&a.Email, f.Email, old.Email)
	set(&a.PhoneNumber, f.Phone, old.PhoneNumber)
	return a
}

// NewUpdate is the update-reservation form, in plain words and with few
// fields: how many of each line the customer still wants (and, for a line
// nothing of which is shipped yet, its price), the shipping address and the
// customer's e-mail and phone. Lines that are fully shipped or cancelled
// cannot change and are not asked; titles are sent as they are.
func NewUpdate(r *store.Reservation, mode ops.Mode) Form {
	s := &updateSpec{res: r, billing: addrFrom(r.Billing), shipping: addrFrom(r.Shipping)}
	for _, l := range r.Lines {
		s.titles = append(s.titles, l.Title)
		s.qty = append(s.qty, strconv.Itoa(l.Reserved))
		s.price = append(s.price, l.Price.StringFixed(2))
	}
	for i, l := range r.Lines {
		if l.Remaining() == 0 {
			continue
		}
		name := Clean(l.ArticleNumber) + " · " + trunc(Clean(l.Title), 36)
		hint := fmt.Sprintf("now %d; may only go down", l.Reserved)
		if l.Captured > 0 {
			hint += fmt.Sprintf(", not below the %d already shipped", l.Captured)
		}
		s.fs = append(s.fs, &field{key: api.PArticleQuantity + "/" + l.ArticleNumber, title: name + ": how many does the customer keep?",
			hint: hint, value: &s.qty[i]})
		if l.Captured == 0 {
			s.fs = append(s.fs, &field{key: api.PArticlePrice + "/" + l.ArticleNumber, title: name + ": price per unit (" + r.Currency + ")",
				hint: "now " + l.Price.StringFixed(2) + " incl. VAT; may only go down", value: &s.price[i]})
		}
	}
	for _, f := range []struct {
		key, title string
		v          *string
	}{{"ShippingStreet", "Shipping address: street", &s.shipping.Street}, {"ShippingHouseNumber", "Shipping address: house number", &s.shipping.HouseNumber},
		{"ShippingPostalCode", "Shipping address: postal code", &s.shipping.PostalCode}, {"ShippingCity", "Shipping address: city", &s.shipping.City},
		{"BillingEmail", "Customer's e-mail", &s.billing.Email}, {"BillingPhoneNumber", "Customer's phone", &s.billing.Phone}} {
		s.fs = append(s.fs, &field{key: f.key, title: f.title, value: f.v})
	}
	return newKit("update", s, mode)
}

func (s *updateSpec) title() string {
	return "Update reservation " + Clean(s.res.ReservationNumber) + " · reserved " + s.res.Amount().StringFixed(2) + " " + s.res.Currency
}
func (s *updateSpec) header() string   { return lineTable(s.res) }
func (s *updateSpec) fields() []*field { return s.fs }

func (s *updateSpec) check() check {
	c := check{errs: map[string]string{}}
	var arts []api.Article
	linesChanged := false
	for i, l := range s.res.Lines {
		a := api.Article{Number: l.ArticleNumber, Title: strings.TrimSpace(s.titles[i]), Type: l.Type, Vat: l.Vat}
		q, err := strconv.Atoi(strings.TrimSpace(s.qty[i]))
		if err != nil || q < 1 {
			c.errs[api.PArticleQuantity+"/"+l.ArticleNumber] = "must be a positive whole number"
		}
		a.Quantity = q
		p, perr := api.ParsePlainDecimal(s.price[i])
		if perr != nil {
			c.errs[api.PArticlePrice+"/"+l.ArticleNumber] = "must be an amount such as 19.95"
		}
		a.Price = p
		if a.Title == "" {
			c.errs[api.PArticleTitle+"/"+l.ArticleNumber] = "required (ArticleTitle is required on UpdateReservation)"
		}
		if q > l.Reserved {
			c.errs[api.PArticleQuantity+"/"+l.ArticleNumber] = fmt.Sprintf("may only go down (reserved %d)", l.Reserved)
		}
		if perr == nil && p.GreaterThan(l.Price) {
			c.errs[api.PArticlePrice+"/"+l.ArticleNumber] = "may only go down (was " + l.Price.StringFixed(2) + ")"
		}
		if a.Title != l.Title || q != l.Reserved || (perr == nil && !p.Equal(l.Price)) {
			linesChanged = true
		}
		arts = append(arts, a)
	}
	ch := ops.UpdateChange{Billing: s.billing.changed(s.res.Billing), Shipping: s.shipping.changed(s.res.Shipping)}
	if linesChanged {
		ch.Articles = arts
	}
	if len(c.errs) > 0 {
		return c
	}
	if !linesChanged && ch.Billing.IsZero() && ch.Shipping.IsZero() {
		// Not an error: the form has only just opened.
		c.summary = []string{mutedStyle.Render(fmt.Sprintf("Reserved now: %s %s. Nothing changed yet: lower a quantity or a price, or change the address.",
			s.res.Amount().StringFixed(2), s.res.Currency))}
		return c
	}
	op, err := ops.PlanUpdate(s.res, ch)
	if err == nil {
		err = op.Validate(api.Rules{})
	}
	if err != nil {
		if ve, ok := asValidation(err); ok {
			for _, fe := range ve.Fields {
				k := fieldKey(fe)
				if fe.Group != "" && !strings.Contains(k, "/") {
					k = fe.Field
				}
				if fe.Group != "" {
					if n, e := strconv.Atoi(fe.Group); e == nil && n >= 1 && n <= len(s.res.Lines) {
						k = fe.Field + "/" + s.res.Lines[n-1].ArticleNumber // the api numbers groups from 1
					}
				}
				if _, dup := c.errs[k]; !dup {
					if fe.Group == "" && strings.HasPrefix(fe.Field, "Article") {
						c.general = append(c.general, fe.Field+": "+fe.Rule)
						continue
					}
					c.errs[k] = fe.Rule
				}
			}
		} else {
			c.general = append(c.general, err.Error())
		}
		return c
	}
	newTotal := s.res.Amount()
	if linesChanged {
		newTotal = api.ArticlesTotal(arts)
	}
	c.summary = []string{titleStyle.Render(fmt.Sprintf("New total %s %s", newTotal.StringFixed(2), s.res.Currency)) +
		fmt.Sprintf(" (reserved %s) · %s", s.res.Amount().StringFixed(2), changeText(ch))}
	if !ch.Billing.IsZero() || !ch.Shipping.IsZero() {
		c.summary = append(c.summary, mutedStyle.Render("A changed address runs the provider's risk check again; a decline (690) leaves the reservation as it was."))
	}
	r := s.res
	c.plain = []string{fmt.Sprintf("Update reservation %s for %s (invoice %s): total %s → %s %s.", Clean(r.ReservationNumber), who(r.CustomerName),
		Clean(r.Invoice), r.Amount().StringFixed(2), newTotal.StringFixed(2), r.Currency)}
	if linesChanged {
		var p []string
		for i, l := range r.Lines {
			a := arts[i]
			if a.Quantity != l.Reserved {
				p = append(p, fmt.Sprintf("%s %d → %d units", Clean(l.ArticleNumber), l.Reserved, a.Quantity))
			}
			if !a.Price.Equal(l.Price) {
				p = append(p, fmt.Sprintf("%s price %s → %s", Clean(l.ArticleNumber), l.Price.StringFixed(2), a.Price.StringFixed(2)))
			}
			if a.Title != l.Title {
				p = append(p, Clean(l.ArticleNumber)+" title changed")
			}
		}
		c.plain = append(c.plain, "Lines: "+strings.Join(p, "; ")+".")
	}
	if !ch.Shipping.IsZero() {
		c.plain = append(c.plain, "New shipping address: "+Clean(addrText(s.shipping))+". The provider runs its risk check again; a decline leaves the reservation as it was.")
	}
	if !ch.Billing.IsZero() {
		c.plain = append(c.plain, "New contact: "+Clean(strings.TrimSpace(s.billing.Email+" "+s.billing.Phone))+".")
	}
	if r.CapturedAmount.IsPositive() {
		c.plain = append(c.plain, fmt.Sprintf("What was shipped stays captured (%s %s).", r.CapturedAmount.StringFixed(2), r.Currency))
	}
	c.sending = sendingText(op.Request(), false)
	c.intent = ops.UpdateRequest{Reservation: s.res.ReservationNumber, Change: ch}
	return c
}

func changeText(ch ops.UpdateChange) string {
	var p []string
	if len(ch.Articles) > 0 {
		p = append(p, "lines changed")
	}
	if !ch.Billing.IsZero() {
		p = append(p, "billing address changed")
	}
	if !ch.Shipping.IsZero() {
		p = append(p, "shipping address changed")
	}
	if len(p) == 0 {
		return "nothing changed yet"
	}
	return strings.Join(p, ", ")
}

func addrText(a addrFields) string {
	return strings.TrimSpace(strings.Join([]string{strings.TrimSpace(a.Street + " " + a.HouseNumber), strings.TrimSpace(a.PostalCode + " " + a.City)}, ", "))
}
