package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"paydesk/store/domain"
)

// The lists on the native PostgreSQL engine: the reservation and the
// transaction list are paged straight from paydesk_reservations and
// paydesk_transactions (0009), whose rows carry the sort columns and the
// folded search text. The order, the filter and the cursors are page.go's
// (posKey, txPosKey, AppendSearchText): a page is the rows past a keyset
// cursor in the order's columns, the filter a LIKE per word that the
// pg_trgm index answers, so every engine shows the same rows in the same
// order and a cursor from one page leads on in the next. A reservation
// whose creation time or amount is not known sorts as the position key
// has it (the earliest time, 0.00); 0010's list indexes are on those
// expressions.

// pgRelCreated is a list row's creation time as the order has it: an
// unknown one first.
const pgRelCreated = `coalesce(created, '-infinity'::timestamptz)`

// pgRelList is one list over a table of the native engine.
type pgRelList struct {
	table   string
	counter string     // paydesk_counters' name of its records
	order   [][]string // per sort order, the position's columns (the cursor's tuple)
	kinds   []domain.ColKind
	sorts   domain.SortBy
	// state is a state filter's condition (arg adds an argument).
	state func(st domain.State, arg func(any) string) string
	// amount: the sort order whose value is an amount in cents.
	amount domain.SortBy
	// whereCols: how Where's conditions are asked of the table.
	whereCols *SQLCols
}

var pgRelReservations = &pgRelList{
	table: "paydesk_reservations r", counter: "reservations",
	order: [][]string{
		domain.SortCreated:  {pgRelCreated, "key"},
		domain.SortInvoice:  {"invoice", pgRelCreated, "key"},
		domain.SortCustomer: {"customer_sort", pgRelCreated, "key"},
		domain.SortAmount:   {"coalesce(amount, 0)", pgRelCreated, "key"},
		domain.SortState:    {"state_rank", pgRelCreated, "key"},
	},
	kinds: domain.ResCols, sorts: domain.SortCount, amount: domain.SortAmount,
	state: pgRelResState,
	whereCols: &SQLCols{Amount: "coalesce(amount, 0)", Created: "created", CreatedOrder: pgRelCreated, State: pgRelResState,
		Customer: domain.ResFieldCustomer, Email: domain.ResFieldEmail, Service: -1},
}

func pgRelResState(st domain.State, arg func(any) string) string {
	switch st {
	case domain.StateOutcomeUnknown:
		return "outcome_unknown"
	case domain.StateOrderMissing:
		return "order_missing"
	}
	// The rank first: the list's state index (state_rank, creation,
	// key) then holds a state's rows in creation order, which a page in
	// that order, or within a created range, walks instead of the table.
	return "state_rank = " + arg(int16(domain.StateRank(st))) + " AND state = " + arg(string(st))
}

var pgRelTransactions = &pgRelList{
	table: "paydesk_transactions", counter: "transactions",
	order: [][]string{
		domain.TxSortCreated:  {pgRelCreated, "key"},
		domain.TxSortKind:     {"kind", pgRelCreated, "key"},
		domain.TxSortInvoice:  {"invoice", pgRelCreated, "key"},
		domain.TxSortCustomer: {"customer_sort", pgRelCreated, "key"},
		domain.TxSortAmount:   {"amount", pgRelCreated, "key"},
		domain.TxSortStatus:   {"status", pgRelCreated, "key"},
	},
	kinds: []domain.ColKind{domain.TxSortCreated: domain.ColNone, domain.TxSortKind: domain.ColString, domain.TxSortInvoice: domain.ColString, domain.TxSortCustomer: domain.ColString,
		domain.TxSortAmount: domain.ColInt64, domain.TxSortStatus: domain.ColInt64},
	sorts: domain.TxSortCount, amount: domain.TxSortAmount,
	state:     func(st domain.State, arg func(any) string) string { return "kind = " + arg(string(st)) },
	whereCols: &SQLCols{Amount: "amount", Created: "created", CreatedOrder: pgRelCreated, Customer: domain.TxFieldCustomer, Email: -1, Service: domain.TxFieldService},
}

// pgRelLists is the native engine's Lister.
type pgRelLists struct{ e *Engine }

var _ domain.Lister = pgRelLists{}

// lists is the engine's Lister (Capabilities.Lists).
func (e *Engine) lists() domain.Lister { return pgRelLists{e} }

// zeroNano is the position key's time of a row whose time is not known.
var zeroNano = time.Time{}.UnixNano()

// cursorArgs turns a position key into the values of the order's columns.
func (l *pgRelList) cursorArgs(sort domain.SortBy, pos []byte) ([]any, error) {
	kind := l.kinds[sort]
	val, created, key, err := domain.PosParts(kind, pos)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, 3)
	switch {
	case kind == domain.ColString:
		out = append(out, string(val))
	case kind == domain.ColInt64 && sort == l.amount:
		out = append(out, pgNumeric(decimal.New(domain.ReadInt64(val), -2)))
	case kind == domain.ColInt64:
		out = append(out, domain.ReadInt64(val))
	case kind == domain.ColByte:
		out = append(out, int16(val[0]))
	}
	at := pgtype.Timestamptz{Time: time.Unix(0, created), Valid: true}
	if created == zeroNano {
		at = pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	}
	return append(out, at, key), nil
}

// where is the filter's condition and its arguments.
func (l *pgRelList) where(q domain.PageQuery) (string, []any) {
	search, rest, args := l.whereParts(q)
	return strings.Join(append(search, rest...), " AND "), args
}

// whereParts are the filter's conditions: the search words' and the rest
// (state, fields), with their arguments.
func (l *pgRelList) whereParts(q domain.PageQuery) (search, rest []string, args []any) {
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, w := range q.SearchWords() {
		search = append(search, "search LIKE "+arg("%"+LikeEscape(w)+"%"))
	}
	if q.State != "" {
		rest = append(rest, l.state(q.State, arg))
	}
	rest = append(rest, l.whereCols.Where(&q.Where, arg)...)
	return search, rest, args
}

// scanFirst is how many rows, in the list's order, a page with search
// words looks at first (pgRelPage): on a million reservations 4,000 rows
// take a few milliseconds, and a word that leaves fewer than a page in
// them is rare enough for the trigram index.
const scanFirst = 4000

func (e *Engine) scanFirstRows() int {
	if e.scanFirst > 0 {
		return e.scanFirst
	}
	return scanFirst
}

// SetScanFirst sets how many rows a page with search words looks at
// before it asks all (0: scanFirst). The tests set a small one so that
// both ways of answering a page are compared with the reference lists.
func (e *Engine) SetScanFirst(n int) { e.scanFirst = n }

// alias is the name the table's rows go by in a query: its alias, or the
// table's name.
func (l *pgRelList) alias() string {
	if _, a, ok := strings.Cut(l.table, " "); ok {
		return a
	}
	return l.table
}

// pgRelRows is what a page query read: each row's position and record.
type pgRelRows[T any] struct {
	rows       []T
	pos        [][]byte
	total      int
	more, less bool
}

// page answers q over the list; read scans one row of sql's result into a
// record and its position.
func pgRelPage[T any](ctx context.Context, e *Engine, l *pgRelList, q domain.PageQuery, cols string,
	scan func(row pgx.Row) (T, []byte, error)) (pgRelRows[T], error) {
	if err := q.Check(l.sorts); err != nil {
		return pgRelRows[T]{}, err
	}
	search, rest, args := l.whereParts(q)
	where := strings.Join(slices.Concat(search, rest), " AND ")
	order := strings.Join(l.order[q.Sort], ", ")
	lim := q.PageSize()
	// fwd: read in the list's order; else backwards from the end or from
	// a Before cursor, and turned round.
	fwd := q.Before == nil && !q.Last
	anchor := q.After
	if q.Before != nil {
		anchor = q.Before
	}
	if q.From != nil {
		anchor = q.From
	}
	eq := ""
	if q.From != nil {
		eq = "=" // the anchor's row is on the page
	}
	asc := q.Desc != fwd
	// cursor is the condition of a page that starts at a row, tuple its
	// position's values.
	var cursor []string
	var tuple string
	if anchor != nil {
		cur, err := l.cursorArgs(q.Sort, anchor)
		if err != nil {
			return pgRelRows[T]{}, err
		}
		ph := make([]string, len(cur))
		for i, v := range cur {
			args = append(args, v)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		tuple = "(" + strings.Join(ph, ", ") + ")"
		op := "<" + eq
		if asc {
			op = ">" + eq
		}
		cursor = []string{"(" + order + ") " + op + " " + tuple}
	}
	cond := strings.Join(slices.Concat(search, rest, cursor), " AND ")
	dir := " DESC"
	if asc {
		dir = ""
	}
	orderBy := " ORDER BY " + strings.Join(l.order[q.Sort], dir+", ") + dir
	sql := "SELECT " + cols + " FROM " + l.table
	if cond != "" {
		sql += " WHERE " + cond
	}
	sql += orderBy + " LIMIT " + strconv.Itoa(lim+1)
	// A search word the trigram index answers well is a rare one; a common
	// one ("mü", a frequent surname) matches thousands of rows, which the
	// planner fetches all and sorts (220–940 ms on a million reservations),
	// where the page's rows are among the first few thousand in the list's
	// order. So a page with search words first looks at the first
	// scanFirst rows in order (after the cursor, with the other
	// conditions): when lim+1 of them match, they are the page. Otherwise
	// the query over all rows answers.
	var first string
	if len(search) > 0 {
		inner := strings.Join(slices.Concat(rest, cursor), " AND ")
		// The inner rows carry the order's values as columns of their own
		// (sort_0, …), and the outer query orders by them: the planner
		// then knows the inner rows come in that order and stops at the
		// page's last match. Ordered by the expressions themselves it
		// sorted what matched of all scanFirst rows first (on a million
		// reservations, "%m%": 4,000 rows read for a page of 201).
		exprs := l.order[q.Sort]
		named := make([]string, len(exprs))
		outer := make([]string, len(exprs))
		for i, x := range exprs {
			named[i] = x + " AS sort_" + strconv.Itoa(i)
			outer[i] = "sort_" + strconv.Itoa(i) + dir
		}
		first = "SELECT *, " + strings.Join(named, ", ") + " FROM " + l.table
		if inner != "" {
			first += " WHERE " + inner
		}
		first = "SELECT " + cols + " FROM (" + first + orderBy + " LIMIT " + strconv.Itoa(e.scanFirstRows()) + ") " + l.alias() +
			" WHERE " + strings.Join(search, " AND ") + " ORDER BY " + strings.Join(outer, ", ") + " LIMIT " + strconv.Itoa(lim+1)
	}

	p := pgRelRows[T]{total: -1}
	var behind bool
	err := e.ViewTx(ctx, func(t *Tx) error {
		read := func(sql string) error {
			p.rows, p.pos, p.more = p.rows[:0], p.pos[:0], false
			rows, err := t.query(sql, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				if len(p.rows) == lim {
					p.more = true
					continue
				}
				v, pos, err := scan(rows)
				if err != nil {
					rows.Close()
					return t.fail(err)
				}
				p.rows, p.pos = append(p.rows, v), append(p.pos, pos)
			}
			rows.Close()
			return t.fail(rows.Err())
		}
		full := true
		if first != "" {
			if err := read(first); err != nil {
				return err
			}
			full = !p.more // fewer than lim+1 in the first rows: ask all
		}
		if full {
			if err := read(sql); err != nil {
				return err
			}
		}
		if anchor != nil {
			// Is there a row at or behind the anchor?
			back := where
			if back != "" {
				back += " AND "
			}
			op := ">="
			if asc {
				op = "<="
			}
			if eq != "" {
				op = op[:1]
			}
			back += "(" + order + ") " + op + " " + tuple
			if _, err := t.scanRow("SELECT EXISTS (SELECT 1 FROM "+l.table+" WHERE "+back+")", args, &behind); err != nil {
				return err
			}
		}
		if where == "" {
			var n int64
			if _, err := t.scanRow(`SELECT coalesce(sum(n), 0)::bigint FROM paydesk_counters WHERE name = $1`, []any{l.counter}, &n); err != nil {
				return err
			}
			p.total = int(n)
		}
		return nil
	})
	if err != nil {
		return pgRelRows[T]{}, err
	}
	if !fwd {
		slices.Reverse(p.rows)
		slices.Reverse(p.pos)
		p.more, behind = behind, p.more
	}
	p.less = behind
	return p, nil
}

// count counts the rows q keeps, up to upTo (> 0; 0: all); past
// CountTimeout the planner's estimate is the answer.
func (l *pgRelList) count(ctx context.Context, e *Engine, q domain.PageQuery, upTo int) (int, error) {
	if err := q.Check(l.sorts); err != nil {
		return 0, err
	}
	where, args := l.where(q)
	n := 0
	err := e.ViewTx(ctx, func(t *Tx) error {
		if where == "" {
			var c int64
			_, err := t.scanRow(`SELECT coalesce(sum(n), 0)::bigint FROM paydesk_counters WHERE name = $1`, []any{l.counter}, &c)
			n = int(c)
			return err
		}
		if err := t.exec("SET LOCAL statement_timeout = '" + CountTimeout + "'"); err != nil {
			return err
		}
		sql := "SELECT count(*) FROM " + l.table + " WHERE " + where
		if upTo > 0 {
			sql = "SELECT count(*) FROM (SELECT 1 FROM " + l.table + " WHERE " + where + " LIMIT " + strconv.Itoa(upTo) + ") s"
		}
		_, err := t.scanRow(sql, args, &n)
		return err
	})
	if err == nil || !IsTimeout(err) || ctx.Err() != nil {
		// A count its caller gave up (a new filter typed) is cancelled
		// by the server too (57014, as a timeout): not estimated.
		return n, err
	}
	var plan []map[string]any
	if err := e.pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT 1 FROM "+l.table+" WHERE "+where, args...).Scan(&plan); err != nil || len(plan) == 0 {
		return 0, fmt.Errorf("count: %w", err)
	}
	if p, ok := plan[0]["Plan"].(map[string]any); ok {
		if r, ok := p["Plan Rows"].(float64); ok {
			return int(r), nil
		}
	}
	return 0, errors.New("count: no estimate")
}

func (l pgRelLists) ReservationPage(ctx context.Context, q domain.PageQuery) (domain.Page, error) {
	p, err := pgRelPage(ctx, l.e, pgRelReservations, q, pgSummarySelect, func(row pgx.Row) (domain.Summary, []byte, error) {
		s, err := scanSummary(row)
		if err != nil {
			return s, nil, err
		}
		return s, domain.PosKey(nil, q.Sort, &s), nil
	})
	if err != nil {
		return domain.Page{}, fmt.Errorf("reservation list: %w", err)
	}
	out := domain.Page{Total: p.total, More: p.more, Less: p.less, Rows: make([]domain.PageRow, len(p.rows))}
	for i := range p.rows {
		out.Rows[i] = domain.PageRow{Summary: p.rows[i], Pos: p.pos[i]}
	}
	return out, nil
}

func (l pgRelLists) ReservationCount(ctx context.Context, q domain.PageQuery) (int, error) {
	n, err := pgRelReservations.count(ctx, l.e, q, q.Limit)
	if err != nil {
		return 0, fmt.Errorf("reservation list: %w", err)
	}
	return n, nil
}

func (l pgRelLists) TransactionPage(ctx context.Context, q domain.PageQuery) (domain.TxPage, error) {
	p, err := pgRelPage(ctx, l.e, pgRelTransactions, q, pgTxSelect, func(row pgx.Row) (*domain.Transaction, []byte, error) {
		x, err := scanTxRow(row)
		if err != nil {
			return nil, nil, err
		}
		return x, domain.TxPosKey(nil, q.Sort, x), nil
	})
	if err != nil {
		return domain.TxPage{}, fmt.Errorf("transaction list: %w", err)
	}
	out := domain.TxPage{Total: p.total, More: p.more, Less: p.less, Rows: make([]domain.TxPageRow, len(p.rows))}
	for i := range p.rows {
		out.Rows[i] = domain.TxPageRow{Tx: p.rows[i], Pos: p.pos[i]}
	}
	return out, nil
}

func (l pgRelLists) TransactionCount(ctx context.Context, q domain.PageQuery) (int, error) {
	n, err := pgRelTransactions.count(ctx, l.e, q, q.Limit)
	if err != nil {
		return 0, fmt.Errorf("transaction list: %w", err)
	}
	return n, nil
}
