package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/fold"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// The lists on PostgreSQL: a list table (paydesk_summary, 0005;
// paydesk_txlist, 0006) holds one row per record with its sort columns and
// search text, indexed; a page is an index range scan past a keyset cursor
// and the filter a LIKE per word that the pg_trgm GIN index answers. The
// table follows its bucket in the transaction that writes it:
// queueListRows adds its writes to the batch that carries the bucket's.

// pgList is one list table: the records of a bucket, one row each, with
// the sort columns and the search text. The reservation list
// (paydesk_summary, 0005) and the transaction list (paydesk_txlist, 0006)
// are two; paging, counting, the writes and the fill below serve both.
type pgList struct {
	table, fill string   // the table and its fill marker (a table of one row)
	bucket      []byte   // the records it follows
	columns     []string // k first, v last: the upsert's and COPY's
	sortCols    []string // per sort order, the cursor's tuple
	kinds       []domain.ColKind
	count       []byte // the meta counter of the records
	// skip: a key of the bucket that is no record of the list (the push
	// index beside the transactions).
	skip func(k []byte) bool
	// args is a record's row; nil for a record this paydesk cannot read
	// (out of the list, as it would fail to show anyway).
	args func(k, v []byte, f *fold.Folder) []any
	// pos is a record's position in a sort order.
	pos func(dst []byte, col SortBy, v []byte) ([]byte, error)
	// state is a state filter's condition (arg adds an argument).
	state func(st State, arg func(any) string) string
	// whereCols: how Where's conditions are asked of the table.
	whereCols *postgres.SQLCols
	upsert    string
}

func (l *pgList) init() *pgList {
	set := make([]string, 0, len(l.columns))
	ph := make([]string, len(l.columns))
	for i, c := range l.columns {
		ph[i] = "$" + strconv.Itoa(i+1)
		if c != "k" {
			set = append(set, c+" = excluded."+c)
		}
	}
	l.upsert = "INSERT INTO " + l.table + " (" + strings.Join(l.columns, ", ") + ") VALUES (" + strings.Join(ph, ", ") +
		") ON CONFLICT (k) DO UPDATE SET " + strings.Join(set, ", ")
	return l
}

// pgSummaries is the reservation list's table.
var pgSummaries = (&pgList{
	table: "paydesk_summary", fill: "paydesk_summary_fill", bucket: bSummary, count: kReservationCount,
	columns: []string{"k", "created", "invoice", "customer", "amount", "state", "unknown", "missing", "search", "v"},
	sortCols: []string{
		SortCreated:  "created, k",
		SortInvoice:  "invoice, created, k",
		SortCustomer: "customer, created, k",
		SortAmount:   "amount, created, k",
		SortState:    "state, created, k",
	},
	kinds: domain.ResCols,
	skip:  func([]byte) bool { return false },
	args: func(k, v []byte, f *fold.Folder) []any {
		s, err := kvlayout.DecodeSummary(v)
		if err != nil {
			return nil
		}
		return []any{k, s.Created.UnixNano(), sortBytes(s.Invoice), sortBytes(strings.ToLower(s.Customer)),
			domain.AmountCents(&s), int16(domain.StateRank(s.State)), s.OutcomeUnknown, OrderMissing(&s), postgres.SearchText(AppendSearchText(nil, &s, f)), v}
	},
	pos: func(dst []byte, col SortBy, v []byte) ([]byte, error) {
		s, err := kvlayout.DecodeSummary(v)
		if err != nil {
			return nil, err
		}
		return domain.PosKey(dst, col, &s), nil
	},
	state: pgSummaryState,
	whereCols: &postgres.SQLCols{Amount: "amount", Created: "created", Cents: true, Nanos: true, State: pgSummaryState,
		Customer: domain.ResFieldCustomer, Email: domain.ResFieldEmail, Service: -1},
}).init()

func pgSummaryState(st State, arg func(any) string) string {
	switch st {
	case StateOutcomeUnknown:
		return "unknown"
	case StateOrderMissing:
		return "missing"
	}
	return "state = " + arg(int16(domain.StateRank(st)))
}

// pgLists are the list tables.
var pgLists = []*pgList{pgSummaries, pgTransactions}

// queueListRows adds to b the list tables' writes for their records among
// ws (the transaction's pending bucket writes).
func queueListRows(b *pgx.Batch, ws []pendingWrite) {
	var f fold.Folder
	for _, w := range ws {
		for _, l := range pgLists {
			if !bytes.Equal(w.bucket, l.bucket) || l.skip(w.k) {
				continue
			}
			if args := l.args(w.k, w.v, &f); !w.del && args != nil {
				b.Queue(l.upsert, args...)
			} else {
				b.Queue("DELETE FROM "+l.table+" WHERE k = $1", w.k)
			}
		}
	}
}

// sortBytes is a string's sort value as posKey writes it, unterminated.
func sortBytes(s string) []byte {
	b := domain.AppendSortString(nil, s)
	return b[:len(b)-1]
}

// fillListTables copies the records stored before a list table existed
// into it, once (its fill marker), under the migrations' lock.
func (db *DB) fillListTables(ctx context.Context) error {
	for _, l := range pgLists {
		if err := db.fillListTable(ctx, l); err != nil {
			return fmt.Errorf("%s: %w", l.table, err)
		}
	}
	return nil
}

func (db *DB) fillListTable(ctx context.Context, l *pgList) error {
	e := db.pg()
	var pending bool
	err := e.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+l.fill+")").Scan(&pending)
	if err != nil || !pending {
		return err
	}
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7305482191)`); err != nil {
		return err
	}
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+l.fill+")").Scan(&pending); err != nil || !pending {
		return err
	}
	// The records are read on a connection of their own and streamed into
	// the table (a million of them are never held at once).
	rows, err := e.pool.Query(ctx, `SELECT k, v FROM paydesk_kv WHERE bucket = $1`, l.bucket)
	if err != nil {
		return err
	}
	defer rows.Close()
	var f fold.Folder
	// What a listener wrote meanwhile is newer than what was read here.
	in := l.table + "_in"
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE "+in+" (LIKE "+l.table+") ON COMMIT DROP"); err != nil {
		return err
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{in}, l.columns, pgx.CopyFromFunc(func() ([]any, error) {
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return nil, err
			}
			if l.skip(k) {
				continue
			}
			if args := l.args(k, v, &f); args != nil {
				return args, nil
			}
		}
		return nil, rows.Err()
	}))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+l.table+" SELECT * FROM "+in+" ON CONFLICT (k) DO NOTHING"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "DELETE FROM "+l.fill); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// pgWhere builds the filter's conditions and arguments.
func pgWhere(l *pgList, q PageQuery) (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, w := range q.SearchWords() {
		conds = append(conds, "search LIKE "+arg("%"+postgres.LikeEscape(w)+"%"))
	}
	if q.State != "" {
		conds = append(conds, l.state(q.State, arg))
	}
	conds = append(conds, l.whereCols.Where(&q.Where, arg)...)
	return strings.Join(conds, " AND "), args
}

// pgCursorArgs turns a position into the order's column values.
func pgCursorArgs(kind domain.ColKind, pos []byte) ([]any, error) {
	val, created, key, err := domain.PosParts(kind, pos)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, 3)
	switch kind {
	case domain.ColString:
		out = append(out, val)
	case domain.ColInt64:
		out = append(out, domain.ReadInt64(val))
	case domain.ColByte:
		out = append(out, int16(val[0]))
	}
	return append(out, created, []byte(key)), nil
}

// pgPage answers a page query from a list table.
func (db *DB) pgPage(l *pgList, q PageQuery) (keyPage, error) {
	ctx := context.Background()
	e := db.pg()
	where, args := pgWhere(l, q)
	cols := l.sortCols[q.Sort]
	lim := q.PageSize()
	// fwd: the rows are read in the list's order; else backwards from the
	// end or from a Before cursor, and turned round.
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
		eq = "=" // the anchor's row is on the page, not behind it
	}
	asc := q.Desc != fwd // the SQL order
	cond := where
	and := func(c string) {
		if cond != "" {
			cond += " AND "
		}
		cond += c
	}
	var cur []any
	if anchor != nil {
		var err error
		if cur, err = pgCursorArgs(l.kinds[q.Sort], anchor); err != nil {
			return keyPage{}, err
		}
		ph := make([]string, len(cur))
		for i, v := range cur {
			args = append(args, v)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		op := "<" + eq
		if asc {
			op = ">" + eq
		}
		and("(" + cols + ") " + op + " (" + strings.Join(ph, ", ") + ")")
	}
	dir := " DESC"
	if asc {
		dir = ""
	}
	order := strings.ReplaceAll(cols, ",", dir+",") + dir
	sql := "SELECT v FROM " + l.table
	if cond != "" {
		sql += " WHERE " + cond
	}
	sql += " ORDER BY " + order + " LIMIT " + strconv.Itoa(lim+1)
	p := keyPage{total: -1}
	var behind bool
	err := e.View(func(t Tx) error {
		ptx := t.(*pgTx)
		rows, err := ptx.tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var v []byte
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
			if len(p.rows) == lim {
				p.more = true
				continue
			}
			pos, err := l.pos(nil, q.Sort, v)
			if err != nil {
				rows.Close()
				return fmt.Errorf("record: %w", err)
			}
			p.rows = append(p.rows, keyRow{pos: pos, v: v})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if anchor != nil {
			// A row at or behind the anchor?
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
			ph := make([]string, len(cur))
			for i := range cur {
				ph[i] = "$" + strconv.Itoa(len(args)-len(cur)+i+1)
			}
			back += "(" + cols + ") " + op + " (" + strings.Join(ph, ", ") + ")"
			if err := ptx.tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+l.table+" WHERE "+back+")", args...).Scan(&behind); err != nil {
				return err
			}
		}
		if where == "" {
			p.total = int(metaCount(t.Bucket(bMeta), l.count))
		}
		return ptx.err
	})
	if err != nil {
		return keyPage{}, err
	}
	if !fwd {
		slices.Reverse(p.rows)
		p.more, behind = behind, p.more
	}
	p.less = behind
	return p, nil
}

// pgCount counts the rows that pass the filter, up to upTo (> 0).
func (db *DB) pgCount(l *pgList, q PageQuery, upTo int) (int, error) {
	ctx := context.Background()
	where, args := pgWhere(l, q)
	if where == "" {
		var n int
		err := db.view(func(tx Tx) error {
			n = int(metaCount(tx.Bucket(bMeta), l.count))
			return nil
		})
		return n, err
	}
	n := 0
	err := db.pg().View(func(t Tx) error {
		ptx := t.(*pgTx)
		if _, err := ptx.tx.Exec(ctx, "SET LOCAL statement_timeout = '"+postgres.CountTimeout+"'"); err != nil {
			return err
		}
		sql := "SELECT count(*) FROM " + l.table + " WHERE " + where
		if upTo > 0 {
			sql = "SELECT count(*) FROM (SELECT 1 FROM " + l.table + " WHERE " + where + " LIMIT " + strconv.Itoa(upTo) + ") s"
		}
		return ptx.tx.QueryRow(ctx, sql, args...).Scan(&n)
	})
	if err == nil {
		return n, nil
	}
	if !postgres.IsTimeout(err) || ctx.Err() != nil {
		return 0, err // a count given up is cancelled as a timeout is: not estimated
	}
	// The planner's estimate.
	var plan []map[string]any
	err = db.pg().pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT 1 FROM "+l.table+" WHERE "+where, args...).Scan(&plan)
	if err != nil || len(plan) == 0 {
		return 0, fmt.Errorf("count: %w", err)
	}
	if p, ok := plan[0]["Plan"].(map[string]any); ok {
		if r, ok := p["Plan Rows"].(float64); ok {
			return int(r), nil
		}
	}
	return 0, errors.New("count: no estimate")
}
