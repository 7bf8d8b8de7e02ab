package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// addressFields are the keys of update --billing and --shipping.
var addressFields = map[string]func(*api.Address) *string{
	"first-name":          func(a *api.Address) *string { return &a.FirstName },
	"last-name":           func(a *api.Address) *string { return &a.LastName },
	"care-of":             func(a *api.Address) *string { return &a.CareOf },
	"company":             func(a *api.Address) *string { return &a.Company },
	"street":              func(a *api.Address) *string { return &a.Street },
	"house-number":        func(a *api.Address) *string { return &a.HouseNumber },
	"house-number-suffix": func(a *api.Address) *string { return &a.HouseNumberSuffix },
	"postal-code":         func(a *api.Address) *string { return &a.PostalCode },
	"city":                func(a *api.Address) *string { return &a.City },
	"country":             func(a *api.Address) *string { return &a.Country },
	"email":               func(a *api.Address) *string { return &a.Email },
	"cell-phone":          func(a *api.Address) *string { return &a.CellPhoneNumber },
	"phone":               func(a *api.Address) *string { return &a.PhoneNumber },
}

func addressFieldNames() string {
	names := make([]string, 0, len(addressFields))
	for n := range addressFields {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

type updateFlags struct {
	prices, billing, shipping []string
}

func updateCmd(sio IO) *cobra.Command {
	c := &cmdContext{name: "update", sio: sio}
	var f updateFlags
	cmd := c.command("update RESERVATION [ARTICLE=QTY ...]", "Lower a reservation's quantities or prices, or change its addresses",
		cobra.MinimumNArgs(1), func(ctx context.Context, c *cmdContext) int { return runUpdate(ctx, c, f) })
	cmd.Long = `Lower a reservation's quantities or prices, or change its billing or shipping address.

An update may keep or lower the reserved amount, never raise it; a line that is
partly captured keeps its price and at least its captured units. A changed
address runs the provider's risk check again: a decline leaves the reservation as
it was.`
	cmd.Example = "paydesk update RESERVATION SHOE-42=1\npaydesk update RESERVATION --price SOCK-3P=12.50\npaydesk update RESERVATION --shipping street=Dorpsstraat --shipping house-number=7"
	c.moneyFlags()
	fs := cmd.Flags()
	fs.StringArrayVar(&f.prices, "price", nil, "ARTICLE=PRICE: a lower unit price (repeat for more lines)")
	fs.StringArrayVar(&f.billing, "billing", nil, "FIELD=VALUE of the billing address (repeat); fields: "+addressFieldNames())
	fs.StringArrayVar(&f.shipping, "shipping", nil, "FIELD=VALUE of the shipping address (repeat); same fields")
	return cmd
}

// updateChange turns the arguments into the change an update sends,
// checked against the reservation's lines as the update form checks them.
func updateChange(r *store.Reservation, qtyArgs []string, f updateFlags) (ops.UpdateChange, []string, error) {
	var ch ops.UpdateChange
	qty, err := ops.ParseQuantities(qtyArgs)
	if err != nil {
		return ch, nil, err
	}
	prices := map[string]decimal.Decimal{}
	for _, p := range f.prices {
		name, v, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return ch, nil, fmt.Errorf("--price %q: expected ARTICLE=PRICE", p)
		}
		d, err := parseAmount("--price "+name, v)
		if err != nil {
			return ch, nil, err
		}
		prices[name] = d
	}
	known := map[string]bool{}
	var arts []api.Article
	var lines []string
	changed := false
	for _, l := range r.Lines {
		known[l.ArticleNumber] = true
		a := api.Article{Number: l.ArticleNumber, Title: l.Title, Type: l.Type, Vat: l.Vat, Price: l.Price, Quantity: l.Reserved}
		if n, ok := qty[l.ArticleNumber]; ok {
			if n < 1 || n > l.Reserved {
				return ch, nil, fmt.Errorf("%s=%d: a quantity may only go down, to at least 1 (reserved %d)", l.ArticleNumber, n, l.Reserved)
			}
			a.Quantity = n
		}
		if p, ok := prices[l.ArticleNumber]; ok {
			if p.GreaterThan(l.Price) {
				return ch, nil, fmt.Errorf("--price %s=%s: a price may only go down (was %s)", l.ArticleNumber, money(p), money(l.Price))
			}
			a.Price = p
		}
		if a.Quantity != l.Reserved || !a.Price.Equal(l.Price) {
			changed = true
			lines = append(lines, fmt.Sprintf("%s %s  %d × %s → %d × %s = %s", l.ArticleNumber, l.Title, l.Reserved, money(l.Price),
				a.Quantity, money(a.Price), money(a.Total())))
		}
		arts = append(arts, a)
	}
	for n := range qty {
		if !known[n] {
			return ch, nil, fmt.Errorf("%s: not an article of reservation %s", n, r.ReservationNumber)
		}
	}
	for n := range prices {
		if !known[n] {
			return ch, nil, fmt.Errorf("--price %s: not an article of reservation %s", n, r.ReservationNumber)
		}
	}
	if changed {
		ch.Articles = arts
	}
	for _, side := range []struct {
		flag  string
		pairs []string
		addr  *api.Address
	}{{"--billing", f.billing, &ch.Billing}, {"--shipping", f.shipping, &ch.Shipping}} {
		for _, p := range side.pairs {
			k, v, ok := strings.Cut(p, "=")
			field, known := addressFields[strings.ToLower(strings.TrimSpace(k))]
			if !ok || !known {
				return ch, nil, fmt.Errorf("%s %q: expected FIELD=VALUE with FIELD one of %s", side.flag, p, addressFieldNames())
			}
			*field(side.addr) = strings.TrimSpace(v)
			lines = append(lines, fmt.Sprintf("%s address: %s = %s", strings.TrimPrefix(side.flag, "--"), k, strings.TrimSpace(v)))
		}
	}
	return ch, lines, nil
}

func runUpdate(ctx context.Context, c *cmdContext, f updateFlags) int {
	env, code := c.open(ctx)
	if env == nil {
		return code
	}
	defer env.Close()
	r, err := env.db.Reservation(ctx, c.args[0])
	if err != nil {
		return c.fail(err)
	}
	ch, lines, err := updateChange(r, c.args[1:], f)
	if err != nil {
		return c.usage("%v", err)
	}
	if _, err := ops.PlanUpdate(r, ch); err != nil {
		return c.report(ops.Result{Action: api.ActionUpdateReservation, Target: r.ReservationNumber}, err, false)
	}
	total := r.Amount()
	if len(ch.Articles) > 0 {
		total = api.ArticlesTotal(ch.Articles)
	}
	s := summary{Action: "Update", Target: "reservation " + r.ReservationNumber + " to a total of", Amount: total, Currency: r.Currency,
		Customer: r.CustomerName, Invoice: r.Invoice, Lines: lines,
		Notes: []string{"reserved now " + money(r.Amount()) + " " + r.Currency}}
	if !ch.Billing.IsZero() || !ch.Shipping.IsZero() {
		s.Notes = append(s.Notes, "a changed address runs the provider's risk check again; a decline leaves the reservation as it was")
	}
	if !c.confirm(env.svc.Mode(), s) {
		return exitFailed
	}
	res, err := env.svc.Update(ctx, ops.UpdateRequest{Reservation: r.ReservationNumber, Change: ch})
	return c.report(res, err, c.settle(ctx, env, res))
}
