package domain

import (
	"bytes"
	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/internal/textsafe"
	"slices"
	"sort"
	"time"

	"github.com/shopspring/decimal"
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

// foldValues are a field's values, folded (FoldValue).
func foldValues(values []string) [][]byte {
	out := make([][]byte, len(values))
	for i, v := range values {
		out[i] = []byte(FoldValue(v))
	}
	return out
}

// fieldHasAll reports whether field i of text holds every value (folded).
func fieldHasAll(text []byte, i int, folded [][]byte) bool {
	if len(folded) == 0 {
		return true
	}
	f := searchField(text, i)
	for _, v := range folded {
		if !bytes.Contains(f, v) {
			return false
		}
	}
	return true
}

func InAmount(r *query.AmountRange, d decimal.Decimal) bool { return r == nil || r.Contains(d) }
func InCreated(r *query.TimeRange, t time.Time) bool        { return r == nil || r.Contains(t) }

// KeepSummary applies the query's state and Where (not its words) to a
// reservation; text is its search text, made when Where needs it.
func KeepSummary(s *Summary, q *PageQuery, f *fold.Folder) bool {
	if !keepState(s, q.State) {
		return false
	}
	if !q.HasWhere() {
		return true
	}
	w := &q.Where
	if w.State != "" && !keepState(s, WhereState(w.State)) {
		return false
	}
	if !InAmount(w.Amount, s.Amount) || !InCreated(w.Created, s.Created) {
		return false
	}
	if len(w.Customer) > 0 || len(w.Email) > 0 {
		return KeepSummaryFields(AppendSearchText(nil, s, f), w)
	}
	return true
}

// KeepSummaryFields applies Where's fields (customer:, email:) to a
// reservation's search text (AppendSearchText), as KeepSummary does.
func KeepSummaryFields(text []byte, w *query.Query) bool { return SummaryFields(w)(text) }

// SummaryFields is KeepSummaryFields for many rows: Where's values are
// folded once (folding is most of the check's cost; a filter checks tens
// of thousands of rows).
func SummaryFields(w *query.Query) func(text []byte) bool {
	customer, email := foldValues(w.Customer), foldValues(w.Email)
	return func(text []byte) bool {
		return fieldHasAll(text, ResFieldCustomer, customer) && fieldHasAll(text, ResFieldEmail, email)
	}
}

// KeepTxFields applies Where's fields (customer:, service:) to a
// transaction's search text (AppendTxSearchText), as KeepTxWhere does.
func KeepTxFields(text []byte, w *query.Query) bool { return TxFields(w)(text) }

// TxFields is KeepTxFields for many rows (SummaryFields).
func TxFields(w *query.Query) func(text []byte) bool {
	customer, service := foldValues(w.Customer), foldValues(w.Service)
	return func(text []byte) bool {
		return fieldHasAll(text, TxFieldCustomer, customer) && fieldHasAll(text, TxFieldService, service)
	}
}

// KeepTxWhere is KeepSummary for a transaction.
func KeepTxWhere(t *Transaction, q *PageQuery, f *fold.Folder) bool {
	if !keepTx(t, q.State) {
		return false
	}
	if !q.HasWhere() {
		return true
	}
	w := &q.Where
	if !InAmount(w.Amount, t.Amount) || !InCreated(w.Created, t.Created) {
		return false
	}
	if len(w.Customer) > 0 || len(w.Service) > 0 {
		return KeepTxFields(AppendTxSearchText(nil, t, f), w)
	}
	return true
}

// FoldGerman is the fold of s's German transliteration, when it has one.
func FoldGerman(s string) (string, bool) {
	var f fold.Folder
	g, ok := f.AppendGerman(nil, textsafe.Clean(s))
	return string(g), ok
}

func ContainsAll(text []byte, words [][]byte) bool {
	for _, w := range words {
		if !bytes.Contains(text, w) {
			return false
		}
	}
	return true
}

func WordBytes(words []string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i] = []byte(w)
	}
	return out
}

func keepState(s *Summary, st State) bool {
	switch st {
	case "":
		return true
	case StateOutcomeUnknown:
		return s.OutcomeUnknown
	case StateOrderMissing:
		return OrderMissing(s)
	}
	return s.State == st
}

// PageSummaries answers q over summaries held in memory: a store without
// indexes, a test's fake, and the reference the stores' tests compare with.
func PageSummaries(all []Summary, q PageQuery) Page {
	words := WordBytes(q.SearchWords())
	type row struct {
		pos []byte
		i   int
	}
	var f fold.Folder
	var text []byte
	rows := make([]row, 0, len(all))
	for i := range all {
		s := &all[i]
		if !KeepSummary(s, &q, &f) {
			continue
		}
		if len(words) > 0 {
			text = AppendSearchText(text[:0], s, &f)
			if !ContainsAll(text, words) {
				continue
			}
		}
		rows = append(rows, row{PosKey(nil, q.Sort, s), i})
	}
	slices.SortFunc(rows, func(a, b row) int { return bytes.Compare(a.pos, b.pos) })
	if q.Desc {
		slices.Reverse(rows)
	}
	from, to := Window(len(rows), func(i int) []byte { return rows[i].pos }, &q)
	p := Page{Total: len(rows), Less: from > 0, More: to < len(rows)}
	for _, r := range rows[from:to] {
		p.Rows = append(p.Rows, PageRow{Summary: all[r.i], Pos: r.pos})
	}
	return p
}

// Window places the query's Window (cursor and limit) in n rows in the
// list's order, whose positions pos(i) ascend (descend with q.Desc): the
// rows from..to. The in-memory lists and a few sorted rows of the bbolt
// lists share it.
func Window(n int, pos func(i int) []byte, q *PageQuery) (from, to int) {
	// after reports whether position p comes after c in the list's order.
	after := func(p, c []byte) bool {
		if q.Desc {
			return bytes.Compare(p, c) < 0
		}
		return bytes.Compare(p, c) > 0
	}
	return WindowAt(n, q, func(c []byte, at bool) int {
		return sort.Search(n, func(i int) bool {
			p := pos(i)
			return after(p, c) || at && bytes.Equal(p, c)
		})
	})
}

// WindowAt is Window for rows whose cursors are found by first: the index
// of the first of the n rows after cursor c (or at it, with at). It is
// the one place that says which rows a cursor (after, from, before, last)
// and a limit ask for; the views' rows in memory, which find a cursor by
// their own order, use it too.
func WindowAt(n int, q *PageQuery, first func(c []byte, at bool) int) (from, to int) {
	lim := q.PageSize()
	switch {
	case q.After != nil:
		from = first(q.After, false)
		to = min(from+lim, n)
	case q.From != nil:
		from = first(q.From, true)
		to = min(from+lim, n)
	case q.Before != nil:
		to = first(q.Before, true)
		from = max(to-lim, 0)
	case q.Last:
		to = n
		from = max(to-lim, 0)
	default:
		to = min(lim, n)
	}
	return from, to
}

// keepTx applies a transaction list's State: a Kind, or "" for all.
func keepTx(t *Transaction, st State) bool { return st == "" || Kind(st) == t.Kind }

// PageTransactions answers q over transactions held in memory: a store
// without the list's indexes, a test's fake, and the reference the
// stores' tests compare with.
func PageTransactions(all []*Transaction, q PageQuery) TxPage {
	words := WordBytes(q.SearchWords())
	var f fold.Folder
	var text []byte
	rows := make([]TxPageRow, 0, len(all))
	for _, t := range all {
		if !KeepTxWhere(t, &q, &f) {
			continue
		}
		if len(words) > 0 {
			text = AppendTxSearchText(text[:0], t, &f)
			if !ContainsAll(text, words) {
				continue
			}
		}
		rows = append(rows, TxPageRow{Tx: t, Pos: TxPosKey(nil, q.Sort, t)})
	}
	slices.SortFunc(rows, func(a, b TxPageRow) int { return bytes.Compare(a.Pos, b.Pos) })
	if q.Desc {
		slices.Reverse(rows)
	}
	from, to := Window(len(rows), func(i int) []byte { return rows[i].Pos }, &q)
	p := TxPage{Total: len(rows), Less: from > 0, More: to < len(rows)}
	if to > from {
		p.Rows = rows[from:to:to]
	}
	return p
}
