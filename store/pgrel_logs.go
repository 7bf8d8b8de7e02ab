package store

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"paydesk/store/domain"
)

// The native engine's transaction is the whole contract: the ledger's
// half (pgrel_ledger.go) and this one.
var _ RepoTx = (*pgRelTx)(nil)

// The logs, the journal, orders, batches and counters on the native
// PostgreSQL engine (pgmigrations/0010): one typed row per record, read
// back as the same domain value the bucket engine gives, with the
// differences a database's types make (pgrel_ledger.go says which: times
// to the microsecond, in the local zone; a NUL byte in a text refused,
// naming the field). Amounts are numeric of any scale: the logs keep what
// the gateway or the shop sent. The audit log keeps each entry's text as
// written (json, not jsonb): the chain and the key cover those bytes.

// pgNumeric is d for a numeric column, exactly.
func pgNumeric(d decimal.Decimal) pgtype.Numeric {
	return pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}
}

// pgBytes is b for a nullable bytea column: nil stays NULL, so a record
// reads back with the nil or empty body it was written with.
func pgBytes(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// pgBodyJSON is a body as jsonb when it is a JSON text jsonb can hold,
// NULL otherwise (the bytes are kept beside it either way).
func pgBodyJSON(b []byte) any {
	if len(b) == 0 || !utf8.Valid(b) || !json.Valid(b) || strings.Contains(string(b), `\u0000`) {
		return nil
	}
	return string(b)
}

// pgHeader is an HTTP header for a jsonb column; nil and empty are NULL.
func pgHeader(what string, h http.Header) ([]byte, error) {
	return pgJSON(what+" header", h, len(h) == 0)
}

// ---- pushes and the rejected log ----

// pgPushCols are a push's columns, in pushArgs's and scanPush's order; the
// push log and the rejected log have the same.
const pgPushCols = `id, received, key, hash, envelope, kind, service, invoice, status, sub_code, status_time,
	currency, amount, has_amount, signature, reason, website_key, applied, ignored, reservation_key,
	remote_addr, method, url, header, body`

func pushArgs(what string, rec *PushRecord) ([]any, error) {
	if err := pgTextErr(what, "key", rec.Key, "invoice", rec.Invoice, "service", rec.Service, "kind", rec.Kind,
		"envelope", rec.Envelope, "currency", rec.Currency, "website key", rec.WebsiteKey, "reason", rec.Reason,
		"ignored", rec.Ignored, "reservation key", rec.ReservationKey, "remote address", rec.RemoteAddr,
		"method", rec.Method, "url", rec.URL, "signature", rec.Signature, "sub code", rec.Status.SubCode); err != nil {
		return nil, err
	}
	header, err := pgHeader(what, rec.Header)
	if err != nil {
		return nil, err
	}
	return []any{int64(rec.ID), pgTime(rec.ReceivedAt), pgText(rec.Key), rec.Hash[:], pgText(rec.Envelope), pgText(rec.Kind),
		pgText(rec.Service), pgText(rec.Invoice), rec.Status.Code, pgText(rec.Status.SubCode), pgTime(rec.Status.Time),
		pgText(rec.Currency), pgNumeric(rec.Amount), rec.HasAmount, pgText(rec.Signature), pgText(rec.Reason),
		pgText(rec.WebsiteKey), rec.Applied, pgText(rec.Ignored), pgText(rec.ReservationKey),
		pgText(rec.RemoteAddr), pgText(rec.Method), pgText(rec.URL), header, pgBytes(rec.Body)}, nil
}

func scanPush(row pgx.Row, extra ...any) (*PushRecord, error) {
	var (
		p                    PushRecord
		id                   int64
		received, statusTime *time.Time
		hash                 []byte
		amount               pgtype.Numeric
		header               []byte
	)
	dest := append([]any{&id, &received, &p.Key, &hash, &p.Envelope, &p.Kind, &p.Service, &p.Invoice, &p.Status.Code,
		&p.Status.SubCode, &statusTime, &p.Currency, &amount, &p.HasAmount, &p.Signature, &p.Reason, &p.WebsiteKey,
		&p.Applied, &p.Ignored, &p.ReservationKey, &p.RemoteAddr, &p.Method, &p.URL, &header, &p.Body}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	p.ID = uint64(id)
	p.ReceivedAt, p.Status.Time = timeOf(received), timeOf(statusTime)
	p.Amount = decOf(amount)
	copy(p.Hash[:], hash)
	if header != nil {
		if err := json.Unmarshal(header, &p.Header); err != nil {
			return nil, fmt.Errorf("push %d: header: %w", id, err)
		}
	}
	return &p, nil
}

// pgStmt is one statement and its arguments: what a write runs, or what a
// conversion queues with others in one round trip.
type pgStmt struct {
	sql  string
	args []any
}

// run runs st in the transaction.
func (t *pgRelTx) run(st pgStmt, err error) error {
	if err != nil {
		return err
	}
	return t.exec(st.sql, st.args...)
}

// pushInsert writes rec, whose ID is set, into the push log.
func pushInsert(rec *PushRecord) (pgStmt, error) {
	args, err := pushArgs(fmt.Sprintf("push %d", rec.ID), rec)
	if err != nil {
		return pgStmt{}, err
	}
	args = append(args, pgBodyJSON(rec.Body))
	return pgStmt{`INSERT INTO paydesk_pushes (` + pgPushCols + `, push) VALUES (` + placeholders(len(args)) + `)`, args}, nil
}

// placeholders is "$1, $2, …, $n".
func placeholders(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", i)
	}
	return b.String()
}

func (t *pgRelTx) pushes(sql string, args ...any) ([]*PushRecord, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*PushRecord, error) { return scanPush(r) }, sql, args...)
}

func (t *pgRelTx) PushDuplicate(key string, hash [32]byte) (uint64, error) {
	var id int64
	if _, err := t.scanRow(`SELECT id FROM paydesk_pushes WHERE key = $1 AND hash = $2`, []any{pgText(key), hash[:]}, &id); err != nil {
		return 0, err
	}
	return uint64(id), nil
}

func (t *pgRelTx) AppendPush(rec *PushRecord, _ PushEncoding) (uint64, error) {
	var id int64
	if _, err := t.scanRow(`SELECT nextval('paydesk_seq_pushes')`, nil, &id); err != nil {
		return 0, err
	}
	rec.ID = uint64(id)
	return rec.ID, t.run(pushInsert(rec))
}

func (t *pgRelTx) Push(id uint64) (*PushRecord, error) {
	ps, err := t.pushes(`SELECT `+pgPushCols+` FROM paydesk_pushes WHERE id = $1`, int64(id))
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func (t *pgRelTx) PushesBefore(before uint64, limit int) ([]*PushRecord, error) {
	return t.pushes(`SELECT `+pgPushCols+` FROM paydesk_pushes WHERE ($1 = 0 OR id < $1) ORDER BY id DESC LIMIT $2`,
		int64(before), pgLimit(limit))
}

// pgLimit is a LIMIT's argument: NULL (all) for limit ≤ 0.
func pgLimit(limit int) any {
	if limit <= 0 {
		return nil
	}
	return limit
}

func (t *pgRelTx) PushIDsOf(key string) ([]uint64, error) {
	return t.ids(`SELECT id FROM paydesk_pushes WHERE key = $1 ORDER BY id`, pgText(key))
}

func (t *pgRelTx) ids(sql string, args ...any) ([]uint64, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (uint64, error) {
		var id int64
		err := r.Scan(&id)
		return uint64(id), err
	}, sql, args...)
}

// pgRejectedCols are the rejected log's columns: a push's and its own.
const pgRejectedCols = pgPushCols + `, body_size, count, last_seen`

// rejectedInsert writes rec, whose ID is set, into the rejected log.
func rejectedInsert(rec *PushRecord) (pgStmt, error) {
	what := fmt.Sprintf("rejected entry %d", rec.ID)
	args, err := pushArgs(what, rec)
	if err != nil {
		return pgStmt{}, err
	}
	args = append(args, int64(rec.BodySize), int64(rec.Count), pgTime(rec.LastSeen))
	return pgStmt{`INSERT INTO paydesk_rejected (` + pgRejectedCols + `) VALUES (` + placeholders(len(args)) + `)`, args}, nil
}

func (t *pgRelTx) rejected(sql string, args ...any) ([]*PushRecord, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*PushRecord, error) {
		var size, count int64
		var last *time.Time
		p, err := scanPush(r, &size, &count, &last)
		if err != nil {
			return nil, err
		}
		p.Rejected, p.BodySize, p.Count, p.LastSeen = true, int(size), uint64(count), timeOf(last)
		return p, nil
	}, sql, args...)
}

func (t *pgRelTx) AppendRejected(rec *PushRecord) (uint64, error) {
	var id int64
	if _, err := t.scanRow(`SELECT nextval('paydesk_seq_rejected')`, nil, &id); err != nil {
		return 0, err
	}
	rec.ID = uint64(id)
	return rec.ID, t.run(rejectedInsert(rec))
}

func (t *pgRelTx) Rejected(id uint64) (*PushRecord, error) {
	ps, err := t.rejected(`SELECT `+pgRejectedCols+` FROM paydesk_rejected WHERE id = $1`, int64(id))
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func (t *pgRelTx) OldestRejected() (*PushRecord, error) {
	ps, err := t.rejected(`SELECT ` + pgRejectedCols + ` FROM paydesk_rejected ORDER BY id LIMIT 1`)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func (t *pgRelTx) DeleteRejected(id uint64) error {
	return t.exec(`DELETE FROM paydesk_rejected WHERE id = $1`, int64(id))
}

func (t *pgRelTx) RejectedEntries() (int, error) {
	var n int
	_, err := t.scanRow(`SELECT count(*) FROM paydesk_rejected`, nil, &n)
	return n, err
}

func (t *pgRelTx) RejectedNewest(limit int) ([]*PushRecord, error) {
	return t.rejected(`SELECT `+pgRejectedCols+` FROM paydesk_rejected ORDER BY id DESC LIMIT $1`, pgLimit(limit))
}

func (t *pgRelTx) RejectedGroupEntry(source, class string) (uint64, error) {
	var id int64
	_, err := t.scanRow(`SELECT entry_id FROM paydesk_rejected_groups WHERE source = $1 AND class = $2`,
		[]any{pgText(source), []byte(class)}, &id)
	return uint64(id), err
}

func (t *pgRelTx) SetRejectedGroupEntry(source, class string, id uint64) error {
	return t.run(rejectedGroupUpsert(source, class, id))
}

func rejectedGroupUpsert(source, class string, id uint64) (pgStmt, error) {
	if err := pgTextErr("rejected group", "source", source); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_rejected_groups (source, class, entry_id) VALUES ($1, $2, $3)
		ON CONFLICT (source, class) DO UPDATE SET entry_id = excluded.entry_id`, []any{pgText(source), []byte(class), int64(id)}}, nil
}

func (t *pgRelTx) DeleteRejectedGroup(source, class string) error {
	return t.exec(`DELETE FROM paydesk_rejected_groups WHERE source = $1 AND class = $2`, pgText(source), []byte(class))
}

// ---- the gateway log ----

const pgExchangeCols = `id, time, action, service, method, url, http_status, duration_ns, error, request_body, response_body`

func exchangeInsert(x *Exchange) (pgStmt, error) {
	if err := pgTextErr(fmt.Sprintf("gateway log entry %d", x.ID), "action", x.Action, "service", x.Service,
		"method", x.Method, "url", x.URL, "error", x.Error); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_exchanges (` + pgExchangeCols + `, request, response) VALUES (` + placeholders(13) + `)`,
		[]any{int64(x.ID), pgTime(x.Time), pgText(x.Action), pgText(x.Service), pgText(x.Method), pgText(x.URL), x.HTTPStatus,
			int64(x.Duration), pgText(x.Error), pgBytes(x.RequestBody), pgBytes(x.ResponseBody),
			pgBodyJSON(x.RequestBody), pgBodyJSON(x.ResponseBody)}}, nil
}

func (t *pgRelTx) AppendExchange(x *Exchange, keep int) (uint64, error) {
	var id int64
	if _, err := t.scanRow(`SELECT nextval('paydesk_seq_exchanges')`, nil, &id); err != nil {
		return 0, err
	}
	x.ID = uint64(id)
	if err := t.run(exchangeInsert(x)); err != nil {
		return 0, err
	}
	if keep > 0 {
		if err := t.exec(`DELETE FROM paydesk_exchanges WHERE id <= (SELECT id FROM paydesk_exchanges ORDER BY id DESC OFFSET $1 LIMIT 1)`, keep); err != nil {
			return 0, err
		}
	}
	return x.ID, nil
}

func (t *pgRelTx) Exchanges(limit int) ([]Exchange, error) {
	rows, err := t.query(`SELECT `+pgExchangeCols+` FROM paydesk_exchanges ORDER BY id DESC LIMIT $1`, pgLimit(limit))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Exchange
	for rows.Next() {
		var x Exchange
		var id, dur int64
		var at *time.Time
		if err := rows.Scan(&id, &at, &x.Action, &x.Service, &x.Method, &x.URL, &x.HTTPStatus, &dur, &x.Error,
			&x.RequestBody, &x.ResponseBody); err != nil {
			return nil, t.fail(err)
		}
		x.ID, x.Time, x.Duration = uint64(id), timeOf(at), time.Duration(dur)
		out = append(out, x)
	}
	return out, t.fail(rows.Err())
}

// ---- numbers and counters ----

// nextNumber hands out the next number of a gap-free series
// (paydesk_numbers): one more than the last, the row locked until the
// transaction ends.
func (t *pgRelTx) nextNumber(name string) (uint64, error) {
	var n int64
	_, err := t.scanRow(`INSERT INTO paydesk_numbers (name, last) VALUES ($1, 1)
		ON CONFLICT (name) DO UPDATE SET last = paydesk_numbers.last + 1 RETURNING last`, []any{name}, &n)
	return uint64(n), err
}

func (t *pgRelTx) NextOpID() (uint64, error)        { return t.nextNumber("operations") }
func (t *pgRelTx) NextBatchNumber() (uint64, error) { return t.nextNumber("batches") }

// pgTallyNames are the counters' names in paydesk_counters.
var pgTallyNames = [...]string{"pushes", "rejected", "reservations", "transactions"}

func (t *pgRelTx) AddTally(d Tally) error {
	for i, n := range [...]int64{d.Pushes, d.Rejected, d.Reservations, d.Transactions} {
		if n == 0 {
			continue
		}
		// Each database session adds to rows of its own (a session runs
		// one transaction at a time), so listeners committing at once do
		// not wait on, or lose a race over, one row; Tally sums them.
		if err := t.exec(`INSERT INTO paydesk_counters (name, process, n) VALUES ($1, pg_backend_pid()::text, $2)
			ON CONFLICT (name, process) DO UPDATE SET n = paydesk_counters.n + excluded.n`, pgTallyNames[i], n); err != nil {
			return err
		}
	}
	return nil
}

func (t *pgRelTx) Tally() (Tally, error) {
	rows, err := t.query(`SELECT name, sum(n)::bigint FROM paydesk_counters GROUP BY name`)
	if err != nil {
		return Tally{}, err
	}
	defer rows.Close()
	var d Tally
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return Tally{}, t.fail(err)
		}
		switch name {
		case "pushes":
			d.Pushes = n
		case "rejected":
			d.Rejected = n
		case "reservations":
			d.Reservations = n
		case "transactions":
			d.Transactions = n
		}
	}
	return d, t.fail(rows.Err())
}

// ---- the operation journal ----

const pgOpCols = `id, created, updated, operator, action, service, target, reservation_key, invoice, currency, amount,
	state, result_key, result_status, result_sub_code, result_time, reason, note, audit_id, lease, lines, parcels, request`

func (t *pgRelTx) PutOp(op *PendingOp) error { return t.run(opUpsert(op)) }

var pgOpUpsert = `INSERT INTO paydesk_operations (` + pgOpCols + `) VALUES (` + placeholders(23) + `)
	ON CONFLICT (id) DO UPDATE SET ` + upsertSet(pgOpCols)

func opUpsert(op *PendingOp) (pgStmt, error) {
	what := fmt.Sprintf("operation %d", op.ID)
	if err := pgTextErr(what, "operator", op.Operator, "action", op.Action, "service", op.Service, "target", op.Target,
		"reservation key", op.ReservationKey, "invoice", op.Invoice, "currency", op.Currency, "result key", op.ResultKey,
		"result sub code", op.ResultStatus.SubCode, "error", op.Error, "note", op.Note); err != nil {
		return pgStmt{}, err
	}
	lines, err := pgJSON(what+" lines", op.Lines, op.Lines == nil)
	if err != nil {
		return pgStmt{}, err
	}
	parcels, err := pgJSON(what+" parcels", op.Parcels, op.Parcels == nil)
	if err != nil {
		return pgStmt{}, err
	}
	req, err := pgJSON(what+" request", op.Request, op.Request == nil)
	if err != nil {
		return pgStmt{}, err
	}
	return pgStmt{pgOpUpsert, []any{
		int64(op.ID), pgTime(op.Created), pgTime(op.Updated), pgText(op.Operator), pgText(op.Action), pgText(op.Service),
		pgText(op.Target), pgText(op.ReservationKey), pgText(op.Invoice), pgText(op.Currency), pgNumeric(op.Amount),
		string(op.State), pgText(op.ResultKey), op.ResultStatus.Code, pgText(op.ResultStatus.SubCode), pgTime(op.ResultStatus.Time),
		pgText(op.Error), pgText(op.Note), int64(op.AuditID), op.Lease, lines, parcels, req}}, nil
}

func scanOp(row pgx.Row) (*PendingOp, error) {
	var (
		op                           PendingOp
		id, auditID                  int64
		created, updated, resultTime *time.Time
		amount                       pgtype.Numeric
		state                        string
		lines, parcels, req          []byte
	)
	if err := row.Scan(&id, &created, &updated, &op.Operator, &op.Action, &op.Service, &op.Target, &op.ReservationKey,
		&op.Invoice, &op.Currency, &amount, &state, &op.ResultKey, &op.ResultStatus.Code, &op.ResultStatus.SubCode,
		&resultTime, &op.Error, &op.Note, &auditID, &op.Lease, &lines, &parcels, &req); err != nil {
		return nil, err
	}
	op.ID, op.AuditID, op.State = uint64(id), uint64(auditID), OpState(state)
	op.Created, op.Updated, op.ResultStatus.Time = timeOf(created), timeOf(updated), timeOf(resultTime)
	op.Amount = decOf(amount)
	for _, j := range []struct {
		name string
		b    []byte
		v    any
	}{{"lines", lines, &op.Lines}, {"parcels", parcels, &op.Parcels}, {"request", req, &op.Request}} {
		if j.b != nil {
			if err := json.Unmarshal(j.b, j.v); err != nil {
				return nil, fmt.Errorf("operation %d: %s: %w", id, j.name, err)
			}
		}
	}
	return &op, nil
}

func (t *pgRelTx) ops(sql string, args ...any) ([]*PendingOp, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*PendingOp, error) { return scanOp(r) }, sql, args...)
}

func (t *pgRelTx) Op(id uint64) (*PendingOp, error) {
	ops, err := t.ops(`SELECT `+pgOpCols+` FROM paydesk_operations WHERE id = $1`, int64(id))
	if err != nil || len(ops) == 0 {
		return nil, err
	}
	return ops[0], nil
}

func (t *pgRelTx) OpenOps() ([]OpenOp, error) {
	rows, err := t.query(`SELECT id, result_key, invoice FROM paydesk_operations
		WHERE state IN ('pending', 'sent', 'outcome_unknown') ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OpenOp
	for rows.Next() {
		var o OpenOp
		var id int64
		if err := rows.Scan(&id, &o.ResultKey, &o.Invoice); err != nil {
			return nil, t.fail(err)
		}
		o.ID = uint64(id)
		out = append(out, o)
	}
	return out, t.fail(rows.Err())
}

func (t *pgRelTx) Ops() ([]*PendingOp, error) {
	return t.ops(`SELECT ` + pgOpCols + ` FROM paydesk_operations ORDER BY id DESC`)
}

// ---- the audit log ----

// pgAuditCols are the columns an entry is written with; entry is its text.
const pgAuditCols = `id, time, operator, action, target, amount, currency, result, reason, op_id, completes, prev, key_id, mac, entry`

// insertAudit writes the entry whose stored text is v under id.
func (t *pgRelTx) insertAudit(id uint64, e AuditEntry, v []byte) error {
	if !utf8.Valid(v) || strings.Contains(string(v), `\u0000`) {
		return fmt.Errorf("audit entry %d: its text is not one the database's json can keep byte for byte", id)
	}
	return t.exec(`INSERT INTO paydesk_audit (`+pgAuditCols+`) VALUES (`+placeholders(15)+`)`,
		int64(id), e.Time, pgText(e.Operator), pgText(e.Action), pgText(e.Target), pgNumeric(e.Amount), pgText(e.Currency),
		pgText(e.Result), pgText(e.Reason), int64(e.OpID), int64(e.Completes), e.Prev, e.KeyID, e.MAC, string(v))
}

func (t *pgRelTx) AppendAudit(e AuditEntry, keys AuditSealer) (AuditEntry, error) {
	n, err := t.AuditSequence()
	if err != nil {
		return e, err
	}
	n++
	e.ID = n
	e.Prev = ""
	var last string
	ok, err := t.scanRow(`SELECT entry::text FROM paydesk_audit ORDER BY id DESC LIMIT 1`, nil, &last)
	if err != nil {
		return e, err
	}
	if ok {
		e.Prev = domain.ChainHash([]byte(last))
	}
	e, v, err := domain.SealAudit(keys, e)
	if err != nil {
		return e, err
	}
	if err := t.insertAudit(n, e, v); err != nil {
		return e, err
	}
	return e, t.exec(`INSERT INTO paydesk_numbers (name, last) VALUES ('audit', $1)
		ON CONFLICT (name) DO UPDATE SET last = greatest(paydesk_numbers.last, excluded.last)`, int64(n))
}

// walkAudit reads entries in id order (desc: newest first) as stored.
func (t *pgRelTx) walkAudit(where, order string, args []any, fn func(id uint64, e *AuditEntry, stored []byte, err error) bool) error {
	rows, err := t.query(`SELECT id, entry::text FROM paydesk_audit `+where+` ORDER BY id `+order, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return t.fail(err)
		}
		stored := []byte(text)
		var e AuditEntry
		err := json.Unmarshal(stored, &e)
		if err != nil {
			e = AuditEntry{}
			err = fmt.Errorf("audit entry %d: %w", id, err)
		}
		if !fn(uint64(id), &e, stored, err) {
			return nil
		}
	}
	return t.fail(rows.Err())
}

func (t *pgRelTx) AuditEntry(id uint64) (*AuditEntry, error) {
	var out *AuditEntry
	var derr error
	err := t.walkAudit(`WHERE id = $1`, ``, []any{int64(id)}, func(_ uint64, e *AuditEntry, _ []byte, err error) bool {
		out, derr = e, err
		return false
	})
	if err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return out, nil
}

func (t *pgRelTx) LastAudit() (*AuditEntry, error) {
	var out *AuditEntry
	var derr error
	err := t.walkAudit(``, `DESC LIMIT 1`, nil, func(id uint64, e *AuditEntry, _ []byte, err error) bool {
		out, derr = e, err
		out.ID = id
		return false
	})
	if err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	return out, nil
}

func (t *pgRelTx) WalkAudit(newestFirst bool, fn func(id uint64, e *AuditEntry, stored []byte, err error) bool) error {
	order := ``
	if newestFirst {
		order = `DESC`
	}
	return t.walkAudit(``, order, nil, fn)
}

func (t *pgRelTx) AuditSequence() (uint64, error) {
	var n int64
	_, err := t.scanRow(`SELECT greatest(coalesce((SELECT last FROM paydesk_numbers WHERE name = 'audit'), 0),
		coalesce((SELECT max(id) FROM paydesk_audit), 0))`, nil, &n)
	return uint64(n), err
}

// ---- webshop orders ----

const pgOrderCols = `invoice, reservation_number, reservation_key, currency, amount, customer, source, received, hash, articles, billing, shipping`

func orderArgs(o *Order) ([]any, error) {
	what := "order " + o.Invoice
	if err := pgTextErr(what, "invoice", o.Invoice, "reservation number", o.ReservationNumber, "reservation key", o.ReservationKey,
		"currency", o.Currency, "source", o.Source, "hash", o.Hash); err != nil {
		return nil, err
	}
	articles, err := pgJSON(what+" articles", o.Articles, o.Articles == nil)
	if err != nil {
		return nil, err
	}
	billing, err := pgJSON(what+" billing address", o.Billing, false)
	if err != nil {
		return nil, err
	}
	shipping, err := pgJSON(what+" shipping address", o.Shipping, false)
	if err != nil {
		return nil, err
	}
	return []any{pgText(o.Invoice), pgText(o.ReservationNumber), pgText(o.ReservationKey), pgText(o.Currency),
		pgNumeric(o.Amount()), pgText(o.Customer()), pgText(o.Source), pgTime(o.Received), pgText(o.Hash), articles, billing, shipping}, nil
}

func scanOrder(row pgx.Row) (*Order, error) {
	var (
		o                           Order
		amount                      pgtype.Numeric
		customer                    string
		received                    *time.Time
		articles, billing, shipping []byte
	)
	if err := row.Scan(&o.Invoice, &o.ReservationNumber, &o.ReservationKey, &o.Currency, &amount, &customer, &o.Source,
		&received, &o.Hash, &articles, &billing, &shipping); err != nil {
		return nil, err
	}
	o.Received = timeOf(received)
	for _, j := range []struct {
		name string
		b    []byte
		v    any
	}{{"articles", articles, &o.Articles}, {"billing address", billing, &o.Billing}, {"shipping address", shipping, &o.Shipping}} {
		if j.b != nil {
			if err := json.Unmarshal(j.b, j.v); err != nil {
				return nil, fmt.Errorf("order %s: %s: %w", o.Invoice, j.name, err)
			}
		}
	}
	return &o, nil
}

func (t *pgRelTx) orders(sql string, args ...any) ([]*Order, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*Order, error) { return scanOrder(r) }, sql, args...)
}

func (t *pgRelTx) Order(invoice string) (*Order, error) {
	os, err := t.orders(`SELECT `+pgOrderCols+` FROM paydesk_orders WHERE invoice = $1`, pgText(invoice))
	if err != nil || len(os) == 0 {
		return nil, err
	}
	return os[0], nil
}

func (t *pgRelTx) PutOrder(o *Order) error { return t.run(orderUpsert("paydesk_orders", "invoice", o)) }

// orderUpsert writes o into table (the orders or their conflicts), whose
// key is key.
func orderUpsert(table, key string, o *Order) (pgStmt, error) {
	args, err := orderArgs(o)
	if err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO ` + table + ` (` + pgOrderCols + `) VALUES (` + placeholders(len(args)) + `)
		ON CONFLICT (` + key + `) DO UPDATE SET ` + upsertSet(pgOrderCols), args}, nil
}

func (t *pgRelTx) Orders() ([]*Order, error) {
	return t.orders(`SELECT ` + pgOrderCols + ` FROM paydesk_orders ORDER BY invoice`)
}

func (t *pgRelTx) PutOrderConflict(o *Order) error {
	return t.run(orderUpsert("paydesk_order_conflicts", "invoice, hash", o))
}

func (t *pgRelTx) OrderConflicts(invoice string) ([]*Order, error) {
	return t.orders(`SELECT `+pgOrderCols+` FROM paydesk_order_conflicts WHERE ($1 = '' OR invoice = $1) ORDER BY invoice, hash`, pgText(invoice))
}

// ---- batches ----

const pgBatchCols = `id, kind, hash, source, operator, created, late, rows, items, total, currency`

func (t *pgRelTx) PutBatch(b *Batch) error { return t.run(batchUpsert(b)) }

func batchUpsert(b *Batch) (pgStmt, error) {
	if err := pgTextErr("batch "+b.ID, "id", b.ID, "kind", b.Kind, "hash", b.Hash, "source", b.Source,
		"operator", b.Operator, "currency", b.Currency); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_batches (` + pgBatchCols + `) VALUES (` + placeholders(11) + `)
		ON CONFLICT (id) DO UPDATE SET ` + upsertSet(pgBatchCols), []any{
		pgText(b.ID), pgText(b.Kind), pgText(b.Hash), pgText(b.Source), pgText(b.Operator), pgTime(b.Created), b.Late,
		b.Rows, b.Items, pgNumeric(b.Total), pgText(b.Currency)}}, nil
}

func (t *pgRelTx) batches(sql string, args ...any) ([]Batch, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (Batch, error) {
		var b Batch
		var created *time.Time
		var total pgtype.Numeric
		if err := r.Scan(&b.ID, &b.Kind, &b.Hash, &b.Source, &b.Operator, &created, &b.Late, &b.Rows, &b.Items,
			&total, &b.Currency); err != nil {
			return Batch{}, err
		}
		b.Created, b.Total = timeOf(created), decOf(total)
		return b, nil
	}, sql, args...)
}

func (t *pgRelTx) Batch(id string) (*Batch, error) {
	bs, err := t.batches(`SELECT `+pgBatchCols+` FROM paydesk_batches WHERE id = $1`, pgText(id))
	if err != nil || len(bs) == 0 {
		return nil, err
	}
	return &bs[0], nil
}

func (t *pgRelTx) BatchByHash(kind, hash string) (string, error) {
	var id string
	_, err := t.scanRow(`SELECT id FROM paydesk_batches WHERE kind = $1 AND hash = $2 AND hash <> ''`,
		[]any{pgText(kind), pgText(hash)}, &id)
	return id, err
}

func (t *pgRelTx) Batches() ([]Batch, error) {
	return t.batches(`SELECT ` + pgBatchCols + ` FROM paydesk_batches ORDER BY id`)
}

const pgBatchItemCols = `batch_id, idx, reservation_number, invoice, state, amount, currency, rows, lines, parcels,
	note, rule, message, op_id, key, updated`

func (t *pgRelTx) PutBatchItem(id string, it BatchItem) error { return t.run(batchItemUpsert(id, it)) }

func batchItemUpsert(id string, it BatchItem) (pgStmt, error) {
	what := fmt.Sprintf("batch %s item %d", id, it.Index)
	if err := pgTextErr(what, "reservation", it.Reservation, "invoice", it.Invoice, "currency", it.Currency,
		"note", it.Note, "rule", it.Rule, "message", it.Message, "key", it.Key); err != nil {
		return pgStmt{}, err
	}
	lines, err := pgJSON(what+" lines", it.Lines, it.Lines == nil)
	if err != nil {
		return pgStmt{}, err
	}
	parcels, err := pgJSON(what+" parcels", it.Parcels, it.Parcels == nil)
	if err != nil {
		return pgStmt{}, err
	}
	var rows []int32
	if it.Rows != nil {
		rows = make([]int32, len(it.Rows))
		for i, r := range it.Rows {
			rows[i] = int32(r)
		}
	}
	return pgStmt{`INSERT INTO paydesk_batch_items (` + pgBatchItemCols + `) VALUES (` + placeholders(16) + `)
		ON CONFLICT (batch_id, idx) DO UPDATE SET ` + upsertSet(pgBatchItemCols), []any{
		pgText(id), it.Index, pgText(it.Reservation), pgText(it.Invoice), string(it.State), pgNumeric(it.Amount),
		pgText(it.Currency), rows, lines, parcels, pgText(it.Note), pgText(it.Rule), pgText(it.Message),
		int64(it.OpID), pgText(it.Key), pgTime(it.Updated)}}, nil
}

func (t *pgRelTx) BatchItems(id string) ([]BatchItem, error) {
	rows, err := t.query(`SELECT `+pgBatchItemCols+` FROM paydesk_batch_items WHERE batch_id = $1 ORDER BY idx`, pgText(id))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BatchItem
	for rows.Next() {
		var (
			it             BatchItem
			batch, state   string
			amount         pgtype.Numeric
			rs             []int32
			lines, parcels []byte
			opID           int64
			updated        *time.Time
		)
		if err := rows.Scan(&batch, &it.Index, &it.Reservation, &it.Invoice, &state, &amount, &it.Currency, &rs, &lines,
			&parcels, &it.Note, &it.Rule, &it.Message, &opID, &it.Key, &updated); err != nil {
			return nil, t.fail(err)
		}
		it.State, it.Amount, it.OpID, it.Updated = BatchItemState(state), decOf(amount), uint64(opID), timeOf(updated)
		if rs != nil {
			it.Rows = make([]int, len(rs))
			for i, r := range rs {
				it.Rows[i] = int(r)
			}
		}
		if lines != nil {
			if err := json.Unmarshal(lines, &it.Lines); err != nil {
				return nil, t.fail(fmt.Errorf("batch %s item %d: lines: %w", id, it.Index, err))
			}
		}
		if parcels != nil {
			if err := json.Unmarshal(parcels, &it.Parcels); err != nil {
				return nil, t.fail(fmt.Errorf("batch %s item %d: parcels: %w", id, it.Index, err))
			}
		}
		out = append(out, it)
	}
	return out, t.fail(rows.Err())
}
