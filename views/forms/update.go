package forms

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

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

// NewUpdate is the update-reservation form.
func NewUpdate(r *store.Reservation, mode ops.Mode) Form {
	s := &updateSpec{res: r, billing: addrFrom(r.Billing), shipping: addrFrom(r.Shipping)}
	for _, l := range r.Lines {
		s.titles = append(s.titles, l.Title)
		s.qty = append(s.qty, strconv.Itoa(l.Reserved))
		s.price = append(s.price, l.Price.StringFixed(2))
	}
	for i, l := range r.Lines {
		n := Clean(l.ArticleNumber)
		s.fs = append(s.fs,
			&field{key: api.PArticleTitle + "/" + l.ArticleNumber, title: n + " title", value: &s.titles[i]},
			&field{key: api.PArticleQuantity + "/" + l.ArticleNumber, title: n + " quantity",
				hint: fmt.Sprintf("may go down (captured %d)", l.Captured), value: &s.qty[i]},
			&field{key: api.PArticlePrice + "/" + l.ArticleNumber, title: n + " price", hint: "per unit incl. VAT; may go down", value: &s.price[i]},
		)
	}
	addr := func(prefix string, a *addrFields) {
		for _, f := range []struct {
			name string
			v    *string
		}{{"FirstName", &a.FirstName}, {"LastName", &a.LastName}, {"Street", &a.Street}, {"HouseNumber", &a.HouseNumber},
			{"PostalCode", &a.PostalCode}, {"City", &a.City}, {"Email", &a.Email}, {"PhoneNumber", &a.Phone}} {
			if prefix == "Shipping" && (f.name == "Email" || f.name == "PhoneNumber") {
				continue
			}
			s.fs = append(s.fs, &field{key: prefix + f.name, title: prefix + " " + f.name, value: f.v})
		}
	}
	addr("Billing", &s.billing)
	addr("Shipping", &s.shipping)
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
		p, perr := decimal.NewFromString(strings.TrimSpace(strings.ReplaceAll(s.price[i], ",", ".")))
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
