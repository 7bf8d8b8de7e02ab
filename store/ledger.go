package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// Index kinds in the invoice index.
const (
	invReservation = 'r'
	invTransaction = 't'
	invOrphan      = 'd'
)

func invoiceKey(invoice, key string) []byte {
	b := make([]byte, 0, len(invoice)+1+len(key))
	b = append(b, invoice...)
	b = append(b, 0)
	return append(b, key...)
}

func pairKey(a, b string) []byte { return invoiceKey(a, b) }

func getReservation(tx Tx, key string) (*Reservation, error) {
	v := tx.Bucket(bReservation).Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	var r Reservation
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("reservation %s: %w", key, err)
	}
	return &r, nil
}

// findReservation resolves a key or reservation number.
func findReservation(tx Tx, ref string) (*Reservation, error) {
	if ref == "" {
		return nil, nil
	}
	if r, err := getReservation(tx, ref); r != nil || err != nil {
		return r, err
	}
	if k := tx.Bucket(bResNumber).Get([]byte(ref)); k != nil {
		return getReservation(tx, string(k))
	}
	return nil, nil
}

// reservationByInvoice returns the newest reservation with the invoice.
func reservationByInvoice(tx Tx, invoice string) (*Reservation, error) {
	if invoice == "" {
		return nil, nil
	}
	var best *Reservation
	prefix := append([]byte(invoice), 0)
	c := tx.Bucket(bInvoice).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(v) != 1 || v[0] != invReservation {
			continue
		}
		r, err := getReservation(tx, string(k[len(prefix):]))
		if err != nil {
			return nil, err
		}
		if r != nil && (best == nil || r.Created.After(best.Created) || (r.Created.Equal(best.Created) && r.Key > best.Key)) {
			best = r
		}
	}
	return best, nil
}

// putReservation recomputes the ledger and writes the record, its summary
// and its indexes.
func (db *DB) putReservation(tx Tx, r *Reservation, c *Change) error {
	if err := recompute(tx, r, c); err != nil {
		return err
	}
	if err := shareReservationNumber(tx, r); err != nil {
		return err
	}
	r.Updated = db.now()
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("reservation %s: %w", r.Key, err)
	}
	k := []byte(r.Key)
	if tx.Bucket(bReservation).Get(k) == nil {
		c.newReservations++
	}
	if err := tx.Bucket(bReservation).Put(k, v); err != nil {
		return err
	}
	if err := putSummary(tx, r.Summary()); err != nil {
		return err
	}
	if r.ReservationNumber != "" {
		if err := tx.Bucket(bResNumber).Put([]byte(r.ReservationNumber), k); err != nil {
			return err
		}
	}
	if r.Invoice != "" {
		if err := tx.Bucket(bInvoice).Put(invoiceKey(r.Invoice, r.Key), []byte{invReservation}); err != nil {
			return err
		}
	}
	for _, rq := range r.Requests {
		if err := tx.Bucket(bKeyOwner).Put([]byte(rq.Key), k); err != nil {
			return err
		}
	}
	for _, tk := range r.Transactions {
		if err := tx.Bucket(bKeyOwner).Put([]byte(tk), k); err != nil {
			return err
		}
	}
	c.addReservation(r.Key)
	return nil
}

func getTx(tx Tx, key string) (*Transaction, error) {
	v := tx.Bucket(bTransaction).Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	t, err := decodeTx(v)
	if err != nil {
		return nil, fmt.Errorf("transaction %s: %w", key, err)
	}
	return t, nil
}

// putTx recomputes what refunds took from t, writes it, and links it to its
// original (for a refund) and to its reservation, recomputing those.
func (db *DB) putTx(tx Tx, t *Transaction, c *Change) error {
	if err := refreshRefunds(tx, t); err != nil {
		return err
	}
	if t.Created.IsZero() {
		t.Created = db.now()
	}
	t.Updated = db.now()
	if tx.Bucket(bTransaction).Get([]byte(t.Key)) == nil {
		c.newTransactions++
	}
	if err := writeTxRecord(tx, t); err != nil {
		return err
	}
	// Only deferred-invoice transactions can belong to a reservation; gift
	// cards stay out of the invoice index (one random page write less).
	if t.Invoice != "" && (t.Kind == KindCapture || t.Kind == KindRefund) {
		if err := tx.Bucket(bInvoice).Put(invoiceKey(t.Invoice, t.Key), []byte{invTransaction}); err != nil {
			return err
		}
	}
	c.addTransaction(t.Key)
	if t.Kind.IsRefund() && t.Original != "" {
		if err := tx.Bucket(bRelated).Put(pairKey(t.Original, t.Key), nil); err != nil {
			return err
		}
		orig, err := getTx(tx, t.Original)
		if err != nil {
			return err
		}
		if orig != nil {
			if t.ReservationKey == "" && orig.ReservationKey != "" {
				t.ReservationKey = orig.ReservationKey
				if err := db.putTxRecord(tx, t); err != nil {
					return err
				}
			}
			if err := refreshRefunds(tx, orig); err != nil {
				return err
			}
			if err := db.putTxRecord(tx, orig); err != nil {
				return err
			}
			c.addTransaction(orig.Key)
		}
	}
	if t.ReservationKey != "" {
		r, err := getReservation(tx, t.ReservationKey)
		if err != nil {
			return err
		}
		if r != nil {
			if !slices.Contains(r.Transactions, t.Key) {
				r.Transactions = append(r.Transactions, t.Key)
			}
			// Refunds that arrived before their capture was linked follow it.
			for _, rk := range t.Refunds {
				if !slices.Contains(r.Transactions, rk) {
					r.Transactions = append(r.Transactions, rk)
				}
				rt, err := getTx(tx, rk)
				if err != nil {
					return err
				}
				if rt != nil && rt.ReservationKey != r.Key {
					rt.ReservationKey = r.Key
					if err := db.putTxRecord(tx, rt); err != nil {
						return err
					}
				}
			}
			return db.putReservation(tx, r, c)
		}
	}
	return nil
}

func (db *DB) putTxRecord(tx Tx, t *Transaction) error {
	return writeTxRecord(tx, t)
}

// refreshRefunds sums the successful refunds against t.
func refreshRefunds(tx Tx, t *Transaction) error {
	if t.Kind.IsRefund() {
		return nil
	}
	t.Refunds = t.Refunds[:0]
	t.Refunded = decimal.Zero
	prefix := append([]byte(t.Key), 0)
	cur := tx.Bucket(bRelated).Cursor()
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
		rk := string(k[len(prefix):])
		rt, err := getTx(tx, rk)
		if err != nil {
			return err
		}
		if rt == nil {
			continue
		}
		t.Refunds = append(t.Refunds, rk)
		if rt.Status.IsSuccess() {
			t.Refunded = t.Refunded.Add(rt.Amount)
		}
	}
	if len(t.Refunds) == 0 {
		t.Refunds = nil
	}
	return nil
}

// recompute derives the ledger of r from what the Reserve sent, its
// successful updates (in status-time order), its successful captures and
// refunds and whether a cancel succeeded. Every input is a set keyed by
// gateway key, so the result does not depend on the order facts arrived in.
func recompute(tx Tx, r *Reservation, c *Change) error {
	billing, shipping := r.Original.Billing, r.Original.Shipping
	var lines []Line
	if r.LinesKnown {
		lines = linesFrom(r.Original.Articles)
	}
	r.Cancelled = false
	var updates []Request
	for _, rq := range r.Requests {
		switch {
		case !rq.Status.IsSuccess():
		case strings.EqualFold(rq.Action, api.ActionCancelReservation):
			r.Cancelled = true
		case strings.EqualFold(rq.Action, api.ActionUpdateReservation) && rq.Update != nil:
			updates = append(updates, rq)
		}
	}
	sort.Slice(updates, func(i, j int) bool {
		a, b := updates[i].Status.Time, updates[j].Status.Time
		if !a.Equal(b) {
			return a.Before(b)
		}
		return updates[i].Key < updates[j].Key
	})
	for _, u := range updates {
		if r.LinesKnown && len(u.Update.Articles) > 0 {
			lines = applyArticles(lines, u.Update.Articles)
		}
		billing = overlay(billing, u.Update.Billing)
		shipping = overlay(shipping, u.Update.Shipping)
	}
	if !billing.IsZero() {
		r.Billing, r.Shipping = billing, shipping
		if n := strings.TrimSpace(billing.FirstName + " " + billing.LastName); n != "" {
			r.CustomerName = n
		}
		if billing.Email != "" {
			r.CustomerEmail = billing.Email
		}
		if billing.Country != "" {
			r.Country = billing.Country
		}
	}

	var partial, full, unknown []*Transaction
	r.CapturedAmount, r.RefundedAmount, r.UnsplitCaptured = decimal.Zero, decimal.Zero, decimal.Zero
	r.InvoiceNumbers = nil
	for _, k := range r.Transactions {
		t, err := getTx(tx, k)
		if err != nil {
			return err
		}
		if t != nil && r.CustomerName != "" && t.CustomerName != r.CustomerName {
			// The push of a capture or refund names no customer: the
			// transactions list shows the reservation's.
			t.CustomerName = r.CustomerName
			if err := writeTxRecord(tx, t); err != nil {
				return err
			}
			c.addTransaction(t.Key)
		}
		if t == nil || t.Kind != KindCapture || !t.Status.IsSuccess() {
			continue
		}
		r.CapturedAmount = r.CapturedAmount.Add(t.Amount)
		r.RefundedAmount = r.RefundedAmount.Add(t.Refunded)
		if t.InvoiceNumber != "" {
			r.InvoiceNumbers = append(r.InvoiceNumbers, t.InvoiceNumber)
		}
		switch {
		case len(t.Lines) > 0:
			partial = append(partial, t)
		case t.FullCapture:
			full = append(full, t)
		default:
			unknown = append(unknown, t)
		}
	}
	byTime := func(s []*Transaction) {
		sort.Slice(s, func(i, j int) bool {
			a, b := s[i].Status.Time, s[j].Status.Time
			if !a.Equal(b) {
				return a.Before(b)
			}
			return s[i].Key < s[j].Key
		})
	}
	slices.Sort(r.InvoiceNumbers) // the same whatever order the captures arrived in
	byTime(partial)
	byTime(full)
	byTime(unknown)
	r.CapturedInFull = !r.LinesKnown && len(full) > 0

	for i := range lines {
		lines[i].Captured, lines[i].Cancelled, lines[i].Refunded = 0, 0, 0
	}
	take := func(t *Transaction, alloc []int) error {
		refunded := t.Amount.Sign() > 0 && t.Refunded.GreaterThanOrEqual(t.Amount)
		// Units a refund by line paid back, capped at what this capture
		// shipped of the line; a capture refunded in full counts all its
		// units whatever its refunds say.
		byLine := map[string]int{}
		if !refunded {
			for _, rk := range t.Refunds {
				rt, err := getTx(tx, rk)
				if err != nil {
					return err
				}
				if rt == nil || !rt.Status.IsSuccess() {
					continue
				}
				for _, l := range rt.Lines {
					byLine[l.ArticleNumber] += l.Quantity
				}
			}
		}
		for i, n := range alloc {
			lines[i].Captured += n
			switch {
			case refunded:
				lines[i].Refunded += n
			case n > 0 && byLine[lines[i].ArticleNumber] > 0:
				u := min(n, byLine[lines[i].ArticleNumber])
				lines[i].Refunded += u
				byLine[lines[i].ArticleNumber] -= u
			}
		}
		return nil
	}
	if r.LinesKnown {
		for _, t := range partial {
			if err := take(t, allocate(lines, t.Lines)); err != nil {
				return err
			}
		}
		for _, t := range full {
			if err := take(t, remainingAlloc(lines)); err != nil {
				return err
			}
		}
		for _, t := range unknown {
			// Captured by another tool: when the amount is exactly what
			// remained it was the full capture; when exactly one choice of
			// remaining units adds up to it, those were shipped; otherwise
			// its lines are unknown and only its amount counts.
			alloc := remainingAlloc(lines)
			if !t.Amount.Equal(remainingAmount(lines)) {
				alloc = splitByAmount(lines, t.Amount)
			}
			if alloc == nil {
				r.UnsplitCaptured = r.UnsplitCaptured.Add(t.Amount)
				continue
			}
			if err := take(t, alloc); err != nil {
				return err
			}
		}
		kept := lines[:0]
		for _, l := range lines {
			if l.Reserved == 0 && l.Captured == 0 {
				continue // dropped by an update
			}
			if l.Captured > l.Reserved {
				l.Reserved = l.Captured
			}
			if r.Cancelled {
				l.Cancelled = l.Reserved - l.Captured
			}
			kept = append(kept, l)
		}
		lines = kept
	}
	r.Lines = lines
	r.OutcomeUnknown = len(r.UnknownOps) > 0
	return nil
}

func linesFrom(as []api.Article) []Line {
	lines := make([]Line, 0, len(as))
	for _, a := range as {
		lines = append(lines, Line{ArticleNumber: a.Number, Title: a.Title, Type: a.Type, Price: a.Price, Vat: a.Vat, Reserved: a.Quantity})
	}
	return lines
}

// applyArticles replaces the lines by an update's articles, matched by
// article number (or title when the update leaves the number out); lines the
// update does not name are dropped unless something was captured of them.
func applyArticles(lines []Line, as []api.Article) []Line {
	used := make([]bool, len(lines))
	out := make([]Line, 0, len(as)+len(lines))
	for _, a := range as {
		idx := -1
		for i, l := range lines {
			if used[i] {
				continue
			}
			if (a.Number != "" && l.ArticleNumber == a.Number) || (a.Number == "" && l.Title == a.Title) {
				idx = i
				break
			}
		}
		if idx < 0 {
			out = append(out, linesFrom([]api.Article{a})...)
			continue
		}
		used[idx] = true
		l := lines[idx]
		l.Title, l.Price, l.Vat, l.Reserved = a.Title, a.Price, a.Vat, a.Quantity
		if a.Type != "" {
			l.Type = a.Type
		}
		out = append(out, l)
	}
	for i, l := range lines {
		if !used[i] {
			l.Reserved = 0
			out = append(out, l)
		}
	}
	return out
}

func overlay(a, b api.Address) api.Address {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&a.FirstName, b.FirstName)
	set(&a.LastName, b.LastName)
	set(&a.CareOf, b.CareOf)
	set(&a.Company, b.Company)
	set(&a.Street, b.Street)
	set(&a.HouseNumber, b.HouseNumber)
	set(&a.HouseNumberSuffix, b.HouseNumberSuffix)
	set(&a.PostalCode, b.PostalCode)
	set(&a.City, b.City)
	set(&a.Country, b.Country)
	set(&a.Email, b.Email)
	set(&a.CellPhoneNumber, b.CellPhoneNumber)
	set(&a.PhoneNumber, b.PhoneNumber)
	return a
}

// allocate spreads a capture's article quantities over the lines with that
// article number, first where something remains; what exceeds the
// remainder still lands on the first matching line, so the ledger always
// agrees with what the gateway booked.
func allocate(lines []Line, cls []api.CaptureLine) []int {
	alloc := make([]int, len(lines))
	for _, cl := range cls {
		want := cl.Quantity
		first := -1
		for i, l := range lines {
			if l.ArticleNumber != cl.ArticleNumber {
				continue
			}
			if first < 0 {
				first = i
			}
			left := l.Reserved - l.Captured - alloc[i]
			if left <= 0 || want <= 0 {
				continue
			}
			n := min(left, want)
			alloc[i] += n
			want -= n
		}
		if want > 0 && first >= 0 {
			alloc[first] += want
		}
	}
	return alloc
}

// maxSplitTries bounds the search for the lines a capture made elsewhere
// took: past it the split is left unknown rather than guessed.
const maxSplitTries = 20_000

// splitByAmount returns the one choice of remaining units (per line) whose
// prices add up to amount, or nil when there is none, more than one, or the
// search would be too large to be sure.
func splitByAmount(lines []Line, amount decimal.Decimal) []int {
	left := remainingAlloc(lines)
	space := 1
	for _, n := range left {
		space *= n + 1
		if space > maxSplitTries {
			return nil
		}
	}
	var found []int
	cur := make([]int, len(lines))
	count := 0
	var walk func(i int, sum decimal.Decimal)
	walk = func(i int, sum decimal.Decimal) {
		if count > 1 {
			return
		}
		if i == len(lines) {
			if sum.Equal(amount) && !sum.IsZero() {
				count++
				found = slices.Clone(cur)
			}
			return
		}
		for q := 0; q <= left[i]; q++ {
			cur[i] = q
			walk(i+1, sum.Add(mulQty(lines[i].Price, q)))
		}
		cur[i] = 0
	}
	walk(0, decimal.Zero)
	if count != 1 {
		return nil
	}
	return found
}

func remainingAlloc(lines []Line) []int {
	alloc := make([]int, len(lines))
	for i, l := range lines {
		alloc[i] = max(0, l.Reserved-l.Captured)
	}
	return alloc
}

func remainingAmount(lines []Line) decimal.Decimal {
	t := decimal.Zero
	for _, l := range lines {
		t = t.Add(mulQty(l.Price, max(0, l.Reserved-l.Captured)))
	}
	return t
}

// shareReservationNumber gives the reservation's number to its transactions
// that do not carry it (captured by another tool, linked before the Reserve
// push brought the number).
func shareReservationNumber(tx Tx, r *Reservation) error {
	if r.ReservationNumber == "" {
		return nil
	}
	for _, k := range r.Transactions {
		t, err := getTx(tx, k)
		if err != nil {
			return err
		}
		if t == nil || t.ReservationNumber != "" {
			continue
		}
		t.ReservationNumber = r.ReservationNumber
		if err := writeTxRecord(tx, t); err != nil {
			return err
		}
	}
	return nil
}
