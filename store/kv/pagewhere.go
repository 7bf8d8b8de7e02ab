package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// condBits finds the rows that pass the query's state and Where: a state
// alone is a range of its index (stateBits). With Where, each condition an
// index answers is a set of rows, and the sets are intersected
// (whereSets): the state (the tab's or the filter's, with the created
// range inside it) or the created range, a range of an index whose
// positions hold the creation time; the amount, a range of the amount
// index; a field's value (customer:, email:, service:), the rows whose
// search text holds it (fieldRows). Then only the rows left are looked at:
// a field in the row's search text, and the record only for what no index
// answers (the amount at its range's ends, a state the index does not
// hold exactly). "state:reserved created:<10d" reads no record at all.
// Without any of them every record is checked, block by block. Either is
// done once for a state of the file (a keystroke that only adds words
// reuses it).
func (c *pageCache) condBits(ctx context.Context, tx boltTx, l *boltList, q *PageQuery) ([]uint64, error) {
	if !q.HasWhere() {
		return c.stateBits(tx, l, q.State)
	}
	if b := c.cachedCond(tx, q); b != nil {
		return b, nil
	}
	key := q.CondKey()
	ws, err := whereSets(ctx, tx, l, q)
	if err != nil {
		return nil, err
	}
	sb := tx.Bucket(l.records)
	var f fold.Folder
	record := func(r textRow) bool { return l.keep(r.key, sb.Get(r.key), q, &f) }
	out := ws.rows
	switch {
	case out == nil:
		// No condition an index answers: every record.
		out = make([]uint64, (l.rowCount(tx)+63)/64)
		err = eachTextRow(tx, l, nil, func(blk int, r textRow) {
			if blk < len(out) && record(r) {
				out[blk] |= 1 << (r.lo & 63)
			}
		})
	case ws.records || ws.fields:
		// Each row by its text, or its record for what no index answers.
		fields := l.fields(&q.Where)
		out = make([]uint64, len(ws.rows))
		err = eachTextRow(tx, l, ws.rows, func(blk int, r textRow) {
			var ok bool
			switch {
			case ws.records || ws.edges != nil && ws.edges[blk]&(1<<(r.lo&63)) != 0:
				ok = record(r)
			default:
				ok = fields(r.text)
			}
			if ok {
				out[blk] |= 1 << (r.lo & 63)
			}
		})
	case ws.edges != nil:
		// The amount's edges only: their records.
		err = eachTextRow(tx, l, and(out, ws.edges), func(blk int, r textRow) {
			if !record(r) {
				out[blk] &^= 1 << (r.lo & 63)
			}
		})
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.whereTx, c.where, c.whereSet = tx.Bolt.ID(), key, out
	c.mu.Unlock()
	return out, nil
}

// whereRows are the sets of whereSets: rows, what the indexes and the
// search text leave (nil when none of them could narrow: every record is
// checked); edges, the rows among them at the amount range's ends, whose
// records decide; records, every row left needs its record (a condition
// no index answers); fields, every row left needs its search text checked
// for Where's fields.
type whereRows struct {
	rows, edges     []uint64
	records, fields bool
}

// whereSets intersects the sets of rows the indexes and the search text
// give for q's conditions (condBits).
func whereSets(ctx context.Context, tx boltTx, l *boltList, q *PageQuery) (whereRows, error) {
	w := &q.Where
	var out whereRows
	narrowTo := func(b []uint64) {
		if out.rows == nil {
			out.rows = b
			return
		}
		for i := range out.rows {
			if i < len(b) {
				out.rows[i] &= b[i]
			} else {
				out.rows[i] = 0
			}
		}
	}
	n := int((l.rowCount(tx) + 63) / 64)
	out.records = len(w.Operator) > 0
	// The state, or the created range alone.
	st := q.State
	if w.State != "" {
		switch ws := domain.WhereState(w.State); {
		case st == "":
			st = ws
		case ws != st:
			out.records = true // rows in both (reserved with an unknown outcome): their records say
		}
	}
	if st != "" || w.Created != nil {
		var r indexRange
		if st != "" {
			r.cur, r.prefix = l.stateRange(tx, st)
			if l.knownState != nil && !l.knownState(st) {
				out.records = true
			}
		} else {
			r.cur = tx.Bucket(l.idx[0]).Cursor() // column 0 is the creation order of both lists
		}
		r.from = r.prefix
		if c := w.Created; c != nil {
			if !c.From.IsZero() {
				r.from = domain.AppendCreated(slices.Clone(r.prefix), c.From)
			}
			if !c.To.IsZero() {
				r.to = domain.AppendCreated(slices.Clone(r.prefix), c.To)
			}
		}
		b := make([]uint64, n)
		if err := r.walk(func(k []byte, id uint32) {
			if w.Created == nil || domain.ReadInt64(k[len(r.prefix):]) != zeroCreated {
				setBit(b, id)
			}
		}); err != nil {
			return out, err
		}
		narrowTo(b)
	}
	// The amount.
	if a := w.Amount; a != nil {
		cr, ok := centsRange(a)
		if ok && l.amountCol > 0 {
			r := indexRange{cur: tx.Bucket(l.idx[l.amountCol]).Cursor(), from: cr.from, to: cr.to}
			b, e := make([]uint64, n), make([]uint64, n)
			if err := r.walk(func(k []byte, id uint32) {
				setBit(b, id)
				if c := domain.ReadInt64(k); c < cr.sureLo || c > cr.sureHi {
					setBit(e, id) // at the edge: a fraction of a cent may decide
				}
			}); err != nil {
				return out, err
			}
			narrowTo(b)
			out.edges = e
		} else {
			out.records = true
		}
	}
	// The fields.
	if len(w.Customer) > 0 || len(w.Email) > 0 || len(w.Service) > 0 {
		cand, err := fieldRows(ctx, tx, l, w, out.rows)
		if err != nil {
			return out, err
		}
		if cand != nil {
			narrowTo(cand)
			out.fields = true
		}
	}
	if out.rows == nil {
		out.records = true
	}
	return out, nil
}

func setBit(b []uint64, id uint32) {
	if int(id>>6) < len(b) {
		b[id>>6] |= 1 << (id & 63)
	}
}

// fieldRows is the rows (of those set in of, when not nil: only their
// blocks are searched) whose search text holds every value of Where's
// fields (customer:, email:, service:), folded as the field is: the rows
// those conditions can keep. Nil when Where has none.
func fieldRows(ctx context.Context, tx boltTx, l *boltList, w *query.Query, of []uint64) ([]uint64, error) {
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
	rows, _, err := searchBlocks(ctx, tx, l, values, of, true, 0)
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

// indexRange is a range of a list index: its keys start with prefix and
// are ≥ from and < to (nil: no end). A state's rows in creation order (the
// state index's range, or the outcome-unknown or order-missing index; a
// transaction kind's range of the kind index) or every row in creation
// order, cut to a created range, have the creation time (8 bytes) after
// the prefix; the amount index has the amount in cents first.
type indexRange struct {
	cur              Cursor
	prefix, from, to []byte
}

// walk calls fn with the key and the row ID of every entry of the range.
func (r indexRange) walk(fn func(k []byte, id uint32)) error {
	for k, v := r.cur.Seek(r.from); k != nil && bytes.HasPrefix(k, r.prefix) && (r.to == nil || bytes.Compare(k, r.to) < 0); k, v = r.cur.Next() {
		if len(v) < 4 || len(k) < len(r.prefix)+8 {
			return fmt.Errorf("index entry %x: %w", k, kvlayout.ErrCorrupt)
		}
		fn(k, binary.BigEndian.Uint32(v))
	}
	return nil
}

// amountRange is the amount index's range of an amount: from and to as
// indexRange has them (nil: no end), and within it [sureLo, sureHi] in
// cents, whose rows are in the amount whatever fraction of a cent their
// cents dropped (AmountCents truncates: a row of c cents has an amount
// strictly between c-1 and c+1 cents).
type amountRange struct {
	from, to       []byte
	sureLo, sureHi int64
}

// maxCents bounds the amounts the index answers; a filter beyond it (no
// real amount) checks the records.
const maxCents = 1 << 50

// centsRange is r as a range of the amount index, false when an end is
// beyond maxCents.
func centsRange(r *query.AmountRange) (amountRange, bool) {
	a := amountRange{sureLo: math.MinInt64, sureHi: math.MaxInt64}
	limit := decimal.NewFromInt(maxCents)
	if r.HasMin {
		m := r.Min.Shift(2)
		if m.Abs().GreaterThan(limit) {
			return a, false
		}
		a.from, a.sureLo = domain.AppendCents(nil, m.Floor().IntPart()-1), m.Ceil().IntPart()+1
	}
	if r.HasMax {
		m := r.Max.Shift(2)
		if m.Abs().GreaterThan(limit) {
			return a, false
		}
		a.to, a.sureHi = domain.AppendCents(nil, m.Ceil().IntPart()+2), m.Floor().IntPart()-1
	}
	return a, true
}

// zeroCreated is what a position holds for a row with no creation time,
// which no created range holds (query.TimeRange.Contains).
var zeroCreated = time.Time{}.UnixNano()
