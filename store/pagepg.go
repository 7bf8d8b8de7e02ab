package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/fold"
)

// The reservation list on PostgreSQL: the table paydesk_summary
// (pgmigrations/0005) holds one row per summary with its sort columns and
// search text, indexed; a page is an index range scan past a keyset cursor
// and the filter a LIKE per word that the pg_trgm GIN index answers. The
// table follows the summaries bucket in the transaction that writes it:
// queueSummaryRows adds its writes to the batch that carries the bucket's.

// pgSortCols are the columns of each order, the cursor's tuple.
var pgSortCols = [sortCount]string{
	SortCreated:  "created, k",
	SortInvoice:  "invoice, created, k",
	SortCustomer: "customer, created, k",
	SortAmount:   "amount, created, k",
	SortState:    "state, created, k",
}

const pgUpsertSummary = `INSERT INTO paydesk_summary (k, created, invoice, customer, amount, state, unknown, missing, search, v)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (k) DO UPDATE SET created = excluded.created, invoice = excluded.invoice, customer = excluded.customer,
amount = excluded.amount, state = excluded.state, unknown = excluded.unknown, missing = excluded.missing,
search = excluded.search, v = excluded.v`

// queueSummaryRows adds to b the list table's writes for the summaries
// among ws (the transaction's pending bucket writes).
func queueSummaryRows(b *pgx.Batch, ws []pendingWrite) {
	var f fold.Folder
	for _, w := range ws {
		if !bytes.Equal(w.bucket, bSummary) {
			continue
		}
		if w.del {
			b.Queue(`DELETE FROM paydesk_summary WHERE k = $1`, w.k)
			continue
		}
		queueSummaryRow(b, w.k, w.v, &f)
	}
}

func queueSummaryRow(b *pgx.Batch, k, v []byte, f *fold.Folder) {
	s, err := decodeSummary(v)
	if err != nil {
		// Not a summary this paydesk can read: out of the list, as it would
		// fail to show anyway; the record itself is stored.
		b.Queue(`DELETE FROM paydesk_summary WHERE k = $1`, k)
		return
	}
	b.Queue(pgUpsertSummary, pgSummaryArgs(k, v, &s, f)...)
}

func pgSummaryArgs(k, v []byte, s *Summary, f *fold.Folder) []any {
	return []any{k, s.Created.UnixNano(), sortBytes(s.Invoice), sortBytes(strings.ToLower(s.Customer)),
		amountCents(s), int16(stateRank(s.State)), s.OutcomeUnknown, OrderMissing(s), pgSearchText(s, f), v}
}

// sortBytes is a string's sort value as posKey writes it, unterminated.
func sortBytes(s string) []byte {
	b := appendSortString(nil, s)
	return b[:len(b)-1]
}

// pgSearchText is the search text with its field separators as 0x01 (text
// cannot hold 0x00; a word never holds either).
func pgSearchText(s *Summary, f *fold.Folder) string {
	b := AppendSearchText(nil, s, f)
	for i, c := range b {
		if c == 0 {
			b[i] = 1
		}
	}
	return string(b)
}

// fillListTable copies the summaries stored before the list table existed
// into it, once (the marker row of 0005), under the migrations' lock.
func (db *DB) fillListTable(ctx context.Context) error {
	e := db.pg()
	var pending bool
	err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paydesk_summary_fill)`).Scan(&pending)
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
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paydesk_summary_fill)`).Scan(&pending); err != nil || !pending {
		return err
	}
	// The summaries are read on a connection of their own and streamed
	// into the table (a million of them are never held at once).
	rows, err := e.pool.Query(ctx, `SELECT k, v FROM paydesk_kv WHERE bucket = $1`, bSummary)
	if err != nil {
		return err
	}
	defer rows.Close()
	var f fold.Folder
	// What a listener wrote meanwhile is newer than what was read here.
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE paydesk_summary_in (LIKE paydesk_summary) ON COMMIT DROP`); err != nil {
		return err
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"paydesk_summary_in"}, pgSummaryColumns, pgx.CopyFromFunc(func() ([]any, error) {
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return nil, err
			}
			s, err := decodeSummary(v)
			if err != nil {
				continue
			}
			return pgSummaryArgs(k, v, &s, &f), nil
		}
		return nil, rows.Err()
	}))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO paydesk_summary SELECT * FROM paydesk_summary_in ON CONFLICT (k) DO NOTHING`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM paydesk_summary_fill`); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

var pgSummaryColumns = []string{"k", "created", "invoice", "customer", "amount", "state", "unknown", "missing", "search", "v"}

// pgWhere builds the filter's conditions and arguments.
func pgWhere(q PageQuery) (string, []any) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	for _, w := range filterWords(q.Filter) {
		conds = append(conds, "search LIKE "+arg("%"+likeEscape(w)+"%"))
	}
	switch q.State {
	case "":
	case StateOutcomeUnknown:
		conds = append(conds, "unknown")
	case StateOrderMissing:
		conds = append(conds, "missing")
	default:
		conds = append(conds, "state = "+arg(int16(stateRank(q.State))))
	}
	return strings.Join(conds, " AND "), args
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// pgCursorArgs turns a position into the order's column values.
func pgCursorArgs(col SortBy, pos []byte) ([]any, error) {
	val, created, key, err := posParts(col, pos)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, 3)
	switch col {
	case SortInvoice, SortCustomer:
		out = append(out, val)
	case SortAmount:
		out = append(out, readInt64(val))
	case SortState:
		out = append(out, int16(val[0]))
	}
	return append(out, created, []byte(key)), nil
}

// pgPage answers a page query from the list table.
func (db *DB) pgPage(q PageQuery) (Page, error) {
	ctx := context.Background()
	e := db.pg()
	where, args := pgWhere(q)
	cols := pgSortCols[q.Sort]
	lim := q.limit()
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
		if cur, err = pgCursorArgs(q.Sort, anchor); err != nil {
			return Page{}, err
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
	sql := "SELECT v FROM paydesk_summary"
	if cond != "" {
		sql += " WHERE " + cond
	}
	sql += " ORDER BY " + order + " LIMIT " + strconv.Itoa(lim+1)
	p := Page{Total: -1}
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
			if len(p.Rows) == lim {
				p.More = true
				continue
			}
			s, err := decodeSummary(v)
			if err != nil {
				rows.Close()
				return fmt.Errorf("summary: %w", err)
			}
			p.Rows = append(p.Rows, PageRow{Summary: s, Pos: posKey(nil, q.Sort, &s)})
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
			if err := ptx.tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM paydesk_summary WHERE "+back+")", args...).Scan(&behind); err != nil {
				return err
			}
		}
		if where == "" {
			p.Total = int(metaCount(t.Bucket(bMeta), kReservationCount))
		}
		return ptx.err
	})
	if err != nil {
		return Page{}, err
	}
	if !fwd {
		for i, j := 0, len(p.Rows)-1; i < j; i, j = i+1, j-1 {
			p.Rows[i], p.Rows[j] = p.Rows[j], p.Rows[i]
		}
		p.More, behind = behind, p.More
	}
	p.Less = behind
	return p, nil
}

// pgCountTimeout bounds a count: past it the planner's estimate is the
// answer (a common word over a million rows).
const pgCountTimeout = "2s"

// pgCount counts the rows that pass the filter, up to upTo (> 0).
func (db *DB) pgCount(q PageQuery, upTo int) (int, error) {
	ctx := context.Background()
	where, args := pgWhere(q)
	if where == "" {
		var n int
		err := db.view(func(tx Tx) error {
			n = int(metaCount(tx.Bucket(bMeta), kReservationCount))
			return nil
		})
		return n, err
	}
	n := 0
	err := db.pg().View(func(t Tx) error {
		ptx := t.(*pgTx)
		if _, err := ptx.tx.Exec(ctx, "SET LOCAL statement_timeout = '"+pgCountTimeout+"'"); err != nil {
			return err
		}
		sql := "SELECT count(*) FROM paydesk_summary WHERE " + where
		if upTo > 0 {
			sql = "SELECT count(*) FROM (SELECT 1 FROM paydesk_summary WHERE " + where + " LIMIT " + strconv.Itoa(upTo) + ") s"
		}
		return ptx.tx.QueryRow(ctx, sql, args...).Scan(&n)
	})
	if err == nil {
		return n, nil
	}
	if !isTimeout(err) {
		return 0, err
	}
	// The planner's estimate.
	var plan []map[string]any
	err = db.pg().pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT 1 FROM paydesk_summary WHERE "+where, args...).Scan(&plan)
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

// isReadOnlyRole: the role may not write (an agent who only looks); the
// list table is filled by the next paydesk that may.
func isReadOnlyRole(err error) bool {
	var pe interface{ SQLState() string }
	return errors.As(err, &pe) && (pe.SQLState() == "42501" || pe.SQLState() == "25006")
}

func isTimeout(err error) bool {
	var pe interface{ SQLState() string }
	return errors.As(err, &pe) && pe.SQLState() == "57014"
}
