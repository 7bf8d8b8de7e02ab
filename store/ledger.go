package store

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store/domain"
)

// findReservation resolves a key or reservation number.
func findReservation(tx RepoTx, ref string) (*Reservation, error) {
	if ref == "" {
		return nil, nil
	}
	if r, err := tx.Reservation(ref); r != nil || err != nil {
		return r, err
	}
	k, err := tx.ReservationKeyByNumber(ref)
	if err != nil || k == "" {
		return nil, err
	}
	return tx.Reservation(k)
}

// reservationByInvoice returns the newest reservation with the invoice.
func reservationByInvoice(tx RepoTx, invoice string) (*Reservation, error) {
	keys, err := tx.ReservationKeysByInvoice(invoice)
	if err != nil {
		return nil, err
	}
	var best *Reservation
	for _, k := range keys {
		r, err := tx.Reservation(k)
		if err != nil {
			return nil, err
		}
		if r != nil && newer(r.Created, r.Key, best) {
			best = r
		}
	}
	return best, nil
}

// newer reports whether a reservation created at created with key comes
// after best (nil: nothing yet) as "the newest with the invoice".
func newer(created time.Time, key string, best *Reservation) bool {
	return best == nil || created.After(best.Created) || (created.Equal(best.Created) && key > best.Key)
}

// ownerOf returns the reservation a data request or transaction key
// belongs to.
func ownerOf(tx RepoTx, key string) (*Reservation, error) {
	k, err := tx.OwnerOf(key)
	if err != nil || k == "" {
		return nil, err
	}
	return tx.Reservation(k)
}

// putReservation recomputes the ledger of r from its transactions as
// stored, hands the reservation's customer and number on to them, and
// writes everything.
func (db *DB) putReservation(tx RepoTx, r *Reservation, c *Change) error {
	txs, err := loadLedger(tx, r)
	if err != nil {
		return err
	}
	renamed := recompute(r, txs)
	numbered := shareReservationNumber(r, txs)
	for _, t := range renamed {
		c.addTransaction(t.Key)
	}
	for _, t := range uniqueTx(renamed, numbered) {
		if _, err := tx.PutTransaction(t); err != nil {
			return err
		}
	}
	r.Updated = db.now()
	created, err := tx.PutReservation(r)
	if err != nil {
		return err
	}
	if created {
		c.newReservations++
	}
	c.addReservation(r.Key)
	return nil
}

// uniqueTx lists each transaction of the lists once, in order.
func uniqueTx(lists ...[]*Transaction) []*Transaction {
	var out []*Transaction
	for _, l := range lists {
		for _, t := range l {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// loadLedger reads what the ledger of r is computed from: its
// transactions and the refunds of each, by key; missing ones are absent.
func loadLedger(tx RepoTx, r *Reservation) (map[string]*Transaction, error) {
	if len(r.Transactions) == 0 {
		return nil, nil // most pushes: a reservation nothing was captured of yet
	}
	txs := make(map[string]*Transaction, len(r.Transactions))
	load := func(k string) (*Transaction, error) {
		if t, ok := txs[k]; ok {
			return t, nil
		}
		t, err := tx.Transaction(k)
		if err != nil {
			return nil, err
		}
		if t != nil {
			txs[k] = t
		}
		return t, nil
	}
	for _, k := range r.Transactions {
		t, err := load(k)
		if err != nil {
			return nil, err
		}
		if t == nil || t.Kind != KindCapture {
			continue
		}
		for _, rk := range t.Refunds {
			if _, err := load(rk); err != nil {
				return nil, err
			}
		}
	}
	return txs, nil
}

// putTx recomputes what refunds took from t, writes it, and links it to its
// original (for a refund) and to its reservation, recomputing those.
func (db *DB) putTx(tx RepoTx, t *Transaction, c *Change) error {
	if err := refreshRefunds(tx, t); err != nil {
		return err
	}
	if t.Created.IsZero() {
		t.Created = db.now()
	}
	t.Updated = db.now()
	created, err := tx.PutTransaction(t)
	if err != nil {
		return err
	}
	if created {
		c.newTransactions++
	}
	c.addTransaction(t.Key)
	if t.Kind.IsRefund() && t.Original != "" {
		if err := tx.LinkRefund(t.Original, t.Key); err != nil {
			return err
		}
		orig, err := tx.Transaction(t.Original)
		if err != nil {
			return err
		}
		if orig != nil {
			if t.ReservationKey == "" && orig.ReservationKey != "" {
				t.ReservationKey = orig.ReservationKey
				if _, err := tx.PutTransaction(t); err != nil {
					return err
				}
			}
			if err := refreshRefunds(tx, orig); err != nil {
				return err
			}
			if _, err := tx.PutTransaction(orig); err != nil {
				return err
			}
			c.addTransaction(orig.Key)
		}
	}
	if t.ReservationKey == "" {
		return nil
	}
	r, err := tx.Reservation(t.ReservationKey)
	if err != nil || r == nil {
		return err
	}
	if !slices.Contains(r.Transactions, t.Key) {
		r.Transactions = append(r.Transactions, t.Key)
	}
	// Refunds that arrived before their capture was linked follow it.
	for _, rk := range t.Refunds {
		if !slices.Contains(r.Transactions, rk) {
			r.Transactions = append(r.Transactions, rk)
		}
		rt, err := tx.Transaction(rk)
		if err != nil {
			return err
		}
		if rt != nil && rt.ReservationKey != r.Key {
			rt.ReservationKey = r.Key
			if _, err := tx.PutTransaction(rt); err != nil {
				return err
			}
		}
	}
	return db.putReservation(tx, r, c)
}

// refreshRefunds reads the refunds linked to t and sums them (sumRefunds).
func refreshRefunds(tx RepoTx, t *Transaction) error {
	if t.Kind.IsRefund() {
		return nil
	}
	keys, err := tx.RefundKeys(t.Key)
	if err != nil {
		return err
	}
	refunds := make([]*Transaction, 0, len(keys))
	for _, k := range keys {
		rt, err := tx.Transaction(k)
		if err != nil {
			return err
		}
		if rt != nil {
			refunds = append(refunds, rt)
		}
	}
	sumRefunds(t, refunds)
	return nil
}

// sumRefunds sets what the refunds of t (its refunds as stored, in key
// order) took from it: their keys, and the sum of the successful ones.
func sumRefunds(t *Transaction, refunds []*Transaction) {
	t.Refunds = t.Refunds[:0]
	t.Refunded = decimal.Zero
	for _, rt := range refunds {
		t.Refunds = append(t.Refunds, rt.Key)
		if rt.Status.IsSuccess() {
			t.Refunded = t.Refunded.Add(rt.Amount)
		}
	}
	if len(t.Refunds) == 0 {
		t.Refunds = nil
	}
}

// recompute derives the ledger of r from what the Reserve sent, its
// successful updates (in status-time order), its successful captures and
// refunds and whether a cancel succeeded. Every input is a set keyed by
// gateway key, so the result does not depend on the order facts arrived in.
// txs holds r's transactions and their refunds by key (loadLedger). It
// returns the transactions whose CustomerName it set: the push of a
// capture or refund names no customer, and the transactions list shows
// the reservation's.
func recompute(r *Reservation, txs map[string]*Transaction) (renamed []*Transaction) {
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
		t := txs[k]
		if t != nil && r.CustomerName != "" && t.CustomerName != r.CustomerName {
			t.CustomerName = r.CustomerName
			renamed = append(renamed, t)
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
	take := func(t *Transaction, alloc []int) {
		refunded := t.Amount.Sign() > 0 && t.Refunded.GreaterThanOrEqual(t.Amount)
		// Units a refund by line paid back, capped at what this capture
		// shipped of the line; a capture refunded in full counts all its
		// units whatever its refunds say.
		byLine := map[string]int{}
		if !refunded {
			for _, rk := range t.Refunds {
				rt := txs[rk]
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
	}
	if r.LinesKnown {
		for _, t := range partial {
			take(t, allocate(lines, t.Lines))
		}
		for _, t := range full {
			take(t, remainingAlloc(lines))
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
			take(t, alloc)
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
	return renamed
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
			walk(i+1, sum.Add(domain.MulQty(lines[i].Price, q)))
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
		t = t.Add(domain.MulQty(l.Price, max(0, l.Reserved-l.Captured)))
	}
	return t
}

// shareReservationNumber gives the reservation's number to its transactions
// that do not carry it (captured by another tool, linked before the Reserve
// push brought the number), and returns them.
func shareReservationNumber(r *Reservation, txs map[string]*Transaction) (changed []*Transaction) {
	if r.ReservationNumber == "" {
		return nil
	}
	for _, k := range r.Transactions {
		t := txs[k]
		if t == nil || t.ReservationNumber != "" {
			continue
		}
		t.ReservationNumber = r.ReservationNumber
		changed = append(changed, t)
	}
	return changed
}
