package postgres

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"

	"paydesk/store/domain"
)

// The native engine's transaction is the whole contract: the ledger's
// half (ledger.go) and this one.
var _ domain.RepoTx = (*Tx)(nil)

// The logs, the journal, orders, batches and counters on the native
// PostgreSQL engine (migrations/0010): one typed row per record, read
// back as the same domain value the bucket engine gives, with the
// differences a database's types make (ledger.go says which: times
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
	return b // pgx sends a []byte for jsonb as it is: no copy into a string
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

func pushArgs(what string, rec *domain.PushRecord) ([]any, error) {
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

func scanPush(row pgx.Row, extra ...any) (*domain.PushRecord, error) {
	var (
		p                    domain.PushRecord
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
func (t *Tx) run(st pgStmt, err error) error {
	if err != nil {
		return err
	}
	return t.exec(st.sql, st.args...)
}

// pushInsert writes rec, whose ID is set, into the push log.
func pushInsert(rec *domain.PushRecord) (pgStmt, error) {
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

func (t *Tx) pushes(sql string, args ...any) ([]*domain.PushRecord, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*domain.PushRecord, error) { return scanPush(r) }, sql, args...)
}

func (t *Tx) PushDuplicate(key string, hash [32]byte) (uint64, error) {
	if t.pre != nil && t.pre.noPush[key] {
		return 0, nil
	}
	var id int64
	if _, err := t.scanRow(`SELECT id FROM paydesk_pushes WHERE key = $1 AND hash = $2`, []any{pgText(key), hash[:]}, &id); err != nil {
		return 0, err
	}
	return uint64(id), nil
}

// pgPushAppend adds a push under the next number, which it returns: the
// number and the row in one round trip.
var pgPushAppend = `INSERT INTO paydesk_pushes (` + pgPushCols + `, push) VALUES (nextval('paydesk_seq_pushes'), ` +
	placeholders(strings.Count(pgPushCols, ",")+1) + `) RETURNING id` // the columns after id, and push

// pgPushInsert adds a push under a number taken before (prefetch.go).
var pgPushInsert = `INSERT INTO paydesk_pushes (` + pgPushCols + `, push) VALUES (` + placeholders(strings.Count(pgPushCols, ",")+2) + `)`

func (t *Tx) AppendPush(rec *domain.PushRecord, _ domain.PushEncoding) (uint64, error) {
	args, err := pushArgs("push "+rec.Key, rec)
	if err != nil {
		return 0, err
	}
	if t.err != nil {
		return 0, t.err
	}
	if t.pre != nil && len(t.pre.pushIDs) > 0 {
		// A number the read-ahead took from the sequence: the row goes
		// with the next statement.
		rec.ID, t.pre.pushIDs = uint64(t.pre.pushIDs[0]), t.pre.pushIDs[1:]
		args[0] = int64(rec.ID)
		t.queue("push "+rec.Key, pgPushInsert, append(args, pgBodyJSON(rec.Body))...)
		delete(t.pre.noPush, rec.Key)
		return rec.ID, nil
	}
	args = append(args[1:], pgBodyJSON(rec.Body)) // args[0] is the number, which nextval makes
	var id int64
	if _, err := t.scanRow(pgPushAppend, args, &id); err != nil {
		return 0, err
	}
	rec.ID = uint64(id)
	if t.pre != nil {
		delete(t.pre.noPush, rec.Key)
	}
	return rec.ID, nil
}

func (t *Tx) Push(id uint64) (*domain.PushRecord, error) {
	ps, err := t.pushes(`SELECT `+pgPushCols+` FROM paydesk_pushes WHERE id = $1`, int64(id))
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func (t *Tx) PushesBefore(before uint64, limit int) ([]*domain.PushRecord, error) {
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

func (t *Tx) PushIDsOf(key string) ([]uint64, error) {
	return t.ids(`SELECT id FROM paydesk_pushes WHERE key = $1 ORDER BY id`, pgText(key))
}

func (t *Tx) ids(sql string, args ...any) ([]uint64, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (uint64, error) {
		var id int64
		err := r.Scan(&id)
		return uint64(id), err
	}, sql, args...)
}

// pgRejectedCols are the rejected log's columns: a push's and its own.
const pgRejectedCols = pgPushCols + `, body_size, count, last_seen`

// rejectedInsert writes rec, whose ID is set, into the rejected log.
func rejectedInsert(rec *domain.PushRecord) (pgStmt, error) {
	what := fmt.Sprintf("rejected entry %d", rec.ID)
	args, err := pushArgs(what, rec)
	if err != nil {
		return pgStmt{}, err
	}
	args = append(args, int64(rec.BodySize), int64(rec.Count), pgTime(rec.LastSeen))
	return pgStmt{`INSERT INTO paydesk_rejected (` + pgRejectedCols + `) VALUES (` + placeholders(len(args)) + `)`, args}, nil
}

func (t *Tx) rejected(sql string, args ...any) ([]*domain.PushRecord, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*domain.PushRecord, error) {
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

func (t *Tx) AppendRejected(rec *domain.PushRecord) (uint64, error) {
	var id int64
	if _, err := t.scanRow(`SELECT nextval('paydesk_seq_rejected')`, nil, &id); err != nil {
		return 0, err
	}
	rec.ID = uint64(id)
	return rec.ID, t.run(rejectedInsert(rec))
}

func (t *Tx) Rejected(id uint64) (*domain.PushRecord, error) {
	ps, err := t.rejected(`SELECT `+pgRejectedCols+` FROM paydesk_rejected WHERE id = $1`, int64(id))
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func (t *Tx) OldestRejected() (*domain.PushRecord, error) {
	ps, err := t.rejected(`SELECT ` + pgRejectedCols + ` FROM paydesk_rejected ORDER BY id LIMIT 1`)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func (t *Tx) DeleteRejected(id uint64) error {
	return t.exec(`DELETE FROM paydesk_rejected WHERE id = $1`, int64(id))
}

func (t *Tx) RejectedEntries() (int, error) {
	var n int
	_, err := t.scanRow(`SELECT count(*) FROM paydesk_rejected`, nil, &n)
	return n, err
}

func (t *Tx) RejectedNewest(limit int) ([]*domain.PushRecord, error) {
	return t.rejected(`SELECT `+pgRejectedCols+` FROM paydesk_rejected ORDER BY id DESC LIMIT $1`, pgLimit(limit))
}

func (t *Tx) RejectedGroupEntry(source, class string) (uint64, error) {
	var id int64
	_, err := t.scanRow(`SELECT entry_id FROM paydesk_rejected_groups WHERE source = $1 AND class = $2`,
		[]any{pgText(source), []byte(class)}, &id)
	return uint64(id), err
}

func (t *Tx) SetRejectedGroupEntry(source, class string, id uint64) error {
	return t.run(rejectedGroupUpsert(source, class, id))
}

func rejectedGroupUpsert(source, class string, id uint64) (pgStmt, error) {
	if err := pgTextErr("rejected group", "source", source); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_rejected_groups (source, class, entry_id) VALUES ($1, $2, $3)
		ON CONFLICT (source, class) DO UPDATE SET entry_id = excluded.entry_id`, []any{pgText(source), []byte(class), int64(id)}}, nil
}

func (t *Tx) DeleteRejectedGroup(source, class string) error {
	return t.exec(`DELETE FROM paydesk_rejected_groups WHERE source = $1 AND class = $2`, pgText(source), []byte(class))
}

// ---- the gateway log ----

const pgExchangeCols = `id, time, action, service, method, url, http_status, duration_ns, error, request_body, response_body`

func exchangeInsert(x *domain.Exchange) (pgStmt, error) {
	if err := pgTextErr(fmt.Sprintf("gateway log entry %d", x.ID), "action", x.Action, "service", x.Service,
		"method", x.Method, "url", x.URL, "error", x.Error); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_exchanges (` + pgExchangeCols + `, request, response) VALUES (` + placeholders(13) + `)`,
		[]any{int64(x.ID), pgTime(x.Time), pgText(x.Action), pgText(x.Service), pgText(x.Method), pgText(x.URL), x.HTTPStatus,
			int64(x.Duration), pgText(x.Error), pgBytes(x.RequestBody), pgBytes(x.ResponseBody),
			pgBodyJSON(x.RequestBody), pgBodyJSON(x.ResponseBody)}}, nil
}

func (t *Tx) AppendExchange(x *domain.Exchange, keep int) (uint64, error) {
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

func (t *Tx) Exchanges(limit int) ([]domain.Exchange, error) {
	rows, err := t.query(`SELECT `+pgExchangeCols+` FROM paydesk_exchanges ORDER BY id DESC LIMIT $1`, pgLimit(limit))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Exchange
	for rows.Next() {
		var x domain.Exchange
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
func (t *Tx) nextNumber(name string) (uint64, error) {
	var n int64
	_, err := t.scanRow(`INSERT INTO paydesk_numbers (name, last) VALUES ($1, 1)
		ON CONFLICT (name) DO UPDATE SET last = paydesk_numbers.last + 1 RETURNING last`, []any{name}, &n)
	return uint64(n), err
}

func (t *Tx) NextOpID() (uint64, error)        { return t.nextNumber("operations") }
func (t *Tx) NextBatchNumber() (uint64, error) { return t.nextNumber("batches") }

// pgTallyNames are the counters' names in paydesk_counters.
var pgTallyNames = [...]string{"pushes", "rejected", "reservations", "transactions"}

// AddTally queues its additions: the writers call it last, and nothing
// waits for the answer, so they go to the server with the transaction's
// other queued writes before the next statement or the commit, not in a
// round trip each.
func (t *Tx) AddTally(d domain.Tally) error {
	if t.err != nil {
		return t.err
	}
	for i, n := range [...]int64{d.Pushes, d.Rejected, d.Reservations, d.Transactions} {
		if n == 0 {
			continue
		}
		// Each database session adds to rows of its own (a session runs
		// one transaction at a time), so listeners committing at once do
		// not wait on, or lose a race over, one row; Tally sums them.
		t.queue("counter "+pgTallyNames[i], `INSERT INTO paydesk_counters (name, process, n) VALUES ($1, pg_backend_pid()::text, $2)
			ON CONFLICT (name, process) DO UPDATE SET n = paydesk_counters.n + excluded.n`, pgTallyNames[i], n)
	}
	return nil
}

func (t *Tx) Tally() (domain.Tally, error) {
	rows, err := t.query(`SELECT name, sum(n)::bigint FROM paydesk_counters GROUP BY name`)
	if err != nil {
		return domain.Tally{}, err
	}
	defer rows.Close()
	var d domain.Tally
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return domain.Tally{}, t.fail(err)
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

func (t *Tx) PutOp(op *domain.PendingOp) error { return t.run(opUpsert(op)) }

var pgOpUpsert = `INSERT INTO paydesk_operations (` + pgOpCols + `) VALUES (` + placeholders(23) + `)
	ON CONFLICT (id) DO UPDATE SET ` + upsertSet(pgOpCols)

func opUpsert(op *domain.PendingOp) (pgStmt, error) {
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

func scanOp(row pgx.Row) (*domain.PendingOp, error) {
	var (
		op                           domain.PendingOp
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
	op.ID, op.AuditID, op.State = uint64(id), uint64(auditID), domain.OpState(state)
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

func (t *Tx) ops(sql string, args ...any) ([]*domain.PendingOp, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*domain.PendingOp, error) { return scanOp(r) }, sql, args...)
}

func (t *Tx) Op(id uint64) (*domain.PendingOp, error) {
	ops, err := t.ops(`SELECT `+pgOpCols+` FROM paydesk_operations WHERE id = $1`, int64(id))
	if err != nil || len(ops) == 0 {
		return nil, err
	}
	return ops[0], nil
}

// pgOpenOpsSQL reads the open operations, oldest first.
const pgOpenOpsSQL = `SELECT id, result_key, invoice FROM paydesk_operations
		WHERE state IN ('pending', 'sent', 'outcome_unknown') ORDER BY id`

func (t *Tx) OpenOps() ([]domain.OpenOp, error) {
	if t.pre != nil && t.pre.openOpsKnown {
		return slices.Clone(t.pre.openOps), nil
	}
	rows, err := t.query(pgOpenOpsSQL)
	if err != nil {
		return nil, err
	}
	out, err := scanOpenOps(rows)
	return out, t.fail(err)
}

// scanOpenOps reads (and closes) pgOpenOpsSQL's rows.
func scanOpenOps(rows pgx.Rows) ([]domain.OpenOp, error) {
	defer rows.Close()
	var out []domain.OpenOp
	for rows.Next() {
		var o domain.OpenOp
		var id int64
		if err := rows.Scan(&id, &o.ResultKey, &o.Invoice); err != nil {
			return nil, err
		}
		o.ID = uint64(id)
		out = append(out, o)
	}
	return out, rows.Err()
}

func (t *Tx) Ops() ([]*domain.PendingOp, error) {
	return t.ops(`SELECT ` + pgOpCols + ` FROM paydesk_operations ORDER BY id DESC`)
}

// ---- the audit log ----

// pgAuditCols are the columns an entry is written with; entry is its text.
const pgAuditCols = `id, time, operator, action, target, amount, currency, result, reason, op_id, completes, prev, key_id, mac, entry`

// insertAudit writes the entry whose stored text is v under id.
func (t *Tx) insertAudit(id uint64, e domain.AuditEntry, v []byte) error {
	if !utf8.Valid(v) || strings.Contains(string(v), `\u0000`) {
		return fmt.Errorf("audit entry %d: its text is not one the database's json can keep byte for byte", id)
	}
	return t.exec(`INSERT INTO paydesk_audit (`+pgAuditCols+`) VALUES (`+placeholders(15)+`)`,
		int64(id), e.Time, pgText(e.Operator), pgText(e.Action), pgText(e.Target), pgNumeric(e.Amount), pgText(e.Currency),
		pgText(e.Result), pgText(e.Reason), int64(e.OpID), int64(e.Completes), e.Prev, e.KeyID, e.MAC, string(v))
}

func (t *Tx) AppendAudit(e domain.AuditEntry, keys domain.AuditSealer) (domain.AuditEntry, error) {
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
func (t *Tx) walkAudit(where, order string, args []any, fn func(id uint64, e *domain.AuditEntry, stored []byte, err error) bool) error {
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
		var e domain.AuditEntry
		err := json.Unmarshal(stored, &e)
		if err != nil {
			e = domain.AuditEntry{}
			err = fmt.Errorf("audit entry %d: %w", id, err)
		}
		if !fn(uint64(id), &e, stored, err) {
			return nil
		}
	}
	return t.fail(rows.Err())
}

func (t *Tx) AuditEntry(id uint64) (*domain.AuditEntry, error) {
	var out *domain.AuditEntry
	var derr error
	err := t.walkAudit(`WHERE id = $1`, ``, []any{int64(id)}, func(_ uint64, e *domain.AuditEntry, _ []byte, err error) bool {
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

func (t *Tx) LastAudit() (*domain.AuditEntry, error) {
	var out *domain.AuditEntry
	var derr error
	err := t.walkAudit(``, `DESC LIMIT 1`, nil, func(id uint64, e *domain.AuditEntry, _ []byte, err error) bool {
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

func (t *Tx) WalkAudit(newestFirst bool, fn func(id uint64, e *domain.AuditEntry, stored []byte, err error) bool) error {
	order := ``
	if newestFirst {
		order = `DESC`
	}
	return t.walkAudit(``, order, nil, fn)
}

func (t *Tx) AuditSequence() (uint64, error) {
	var n int64
	_, err := t.scanRow(`SELECT greatest(coalesce((SELECT last FROM paydesk_numbers WHERE name = 'audit'), 0),
		coalesce((SELECT max(id) FROM paydesk_audit), 0))`, nil, &n)
	return uint64(n), err
}

// ---- webshop orders ----

const pgOrderCols = `invoice, reservation_number, reservation_key, currency, amount, customer, source, received, hash, articles, billing, shipping`

func orderArgs(o *domain.Order) ([]any, error) {
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

func scanOrder(row pgx.Row) (*domain.Order, error) {
	var (
		o                           domain.Order
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

func (t *Tx) orders(sql string, args ...any) ([]*domain.Order, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (*domain.Order, error) { return scanOrder(r) }, sql, args...)
}

func (t *Tx) Order(invoice string) (*domain.Order, error) {
	os, err := t.orders(`SELECT `+pgOrderCols+` FROM paydesk_orders WHERE invoice = $1`, pgText(invoice))
	if err != nil || len(os) == 0 {
		return nil, err
	}
	return os[0], nil
}

func (t *Tx) PutOrder(o *domain.Order) error {
	return t.run(orderUpsert("paydesk_orders", "invoice", o))
}

// orderUpsert writes o into table (the orders or their conflicts), whose
// key is key.
func orderUpsert(table, key string, o *domain.Order) (pgStmt, error) {
	args, err := orderArgs(o)
	if err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO ` + table + ` (` + pgOrderCols + `) VALUES (` + placeholders(len(args)) + `)
		ON CONFLICT (` + key + `) DO UPDATE SET ` + upsertSet(pgOrderCols), args}, nil
}

func (t *Tx) Orders() ([]*domain.Order, error) {
	return t.orders(`SELECT ` + pgOrderCols + ` FROM paydesk_orders ORDER BY invoice`)
}

func (t *Tx) PutOrderConflict(o *domain.Order) error {
	return t.run(orderUpsert("paydesk_order_conflicts", "invoice, hash", o))
}

func (t *Tx) OrderConflicts(invoice string) ([]*domain.Order, error) {
	return t.orders(`SELECT `+pgOrderCols+` FROM paydesk_order_conflicts WHERE ($1 = '' OR invoice = $1) ORDER BY invoice, hash`, pgText(invoice))
}

// ---- batches ----

const pgBatchCols = `id, kind, hash, source, operator, created, late, rows, items, total, currency`

func (t *Tx) PutBatch(b *domain.Batch) error { return t.run(batchUpsert(b)) }

func batchUpsert(b *domain.Batch) (pgStmt, error) {
	if err := pgTextErr("batch "+b.ID, "id", b.ID, "kind", b.Kind, "hash", b.Hash, "source", b.Source,
		"operator", b.Operator, "currency", b.Currency); err != nil {
		return pgStmt{}, err
	}
	return pgStmt{`INSERT INTO paydesk_batches (` + pgBatchCols + `) VALUES (` + placeholders(11) + `)
		ON CONFLICT (id) DO UPDATE SET ` + upsertSet(pgBatchCols), []any{
		pgText(b.ID), pgText(b.Kind), pgText(b.Hash), pgText(b.Source), pgText(b.Operator), pgTime(b.Created), b.Late,
		b.Rows, b.Items, pgNumeric(b.Total), pgText(b.Currency)}}, nil
}

func (t *Tx) batches(sql string, args ...any) ([]domain.Batch, error) {
	return rowsOf(t, func(r pgx.CollectableRow) (domain.Batch, error) {
		var b domain.Batch
		var created *time.Time
		var total pgtype.Numeric
		if err := r.Scan(&b.ID, &b.Kind, &b.Hash, &b.Source, &b.Operator, &created, &b.Late, &b.Rows, &b.Items,
			&total, &b.Currency); err != nil {
			return domain.Batch{}, err
		}
		b.Created, b.Total = timeOf(created), decOf(total)
		return b, nil
	}, sql, args...)
}

func (t *Tx) Batch(id string) (*domain.Batch, error) {
	bs, err := t.batches(`SELECT `+pgBatchCols+` FROM paydesk_batches WHERE id = $1`, pgText(id))
	if err != nil || len(bs) == 0 {
		return nil, err
	}
	return &bs[0], nil
}

func (t *Tx) BatchByHash(kind, hash string) (string, error) {
	var id string
	_, err := t.scanRow(`SELECT id FROM paydesk_batches WHERE kind = $1 AND hash = $2 AND hash <> ''`,
		[]any{pgText(kind), pgText(hash)}, &id)
	return id, err
}

func (t *Tx) Batches() ([]domain.Batch, error) {
	return t.batches(`SELECT ` + pgBatchCols + ` FROM paydesk_batches ORDER BY id`)
}

const pgBatchItemCols = `batch_id, idx, reservation_number, invoice, state, amount, currency, rows, lines, parcels,
	note, rule, message, op_id, key, updated`

func (t *Tx) PutBatchItem(id string, it domain.BatchItem) error {
	return t.run(batchItemUpsert(id, it))
}

func batchItemUpsert(id string, it domain.BatchItem) (pgStmt, error) {
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

func (t *Tx) BatchItems(id string) ([]domain.BatchItem, error) {
	rows, err := t.query(`SELECT `+pgBatchItemCols+` FROM paydesk_batch_items WHERE batch_id = $1 ORDER BY idx`, pgText(id))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.BatchItem
	for rows.Next() {
		var (
			it             domain.BatchItem
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
		it.State, it.Amount, it.OpID, it.Updated = domain.BatchItemState(state), decOf(amount), uint64(opID), timeOf(updated)
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
