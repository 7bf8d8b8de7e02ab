package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"paydesk/store/domain"
)

// The push log paged in SQL (Capabilities.Pushes): the stored pushes and
// the rejected log in one order, domain.PushPos's — received, then stored
// before rejected, then the ID — read by keyset from both tables at once
// (each in its (received, id) index, migration 0019, merged by the
// planner). What SQL narrows cheaply (envelope, kind, status class, which
// table) it narrows; every row read is then kept or not by
// domain.KeepPushRow, the reference pager's rule, so both engines show
// the same pushes.

// pushLister pages the push log of a native database.
type pushLister struct{ e *Engine }

func (e *Engine) pushLister() domain.PushLister { return pushLister{e} }

// pushBatch is the most rows one statement reads when a filter may drop
// some:
// only the columns the filter looks at (pushFilterCols), the whole
// records then read for the rows kept.
const pushBatch = 4096

// pushFilterCols are the columns domain.KeepPushRow reads.
const pushFilterCols = `id, received, key, envelope, kind, service, invoice, status, amount, has_amount, reason, applied, ignored`

// scanPushFilter reads a row of pushFilterCols and rej.
func scanPushFilter(r pgx.CollectableRow) (*domain.PushRecord, error) {
	var p domain.PushRecord
	var id int64
	var received *time.Time
	var amount pgtype.Numeric
	var rej int
	if err := r.Scan(&id, &received, &p.Key, &p.Envelope, &p.Kind, &p.Service, &p.Invoice, &p.Status.Code, &amount,
		&p.HasAmount, &p.Reason, &p.Applied, &p.Ignored, &rej); err != nil {
		return nil, err
	}
	p.ID, p.ReceivedAt, p.Amount, p.Rejected = uint64(id), timeOf(received), decOf(amount), rej == 1
	return &p, nil
}

// scanPushRow reads a row of the whole columns and rej.
func scanPushRow(r pgx.CollectableRow) (*domain.PushRecord, error) {
	var size, count int64
	var last *time.Time
	var rej int
	p, err := scanPush(r, &size, &count, &last, &rej)
	if err != nil {
		return nil, err
	}
	if rej == 1 {
		p.Rejected, p.BodySize, p.Count, p.LastSeen = true, int(size), uint64(count), timeOf(last)
	}
	return p, nil
}

// pushWalkSQL reads the next rows of the log from a cursor, in key order
// (asc) or against it, with the narrowing SQL can do.
func pushWalkSQL(q *domain.PushQuery, asc bool, cursor []byte, inclusive bool, n int, light bool) (string, []any) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	dir, op := "DESC", "<"
	if asc {
		dir, op = "ASC", ">"
	}
	var common []string
	common = append(common, "received IS NOT NULL")
	if q.Envelope != "" {
		common = append(common, "envelope = "+arg(q.Envelope))
	}
	if q.Kind != "" {
		common = append(common, "kind = "+arg(q.Kind))
	}
	stored, rejected := true, true
	var storedOnly []string
	switch q.Status {
	case "rejected":
		stored = false
	case "success":
		rejected = false
		storedOnly = append(storedOnly, "status = 190")
	case "pending":
		rejected = false
		storedOnly = append(storedOnly, "status BETWEEN 790 AND 799")
	case "failed":
		rejected = false
		storedOnly = append(storedOnly, "status <> 0 AND status <> 190 AND status NOT BETWEEN 790 AND 799")
	case "ignored":
		rejected = false
		storedOnly = append(storedOnly, "NOT applied")
	}
	switch q.Where.State {
	case "":
	case domain.OutcomeRejected:
		stored = false
	default:
		rejected = false
	}
	var cr time.Time
	var crRej bool
	var crID uint64
	if cursor != nil {
		var ok bool
		if cr, crRej, crID, ok = domain.SplitPushPos(cursor); !ok {
			cursor = nil // no position: from the end, as the reference places it nowhere
		}
	}
	branch := func(rej bool, table, extra string, conds []string) string {
		conds = slices.Clone(conds)
		if cursor != nil {
			// (received, rej, id) op (cr, crRej, crID), with rej fixed in
			// this table: the ID's bound says how its rows of the cursor's
			// instant compare.
			o, bound := op, int64(crID)
			switch {
			case rej == crRej:
				if inclusive {
					o += "="
				}
			case rej == asc: // this table's rows of that instant come after it in the walk
				o, bound = o+"=", math.MaxInt64
				if asc {
					o, bound = ">=", 0
				}
			default: // they come before it: only other instants
				bound = 0
				if asc {
					bound = math.MaxInt64
				}
			}
			conds = append(conds, fmt.Sprintf("(received, id) %s (%s, %s)", o, arg(cr), arg(bound)))
		}
		r := "0"
		if rej {
			r = "1"
		}
		cols := pgPushCols + ", " + extra
		if light {
			cols = pushFilterCols
		}
		return fmt.Sprintf("(SELECT %s, %s AS rej FROM %s WHERE %s ORDER BY received %s, id %s LIMIT %d)",
			cols, r, table, strings.Join(conds, " AND "), dir, dir, n)
	}
	var parts []string
	if stored {
		parts = append(parts, branch(false, "paydesk_pushes", "0::bigint AS body_size, 0::bigint AS count, NULL::timestamptz AS last_seen",
			append(slices.Clone(common), storedOnly...)))
	}
	if rejected {
		parts = append(parts, branch(true, "paydesk_rejected", "body_size, count, last_seen", common))
	}
	if len(parts) == 0 {
		return "", nil
	}
	return fmt.Sprintf("SELECT * FROM (%s) u ORDER BY received %s, rej %s, id %s LIMIT %d", strings.Join(parts, " UNION ALL "), dir, dir, dir, n), args
}

// walk reads up to n pushes that pass q from cursor on (nil: from the
// end the direction starts at), in key order (asc) or against it.
// whole asks for the rows' whole records (a page), not only what the
// filter reads (a count, a look for one more row).
func (l pushLister) walk(ctx context.Context, t *Tx, q *domain.PushQuery, asc bool, cursor []byte, inclusive bool, n int, whole bool) ([]domain.PushPageRow, error) {
	narrowed := q.Narrowed()
	// A filter may drop rows: read a few more than asked, then more and
	// more as the walk goes on, up to pushBatch a statement.
	batch := n
	if narrowed {
		batch = min(max(2*n, 256), pushBatch)
	}
	var out []domain.PushPageRow
	for len(out) < n {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sql, args := pushWalkSQL(q, asc, cursor, inclusive, batch, narrowed)
		if sql == "" {
			return nil, nil
		}
		scan := scanPushRow
		if narrowed {
			scan = scanPushFilter
		}
		ps, err := rowsOf(t, scan, sql, args...)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if len(out) < n && (!narrowed || domain.KeepPushRow(p, q)) {
				out = append(out, domain.PushPageRow{Push: p, Pos: domain.PushPos(nil, p)})
			}
		}
		if len(ps) < batch {
			break
		}
		cursor, inclusive = domain.PushPos(nil, ps[len(ps)-1]), false
		if narrowed {
			batch = min(4*batch, pushBatch)
		}
	}
	if narrowed && whole {
		return out, wholeRecords(t, out)
	}
	return out, nil
}

// wholeRecords replaces the rows read with the filter's columns by their
// whole records.
func wholeRecords(t *Tx, rows []domain.PushPageRow) error {
	var stored, rejected []int64
	for _, r := range rows {
		if r.Push.Rejected {
			rejected = append(rejected, int64(r.Push.ID))
		} else {
			stored = append(stored, int64(r.Push.ID))
		}
	}
	byID := map[[2]uint64]*domain.PushRecord{}
	for _, part := range []struct {
		ids []int64
		sql string
		rej uint64
	}{
		{stored, `SELECT ` + pgPushCols + `, 0::bigint, 0::bigint, NULL::timestamptz, 0 FROM paydesk_pushes WHERE id = ANY($1)`, 0},
		{rejected, `SELECT ` + pgRejectedCols + `, 1 FROM paydesk_rejected WHERE id = ANY($1)`, 1},
	} {
		if len(part.ids) == 0 {
			continue
		}
		ps, err := rowsOf(t, scanPushRow, part.sql, part.ids)
		if err != nil {
			return err
		}
		for _, p := range ps {
			byID[[2]uint64{part.rej, p.ID}] = p
		}
	}
	for i, r := range rows {
		var rej uint64
		if r.Push.Rejected {
			rej = 1
		}
		p, ok := byID[[2]uint64{rej, r.Push.ID}]
		if !ok {
			return fmt.Errorf("push %d: gone while read", r.Push.ID)
		}
		rows[i].Push = p
	}
	return nil
}

func (l pushLister) PushPage(ctx context.Context, q domain.PushQuery) (domain.PushPage, error) {
	if err := q.Check(); err != nil {
		return domain.PushPage{}, err
	}
	var p domain.PushPage
	err := l.e.ViewTx(ctx, func(t *Tx) (err error) {
		p, err = l.page(ctx, t, &q)
		return err
	})
	if err != nil {
		return domain.PushPage{}, fmt.Errorf("push log: %w", err)
	}
	return p, nil
}

// page is the window q asks for, placed as domain.WindowAt places it: the
// list's order is the keys' reversed when q.Desc.
func (l pushLister) page(ctx context.Context, t *Tx, q *domain.PushQuery) (domain.PushPage, error) {
	lim := q.PageSize()
	fwd := !q.Desc // the list's order in key order
	var p domain.PushPage
	var err error
	// any: a passing row from c on (at c too, with at) in the direction.
	any := func(asc bool, c []byte, at bool) (bool, error) {
		rows, err := l.walk(ctx, t, q, asc, c, at, 1, false)
		return len(rows) > 0, err
	}
	switch {
	case q.Before != nil || q.Last:
		if p.Rows, err = l.walk(ctx, t, q, !fwd, q.Before, false, lim+1, true); err != nil {
			return p, err
		}
		if p.Less = len(p.Rows) > lim; p.Less {
			p.Rows = p.Rows[:lim]
		}
		slices.Reverse(p.Rows)
		if q.Before != nil {
			if p.More, err = any(fwd, q.Before, true); err != nil {
				return p, err
			}
		}
	default:
		c, at := q.After, false
		if q.From != nil {
			c, at = q.From, true
		}
		if p.Rows, err = l.walk(ctx, t, q, fwd, c, at, lim+1, true); err != nil {
			return p, err
		}
		if p.More = len(p.Rows) > lim; p.More {
			p.Rows = p.Rows[:lim]
		}
		if c != nil {
			// Rows before the window: at the After cursor too, not at From.
			if p.Less, err = any(!fwd, c, q.After != nil); err != nil {
				return p, err
			}
		}
	}
	// The total is PushCount's: counting a big log takes longer than its
	// page, and the list counts up to what it shows first.
	p.Total = -1
	return p, nil
}

func (l pushLister) PushCount(ctx context.Context, q domain.PushQuery) (int, error) {
	if err := q.Check(); err != nil {
		return 0, err
	}
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last = nil, nil, nil, false
	n := 0
	err := l.e.ViewTx(ctx, func(t *Tx) error {
		if !q.Narrowed() {
			// Up to upTo in each table: the answer is at most upTo.
			limit := "ALL"
			if upTo > 0 {
				limit = fmt.Sprint(upTo)
			}
			_, err := t.scanRow(`SELECT (SELECT count(*) FROM (SELECT 1 FROM paydesk_pushes WHERE received IS NOT NULL LIMIT `+limit+`) a) +
				(SELECT count(*) FROM (SELECT 1 FROM paydesk_rejected WHERE received IS NOT NULL LIMIT `+limit+`) b)`, nil, &n)
			return err
		}
		var cursor []byte
		for upTo <= 0 || n < upTo {
			rows, err := l.walk(ctx, t, &q, true, cursor, false, pushBatch, false)
			if err != nil {
				return err
			}
			n += len(rows)
			if len(rows) < pushBatch {
				break
			}
			cursor = rows[len(rows)-1].Pos
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("push count: %w", err)
	}
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n, nil
}
