package domain

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// Order is a webshop's order as its Reserve request said it: the lines and
// addresses the Reserve push does not carry. It reaches paydesk through the
// listener's order intake or `paydesk import` and joins its reservation on
// Invoice (and ReservationNumber when the shop sent one), in either order of
// arrival.
type Order struct {
	Invoice string
	// ReservationNumber is set when the shop sent it along (a parameter of
	// the envelope); the join then needs it to match.
	ReservationNumber string `json:",omitempty"`
	Currency          string
	Articles          []api.Article
	Billing           api.Address
	Shipping          api.Address
	// Source says where it came from: "intake 127.0.0.1:50312",
	// "import orders.csv".
	Source   string
	Received time.Time
	// Hash identifies the order's content (invoice, currency, lines,
	// addresses): the same order twice is one order.
	Hash string
	// ReservationKey is the reservation it joined, "" while no Reserve push
	// with its invoice has arrived.
	ReservationKey string `json:",omitempty"`
}

// Amount is the order's total: the sum of its lines.
func (o *Order) Amount() decimal.Decimal { return api.ArticlesTotal(o.Articles) }

// Customer is the billing name.
func (o *Order) Customer() string {
	return joinName(o.Billing.FirstName, o.Billing.LastName)
}

func joinName(first, last string) string {
	switch {
	case first == "":
		return last
	case last == "":
		return first
	}
	return first + " " + last
}

// PlaceholderPrefix starts the key of an order's placeholder reservation:
// an order whose Reserve push has not arrived (the customer has not
// completed the checkout). The push replaces it with the real reservation.
const PlaceholderPrefix = "order:"

// IsPlaceholder reports whether the reservation stands for an order whose
// Reserve push has not arrived yet.
func (r *Reservation) IsPlaceholder() bool { return strings.HasPrefix(r.Key, PlaceholderPrefix) }
