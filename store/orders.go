package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"paydesk/api"
)

// OrderOutcome tells what PutOrder did with an order.
type OrderOutcome string

// Order outcomes, as the intake and `paydesk import` report them.
const (
	OrderImported OrderOutcome = "imported"      // stored (and joined when its reservation is known)
	OrderKnown    OrderOutcome = "already known" // the same order was stored before; nothing changed
	OrderConflict OrderOutcome = "conflict"      // the invoice is known with other lines; both kept
)

// OrderResult is what PutOrder did.
type OrderResult struct {
	Outcome OrderOutcome
	// ReservationKey is the reservation the order joined, "" while it waits
	// for its Reserve push.
	ReservationKey string
	// Reason says, for a conflict, what differs.
	Reason string
}

// ErrOrderConflict is wrapped by the error a caller gets for a conflict.
var ErrOrderConflict = errors.New("the invoice is already known with other lines")

// orderHash is the content hash of an order: what a shop sends, not when or
// from where.
func orderHash(o *Order) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{o.Invoice, o.ReservationNumber, o.Currency, canonicalArticles(o.Articles), o.Billing, o.Shipping})
	return hex.EncodeToString(h.Sum(nil))
}

type canonArticle struct {
	Number, Title, Type, Price, Vat string
	Quantity                        int
}

// canonicalArticles writes prices and VAT in their shortest form, so 12.50
// and 12.5 are the same line.
func canonicalArticles(as []api.Article) []canonArticle {
	out := make([]canonArticle, len(as))
	for i, a := range as {
		out[i] = canonArticle{Number: a.Number, Title: a.Title, Type: a.Type, Price: a.Price.String(), Vat: a.Vat.String(), Quantity: a.Quantity}
	}
	return out
}

// sameLines reports whether two orders name the same lines (number,
// quantity, price and VAT; titles and types may be worded differently).
func sameLines(a, b []api.Article) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Number != b[i].Number || a[i].Quantity != b[i].Quantity || !a[i].Price.Equal(b[i].Price) || !a[i].Vat.Equal(b[i].Vat) {
			return false
		}
	}
	return true
}

// diffLines says in words how two line lists differ, for a conflict.
func diffLines(stored, incoming []api.Article) string {
	if len(stored) != len(incoming) {
		return fmt.Sprintf("%d lines known, %d lines sent", len(stored), len(incoming))
	}
	for i := range stored {
		s, n := stored[i], incoming[i]
		switch {
		case s.Number != n.Number:
			return fmt.Sprintf("line %d: article %q known, %q sent", i+1, s.Number, n.Number)
		case s.Quantity != n.Quantity:
			return fmt.Sprintf("article %q: quantity %d known, %d sent", s.Number, s.Quantity, n.Quantity)
		case !s.Price.Equal(n.Price):
			return fmt.Sprintf("article %q: price %s known, %s sent", s.Number, s.Price.StringFixed(2), n.Price.StringFixed(2))
		case !s.Vat.Equal(n.Vat):
			return fmt.Sprintf("article %q: VAT %s%% known, %s%% sent", s.Number, s.Vat, n.Vat)
		}
	}
	return "the lines differ"
}

// PutOrder stores a webshop's order durably (one transaction, on disk when
// it returns) and joins it to its reservation when that is known. The same
// order again is OrderKnown and changes nothing. An order whose invoice is
// known with other lines is kept beside the first for an operator to see and
// answered OrderConflict with an error wrapping ErrOrderConflict.
func (db *DB) PutOrder(ctx context.Context, o Order) (OrderResult, error) {
	if o.Invoice == "" {
		return OrderResult{}, errors.New("order: no invoice")
	}
	if len(o.Articles) == 0 {
		return OrderResult{}, fmt.Errorf("order %s: no article lines", o.Invoice)
	}
	o.Received = nowOr(o.Received, db.now)
	o.Hash = orderHash(&o)
	o.ReservationKey = ""
	var res OrderResult
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		res = OrderResult{}
		stored, err := tx.Order(o.Invoice)
		if err != nil {
			return err
		}
		if stored != nil {
			if sameLines(stored.Articles, o.Articles) {
				res = OrderResult{Outcome: OrderKnown, ReservationKey: stored.ReservationKey}
				return nil
			}
			res = OrderResult{Outcome: OrderConflict, ReservationKey: stored.ReservationKey, Reason: diffLines(stored.Articles, o.Articles)}
			return db.keepConflict(tx, &o, c)
		}
		r, err := reservationForOrder(tx, &o)
		if err != nil {
			return err
		}
		if r != nil && r.LinesKnown {
			// Made by paydesk itself (or an earlier import): the lines it
			// knows are the order's, or the two disagree.
			o.ReservationKey = r.Key
			if !sameLines(r.Original.Articles, o.Articles) {
				res = OrderResult{Outcome: OrderConflict, ReservationKey: r.Key, Reason: diffLines(r.Original.Articles, o.Articles)}
				return db.keepConflict(tx, &o, c)
			}
			res = OrderResult{Outcome: OrderKnown, ReservationKey: r.Key}
			return tx.PutOrder(&o)
		}
		res.Outcome = OrderImported
		c.Orders = true
		if r == nil {
			// No Reserve push yet: the customer has not completed the
			// checkout. A placeholder shows the order as awaiting the
			// customer until the push brings the real key.
			return db.putPlaceholder(tx, &o, c)
		}
		o.ReservationKey, res.ReservationKey = r.Key, r.Key
		fillFromOrder(r, &o)
		if err := db.putReservation(tx, r, c); err != nil {
			return err
		}
		return tx.PutOrder(&o)
	})
	if err != nil {
		return OrderResult{}, fmt.Errorf("order %s: %w", o.Invoice, err)
	}
	if res.Outcome == OrderConflict {
		return res, fmt.Errorf("order %s: %w (%s); both are kept for an operator to compare", o.Invoice, ErrOrderConflict, res.Reason)
	}
	return res, nil
}

func (db *DB) keepConflict(tx RepoTx, o *Order, c *Change) error {
	c.Orders = true
	return tx.PutOrderConflict(o)
}

// reservationForOrder finds the reservation an order belongs to: by the
// reservation number it carries, else the newest with its invoice.
func reservationForOrder(tx RepoTx, o *Order) (*Reservation, error) {
	if o.ReservationNumber != "" {
		r, err := findReservation(tx, o.ReservationNumber)
		if r != nil || err != nil {
			return r, err
		}
	}
	r, err := reservationByInvoice(tx, o.Invoice)
	if r != nil && r.IsPlaceholder() {
		return nil, nil
	}
	if r != nil && o.ReservationNumber != "" && r.ReservationNumber != "" && r.ReservationNumber != o.ReservationNumber {
		return nil, err
	}
	return r, err
}

// fillFromOrder gives a reservation seen only in pushes the order's lines
// and addresses; recompute then derives the ledger and the customer.
func fillFromOrder(r *Reservation, o *Order) {
	r.Original = Update{Articles: slices.Clone(o.Articles), Billing: o.Billing, Shipping: o.Shipping}
	r.LinesKnown = true
	if r.Currency == "" {
		r.Currency = o.Currency
	}
	if r.Invoice == "" {
		r.Invoice = o.Invoice
	}
	r.OrderSource = o.Source
}

func (db *DB) putPlaceholder(tx RepoTx, o *Order, c *Change) error {
	r := &Reservation{Key: PlaceholderPrefix + o.Invoice, Invoice: o.Invoice, Currency: o.Currency, Created: o.Received}
	fillFromOrder(r, o)
	if err := db.putReservation(tx, r, c); err != nil {
		return err
	}
	return tx.PutOrder(o)
}

// absorbPlaceholder moves what was linked to the order's placeholder (pushes
// that joined it by invoice) to the reservation its Reserve push created,
// and deletes the placeholder.
func absorbPlaceholder(tx RepoTx, r *Reservation, c *Change) error {
	if r.Invoice == "" || r.IsPlaceholder() {
		return nil
	}
	key := PlaceholderPrefix + r.Invoice
	p, err := tx.Reservation(key)
	if err != nil || p == nil {
		return err
	}
	for _, rq := range p.Requests {
		setRequest(r, rq)
	}
	for _, tk := range p.Transactions {
		if !slices.Contains(r.Transactions, tk) {
			r.Transactions = append(r.Transactions, tk)
		}
		t, err := tx.Transaction(tk)
		if err != nil {
			return err
		}
		if t != nil {
			t.ReservationKey = r.Key
			if _, err := tx.PutTransaction(t); err != nil {
				return err
			}
		}
	}
	if err := tx.DeleteReservation(key); err != nil {
		return err
	}
	c.newReservations--
	c.addReservation(key) // subscribers find it gone
	return nil
}

// joinOrder completes a reservation that a push just created with the order
// that arrived before it, and marks the order joined.
func joinOrder(tx RepoTx, r *Reservation, c *Change) error {
	if err := absorbPlaceholder(tx, r, c); err != nil {
		return err
	}
	if r.LinesKnown || r.Invoice == "" {
		return nil
	}
	o, err := tx.Order(r.Invoice)
	if err != nil || o == nil {
		return err
	}
	if o.ReservationKey != "" && o.ReservationKey != r.Key {
		return nil // it joined another reservation with this invoice
	}
	if o.ReservationNumber != "" && r.ReservationNumber != "" && o.ReservationNumber != r.ReservationNumber {
		return nil
	}
	fillFromOrder(r, o)
	o.ReservationKey = r.Key
	return tx.PutOrder(o)
}

// Order returns the order stored for an invoice.
func (db *DB) Order(ctx context.Context, invoice string) (*Order, error) {
	return getOne(ctx, db, "order "+invoice, func(tx RepoTx) (*Order, error) { return tx.Order(invoice) })
}

// Orders returns the stored orders in invoice order; waiting keeps only
// those no reservation has joined yet (no Reserve push with their invoice).
func (db *DB) Orders(ctx context.Context, waiting bool) ([]*Order, error) {
	var all []*Order
	err := db.read(ctx, func(tx RepoTx) (err error) {
		all, err = tx.Orders()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("orders: %w", err)
	}
	if !waiting {
		return all, nil
	}
	var out []*Order
	for _, o := range all {
		if o.ReservationKey == "" {
			out = append(out, o)
		}
	}
	return out, nil
}

// OrderConflicts returns the orders refused because their invoice was known
// with other lines, optionally for one invoice.
func (db *DB) OrderConflicts(ctx context.Context, invoice string) ([]*Order, error) {
	var out []*Order
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.OrderConflicts(invoice)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("order conflicts: %w", err)
	}
	return out, nil
}
