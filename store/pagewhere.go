package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/internal/textsafe"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// PageQuery.Where is the filter language's query (internal/query). Its
// meaning is defined here, once, over a row's values and its search text;
// the engines follow it (pagebolt.go walks the records with keepWhere,
// the PostgreSQL lists put it in SQL: pagepg.go, postgres/page.go), and the
// in-memory lists (PageSummaries, PageTransactions) are the reference
// every engine is tested against.
//
//   - Words: each word or quoted phrase occurs in the search text, like
//     Filter's words (a phrase is not split).
//   - state: the reservation's state, or "unknown" (an operation's outcome
//     unknown) and "order_missing".
//   - amount: the reserved amount (0 when its lines are not known), for a
//     transaction its amount.
//   - created: the creation time; a row whose time is not known is in no
//     range.
//   - customer, email, service: each value, folded, occurs in that field of
//     the search text (the search text's fields, below).

// ReservationFilter is what the reservation list's filter takes.
var ReservationFilter = query.List{Name: "reservation",
	Fields: []query.Field{query.State, query.Amount, query.Created, query.Customer, query.Email},
	States: []string{string(StateAwaitingCustomer), string(StateReserved), string(StatePartlyCaptured), string(StateCaptured),
		string(StateCancelled), string(StateClosed), string(StateDeclined), "unknown", "order_missing"}}

// TransactionFilter is what the transaction list's filter takes (its kind
// is the list's State; status is the command line's --status).
var TransactionFilter = query.List{Name: "transaction",
	Fields: []query.Field{query.Amount, query.Created, query.Customer, query.Service}}

// searchField is field i of a search text (fields ended by 0x00), nil
// when the text was cut before it.
func searchField(text []byte, i int) []byte {
	for ; i > 0; i-- {
		j := bytes.IndexByte(text, 0)
		if j < 0 {
			return nil
		}
		text = text[j+1:]
	}
	if j := bytes.IndexByte(text, 0); j >= 0 {
		return text[:j]
	}
	return text
}

// fieldHasAll reports whether field i of text holds every value, folded.
func fieldHasAll(text []byte, i int, values []string) bool {
	if len(values) == 0 {
		return true
	}
	f := searchField(text, i)
	for _, v := range values {
		if !bytes.Contains(f, []byte(domain.FoldValue(v))) {
			return false
		}
	}
	return true
}

func inAmount(r *query.AmountRange, d decimal.Decimal) bool { return r == nil || r.Contains(d) }
func inCreated(r *query.TimeRange, t time.Time) bool        { return r == nil || r.Contains(t) }

// keepSummary applies the query's state and Where (not its words) to a
// reservation; text is its search text, made when Where needs it.
func keepSummary(s *Summary, q *PageQuery, f *fold.Folder) bool {
	if !keepState(s, q.State) {
		return false
	}
	if !q.HasWhere() {
		return true
	}
	w := &q.Where
	if w.State != "" && !keepState(s, domain.WhereState(w.State)) {
		return false
	}
	if !inAmount(w.Amount, s.Amount) || !inCreated(w.Created, s.Created) {
		return false
	}
	if len(w.Customer) > 0 || len(w.Email) > 0 {
		text := AppendSearchText(nil, s, f)
		return fieldHasAll(text, domain.ResFieldCustomer, w.Customer) && fieldHasAll(text, domain.ResFieldEmail, w.Email)
	}
	return true
}

// keepTxWhere is keepSummary for a transaction.
func keepTxWhere(t *Transaction, q *PageQuery, f *fold.Folder) bool {
	if !keepTx(t, q.State) {
		return false
	}
	if !q.HasWhere() {
		return true
	}
	w := &q.Where
	if !inAmount(w.Amount, t.Amount) || !inCreated(w.Created, t.Created) {
		return false
	}
	if len(w.Customer) > 0 || len(w.Service) > 0 {
		text := AppendTxSearchText(nil, t, f)
		return fieldHasAll(text, domain.TxFieldCustomer, w.Customer) && fieldHasAll(text, domain.TxFieldService, w.Service)
	}
	return true
}

// condBits finds the rows that pass the query's state and Where: a state
// alone is a range of its index (stateBits); Where's conditions are
// checked on every record, block by block, once for a state of the file
// (a keystroke that only adds words reuses it).
func (c *pageCache) condBits(tx boltTx, l *boltList, q *PageQuery) ([]uint64, error) {
	if !q.HasWhere() {
		return c.stateBits(tx, l, q.State)
	}
	if b := c.cachedCond(tx, q); b != nil {
		return b, nil
	}
	key := q.CondKey()
	out := make([]uint64, (l.rowCount(tx)+63)/64)
	sb := tx.Bucket(l.records)
	var f fold.Folder
	cur := tx.Bucket(l.text).Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(k) != 4 {
			return nil, kvlayout.ErrCorrupt
		}
		blk := int(binary.BigEndian.Uint32(k))
		rows, err := decodeBlock(v)
		if err != nil {
			return nil, fmt.Errorf("search text block %x: %w", k, err)
		}
		for _, r := range rows {
			if blk < len(out) && l.keep(sb.Get(r.key), q, &f) {
				out[blk] |= 1 << (r.lo & 63)
			}
		}
	}
	c.mu.Lock()
	c.whereTx, c.where, c.whereSet = tx.Bolt.ID(), key, out
	c.mu.Unlock()
	return out, nil
}

// cachedCond is the rows of the query's conditions when known for this
// state of the file.
func (c *pageCache) cachedCond(tx boltTx, q *PageQuery) []uint64 {
	if !q.HasWhere() {
		return c.cachedState(tx, q.State)
	}
	key := q.CondKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.whereTx == tx.Bolt.ID() && c.where == key {
		return c.whereSet
	}
	return nil
}

// foldGerman is the fold of s's German transliteration, when it has one.
func foldGerman(s string) (string, bool) {
	var f fold.Folder
	g, ok := f.AppendGerman(nil, textsafe.Clean(s))
	return string(g), ok
}
