package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// condBits finds the rows that pass the query's state and Where: a state
// alone is a range of its index (stateBits). With Where, a state (the
// tab's or the filter's) or a created range is a range of an index too
// (narrow): the rows outside it are never read, and when the range is all
// the query asks ("state:reserved created:<10d") no record is read at all;
// an amount alone is a range of the amount index, whose rows at its edges
// are read.
// A field's value (customer:, email:, service:) must be in the row's
// search text, so the text blocks' search (fieldRows) leaves the only
// rows whose records are read for it. Otherwise Where's conditions are
// checked on every record, block by block. Either is done once for a
// state of the file (a keystroke that only adds words reuses it).
func (c *pageCache) condBits(ctx context.Context, tx boltTx, l *boltList, q *PageQuery) ([]uint64, error) {
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
	cand, err := fieldRows(ctx, tx, l, &q.Where)
	if err != nil {
		return nil, err
	}
	tb := tx.Bucket(l.text)
	if r, ok := narrow(tx, l, q); ok {
		var bk [4]byte
		if err := r.bits(out, func(k, v []byte, record bool) (bool, error) {
			id := binary.BigEndian.Uint32(v)
			if cand != nil && !hasBit(cand, id) {
				return false, nil
			}
			if !record {
				// Only the fields are left: the row's search text says.
				binary.BigEndian.PutUint32(bk[:], id>>6)
				return l.fields(blockRowText(tb.Get(bk[:]), byte(id&63)), &q.Where), nil
			}
			rk, err := entryKey(nil, k, v)
			if err != nil {
				return false, err
			}
			return l.keep(sb.Get(rk), q, &f), nil
		}); err != nil {
			return nil, err
		}
	} else if err := eachTextRow(tx, l, cand, func(blk int, r textRow) {
		var ok bool
		if onlyFields(&q.Where) {
			ok = l.fields(r.text, &q.Where)
		} else {
			ok = l.keep(sb.Get(r.key), q, &f)
		}
		if ok && blk < len(out) {
			out[blk] |= 1 << (r.lo & 63)
		}
	}); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.whereTx, c.where, c.whereSet = tx.Bolt.ID(), key, out
	c.mu.Unlock()
	return out, nil
}

// fieldRows is the rows whose search text holds every value of Where's
// fields (customer:, email:, service:), folded as the field is: the rows
// those conditions can keep. Nil when Where has none.
func fieldRows(ctx context.Context, tx boltTx, l *boltList, w *query.Query) ([]uint64, error) {
	var values [][]byte
	for _, vs := range [][]string{w.Customer, w.Email, w.Service} {
		for _, v := range vs {
			if f := domain.FoldValue(v); f != "" {
				values = append(values, []byte(f))
			}
		}
	}
	if len(values) == 0 {
		return nil, nil
	}
	rows, _, err := searchBlocks(ctx, tx, l, values, nil, true, 0)
	if err != nil {
		return nil, fmt.Errorf("the filter's fields: %w", err)
	}
	return rows, nil
}

// eachTextRow calls fn with every row of the text blocks (row ID / 64 and
// the row), or with only the rows set in rows when it is not nil.
func eachTextRow(tx boltTx, l *boltList, rows []uint64, fn func(blk int, r textRow)) error {
	tb := tx.Bucket(l.text)
	block := func(k, v []byte) error {
		if len(k) != 4 {
			return kvlayout.ErrCorrupt
		}
		blk := int(binary.BigEndian.Uint32(k))
		rs, err := decodeBlock(v)
		if err != nil {
			return fmt.Errorf("search text block %x: %w", k, err)
		}
		for _, r := range rs {
			if rows == nil || (blk < len(rows) && rows[blk]&(1<<(r.lo&63)) != 0) {
				fn(blk, r)
			}
		}
		return nil
	}
	if rows == nil {
		cur := tb.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if err := block(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	var bk [4]byte
	for i, m := range rows {
		if m == 0 {
			continue
		}
		binary.BigEndian.PutUint32(bk[:], uint32(i))
		if v := tb.Get(bk[:]); v != nil {
			if err := block(bk[:], v); err != nil {
				return err
			}
		}
	}
	return nil
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

// indexRange is the part of an index that holds every row a query can
// keep: a state's rows in creation order (the state index's range, or the
// outcome-unknown or order-missing index; a transaction kind's range of
// the kind index), or every row in creation order, cut to the filter's
// created range. Each key of the range is its prefix, the creation time
// (8 bytes) and the row's packed key.
type indexRange struct {
	cur      Cursor
	prefix   []byte
	from, to []byte // the keys are ≥ from and < to (nil: no end)
	// exact: the query keeps every row of the range whose creation time is
	// known (created set) or every row (not set), so no record is read;
	// fields: so far as Where's fields (customer:, …) keep it, which the
	// row's search text says.
	exact, created, fields bool
	// amount, when set: the range is of the amount index, whose rows at
	// its edges need their record (amountRange).
	amount *amountRange
}

// amountRange is the amount index's range of an amount: [lo, hi] in cents,
// and within it [sureLo, sureHi], whose rows are in the amount whatever
// fraction of a cent their cents dropped (AmountCents truncates: a row of
// c cents has an amount strictly between c-1 and c+1 cents).
type amountRange struct{ lo, hi, sureLo, sureHi int64 }

// maxCents bounds the amounts the index answers; a filter beyond it (no
// real amount) checks the records.
const maxCents = 1 << 50

// centsRange is r as a range of the amount index, false when an end is
// beyond maxCents.
func centsRange(r *query.AmountRange) (amountRange, bool) {
	a := amountRange{lo: -maxCents, hi: maxCents, sureLo: -maxCents, sureHi: maxCents}
	limit := decimal.NewFromInt(maxCents)
	if r.HasMin {
		m := r.Min.Shift(2)
		if m.Abs().GreaterThan(limit) {
			return a, false
		}
		a.lo, a.sureLo = m.Floor().IntPart()-1, m.Ceil().IntPart()+1
	}
	if r.HasMax {
		m := r.Max.Shift(2)
		if m.Abs().GreaterThan(limit) {
			return a, false
		}
		a.hi, a.sureHi = m.Ceil().IntPart()+1, m.Floor().IntPart()-1
	}
	return a, true
}

// onlyFields reports whether Where asks nothing of a row beyond its state,
// its creation time and its fields (customer:, email:, service:), all of
// which the list's indexes and search text answer without its record.
func onlyFields(w *query.Query) bool { return w.Amount == nil && len(w.Operator) == 0 }

// zeroCreated is what a position holds for a row with no creation time,
// which no created range holds (query.TimeRange.Contains).
var zeroCreated = time.Time{}.UnixNano()

// narrow finds the index range of q's rows: its state (the tab's, or the
// filter's "state:" when the tab has none), without one its created range,
// without either its amount range. It reports false when Where has none
// of them (a customer alone: every row of the search text is checked).
func narrow(tx Tx, l *boltList, q *PageQuery) (indexRange, bool) {
	w := &q.Where
	other := !onlyFields(w)
	st := q.State
	if w.State != "" {
		ws := domain.WhereState(w.State)
		switch {
		case st == "":
			st = ws
		case ws != st:
			other = true // rows in both (reserved with an unknown outcome): their records say
		}
	}
	var r indexRange
	switch {
	case st != "":
		r.cur, r.prefix = l.stateRange(tx, st)
		if l.knownState != nil && !l.knownState(st) {
			other = true
		}
	case w.Created != nil:
		r.cur = tx.Bucket(l.idx[0]).Cursor() // column 0 is the creation order of both lists
	case w.Amount != nil && l.amountCol > 0:
		a, ok := centsRange(w.Amount)
		if !ok {
			return r, false
		}
		r.cur, r.amount = tx.Bucket(l.idx[l.amountCol]).Cursor(), &a
		r.from, r.to = domain.AppendCents(nil, a.lo), domain.AppendCents(nil, a.hi+1)
		r.exact = len(w.Operator) == 0
		r.fields = len(w.Customer) > 0 || len(w.Email) > 0 || len(w.Service) > 0
		return r, true
	default:
		return r, false
	}
	r.from = r.prefix
	if c := w.Created; c != nil {
		r.created = true
		if !c.From.IsZero() {
			r.from = domain.AppendCreated(slices.Clone(r.prefix), c.From)
		}
		if !c.To.IsZero() {
			r.to = domain.AppendCreated(slices.Clone(r.prefix), c.To)
		}
	}
	r.exact = !other
	r.fields = len(w.Customer) > 0 || len(w.Email) > 0 || len(w.Service) > 0
	return r, true
}

// bits sets the row ID bit of every entry of the range the query keeps:
// all of them when the range is exact and Where has no fields, else those
// keep reports true for (record false: the row's search text checked for
// the fields of an exact range; true: its record checked for everything).
func (r indexRange) bits(out []uint64, keep func(k, v []byte, record bool) (bool, error)) error {
	for k, v := r.cur.Seek(r.from); k != nil && bytes.HasPrefix(k, r.prefix) && (r.to == nil || bytes.Compare(k, r.to) < 0); k, v = r.cur.Next() {
		if len(v) < 4 || len(k) < len(r.prefix)+8 {
			return fmt.Errorf("index entry %x: %w", k, kvlayout.ErrCorrupt)
		}
		ok, record := r.exact, !r.exact
		if ok && r.created {
			ok = domain.ReadInt64(k[len(r.prefix):]) != zeroCreated
		}
		if a := r.amount; a != nil {
			if c := domain.ReadInt64(k); c < a.sureLo || c > a.sureHi {
				record = true // at the edge: a fraction of a cent may decide
			}
		}
		if ok && r.fields || record {
			var err error
			if ok, err = keep(k, v, record); err != nil {
				return err
			}
		}
		if id := binary.BigEndian.Uint32(v); ok && int(id>>6) < len(out) {
			out[id>>6] |= 1 << (id & 63)
		}
	}
	return nil
}
