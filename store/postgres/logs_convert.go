package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// A database written before the relations (layout 7) keeps its logs, its
// journal, orders and batches as records of the store's own encodings in
// paydesk_kv. The relational engine's first open converts them into 0010's
// tables after the ledger (ledger_convert.go), the same way: bucket
// by bucket in key order, a bounded number of records per transaction,
// each transaction moving paydesk_logs_conversion on, so a conversion cut
// short goes on where it stopped and never writes a record twice. The
// records keep their IDs. The audit log is not converted here: 0010 copied
// it and copies every entry written to paydesk_kv since, in the same
// transaction. The kv rows stay where they are.
//
// What is derived is not copied but made from the records: a push's
// identity (the push index beside the transactions) is its record's key
// and hash; the open-operations index is the operations' state. The
// rejected log's groups (in meta) are copied, as they lead to an entry.
// Last come the numbers (the journal's and the batches' sequences in
// paydesk_bucket) and the status bar's counters (in meta, summed over the
// processes that kept them).

// logsConversionLock serializes two processes converting at once.
const logsConversionLock = 7305482193

// logsConversionChunk is the records per transaction.
const logsConversionChunk = 500

// logsConversionSteps are the buckets converted, in order, and the
// statement that makes a record of each a row (ok false: the record is
// none of the table's). A chunk's statements go in one round trip.
var logsConversionSteps = []struct {
	bucket []byte
	row    func(k, v []byte) (st pgStmt, ok bool, err error)
}{
	{kvlayout.BPush, func(k, v []byte) (pgStmt, bool, error) {
		p, err := kvlayout.DecodePush(v)
		if err != nil {
			return pgStmt{}, false, fmt.Errorf("push %d: %w", kvlayout.Be64(k), err)
		}
		p.ID = kvlayout.Be64(k)
		st, err := pushInsert(p)
		return st, true, err
	}},
	{kvlayout.BRejected, func(k, v []byte) (pgStmt, bool, error) {
		p, err := kvlayout.DecodePush(v)
		if err != nil {
			return pgStmt{}, false, fmt.Errorf("rejected entry %d: %w", kvlayout.Be64(k), err)
		}
		p.ID = kvlayout.Be64(k)
		st, err := rejectedInsert(p)
		return st, true, err
	}},
	{kvlayout.BMeta, func(k, v []byte) (pgStmt, bool, error) {
		// Of meta, the rejected log's groups: group key → entry.
		g, ok := bytes.CutPrefix(k, kvlayout.KRejectedGroup)
		if !ok || len(v) != 8 {
			return pgStmt{}, false, nil
		}
		source, class, _ := bytes.Cut(g, []byte{0})
		if err := pgTextErr("rejected group", "source", string(source)); err != nil {
			return pgStmt{}, false, err
		}
		// A group whose entry is gone leads nowhere: not copied.
		return pgStmt{`INSERT INTO paydesk_rejected_groups (source, class, entry_id)
			SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM paydesk_rejected WHERE id = $3)`,
			[]any{pgText(string(source)), class, int64(kvlayout.Be64(v))}}, true, nil
	}},
	{kvlayout.BExchange, func(k, v []byte) (pgStmt, bool, error) {
		var x domain.Exchange
		if err := json.Unmarshal(v, &x); err != nil {
			return pgStmt{}, false, fmt.Errorf("gateway log entry %d: %w", kvlayout.Be64(k), err)
		}
		x.ID = kvlayout.Be64(k)
		st, err := exchangeInsert(&x)
		return st, true, err
	}},
	{kvlayout.BOp, func(k, v []byte) (pgStmt, bool, error) {
		var op domain.PendingOp
		if err := json.Unmarshal(v, &op); err != nil {
			return pgStmt{}, false, fmt.Errorf("operation %d: %w", kvlayout.Be64(k), err)
		}
		op.ID = kvlayout.Be64(k)
		st, err := opUpsert(&op)
		return st, true, err
	}},
	{kvlayout.BOrder, func(k, v []byte) (pgStmt, bool, error) {
		var o domain.Order
		if err := json.Unmarshal(v, &o); err != nil {
			return pgStmt{}, false, fmt.Errorf("order %s: %w", k, err)
		}
		st, err := orderUpsert("paydesk_orders", "invoice", &o)
		return st, true, err
	}},
	{kvlayout.BOrderConflict, func(k, v []byte) (pgStmt, bool, error) {
		var o domain.Order
		if err := json.Unmarshal(v, &o); err != nil {
			return pgStmt{}, false, fmt.Errorf("order conflict %q: %w", k, err)
		}
		st, err := orderUpsert("paydesk_order_conflicts", "invoice, hash", &o)
		return st, true, err
	}},
	{kvlayout.BBatch, func(k, v []byte) (pgStmt, bool, error) {
		var b domain.Batch
		if err := json.Unmarshal(v, &b); err != nil {
			return pgStmt{}, false, fmt.Errorf("batch %s: %w", k, err)
		}
		st, err := batchUpsert(&b)
		return st, true, err
	}},
	{kvlayout.BBatchItem, func(k, v []byte) (pgStmt, bool, error) {
		id, _, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return pgStmt{}, false, fmt.Errorf("batch item %q: the key names no batch", k)
		}
		var it domain.BatchItem
		if err := json.Unmarshal(v, &it); err != nil {
			return pgStmt{}, false, fmt.Errorf("batch %s item: %w", id, err)
		}
		st, err := batchItemUpsert(string(id), it)
		return st, true, err
	}},
	{kvlayout.BUsers, convertUser},            // users_convert.go
	{kvlayout.BApproval, convertApproval},     // users_convert.go
	{kvlayout.BDelivery, convertDelivery},     // outbox_convert.go
	{kvlayout.BPushReceipts, convertReceipts}, // outbox_convert.go
}

// ConvertLogs converts what is left of the logs in paydesk_kv, chunk by
// chunk of n records (0: logsConversionChunk); failAfter > 0 stops it
// with domain.ErrFillCut after that many chunks (the tests of a conversion cut
// short). Run it after the ledger's conversion.
func (e *Engine) ConvertLogs(ctx context.Context, n, failAfter int) error {
	if n <= 0 {
		n = logsConversionChunk
	}
	for chunks := 0; ; {
		done := false
		// READ COMMITTED: the progress read after the lock is the last
		// chunk's, whoever converted it; a SERIALIZABLE transaction would
		// read it from the snapshot it took before it waited for the lock
		// and convert that chunk again. The lock makes the chunks take
		// turns.
		err := e.run(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, true, func(t *Tx) error {
			if err := t.exec(`SELECT pg_advisory_xact_lock($1)`, int64(logsConversionLock)); err != nil {
				return err
			}
			var step int
			var after []byte
			ok, err := t.scanRow(`SELECT step, after FROM paydesk_logs_conversion`, nil, &step, &after)
			if err != nil {
				return err
			}
			if !ok {
				done = true
				return nil
			}
			if step >= len(logsConversionSteps) {
				if err := t.convertNumbers(); err != nil {
					return err
				}
				if err := t.convertOutboxNumbers(); err != nil {
					return err
				}
				done = true
				return t.exec(`DELETE FROM paydesk_logs_conversion`)
			}
			s := logsConversionSteps[step]
			last, err := t.convertRecords(s.bucket, after, n, s.row)
			if err != nil {
				return fmt.Errorf("bucket %s: %w", s.bucket, err)
			}
			if last == nil {
				step++
			}
			return t.exec(`UPDATE paydesk_logs_conversion SET step = $1, after = $2`, step, last)
		})
		if err != nil {
			return fmt.Errorf("database %s: convert the logs to tables: %w", e.url, err)
		}
		if done {
			return nil
		}
		if chunks++; chunks == failAfter {
			return fmt.Errorf("database %s: convert the logs to tables: %w", e.url, domain.ErrFillCut)
		}
	}
}

// convertRecords converts up to n records of bucket after the key after
// (nil: from the first), their statements sent in one batch, and returns
// the last key it converted, nil when the bucket had no more.
func (t *Tx) convertRecords(bucket, after []byte, n int, row func(k, v []byte) (pgStmt, bool, error)) ([]byte, error) {
	rows, err := t.query(`SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND ($2::bytea IS NULL OR k > $2) ORDER BY k LIMIT $3`,
		bucket, after, n)
	if err != nil {
		return nil, err
	}
	var b pgx.Batch
	var last []byte
	count := 0
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, t.fail(err)
		}
		st, ok, err := row(k, v)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if ok {
			b.Queue(st.sql, st.args...)
		}
		last = k
		count++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	if b.Len() > 0 {
		if err := t.tx.SendBatch(t.ctx, &b).Close(); err != nil {
			return nil, t.fail(fmt.Errorf("the records after %q: %w", after, err))
		}
	}
	if count < n {
		return nil, nil // the bucket's end
	}
	return last, nil
}

// convertNumbers copies the journal's and the batches' numbering and the
// audit log's (paydesk_bucket's sequences) and the counters (meta, every
// process's share summed) — the last step, in one transaction.
func (t *Tx) convertNumbers() error {
	for name, bucket := range map[string][]byte{"operations": kvlayout.BOp, "batches": kvlayout.BBatch, "audit": kvlayout.BAudit, "approvals": kvlayout.BApproval} {
		if err := t.exec(`INSERT INTO paydesk_numbers (name, last)
			SELECT $1, seq FROM paydesk_bucket WHERE name = $2
			ON CONFLICT (name) DO UPDATE SET last = greatest(paydesk_numbers.last, excluded.last)`, name, bucket); err != nil {
			return err
		}
	}
	for i, key := range [][]byte{kvlayout.KPushCount, kvlayout.KRejectedCount, kvlayout.KReservationCount, kvlayout.KTransactionCount} {
		rows, err := t.query(`SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND (k = $2 OR substring(k FROM 1 FOR $3) = $4)`,
			kvlayout.BMeta, key, len(key)+1, append(append([]byte(nil), key...), '/'))
		if err != nil {
			return err
		}
		var sum uint64
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return t.fail(err)
			}
			sum += kvlayout.Be64(v) // a counter taken below zero wrapped around: the sum comes out right
		}
		rows.Close()
		if err := t.fail(rows.Err()); err != nil {
			return err
		}
		if err := t.exec(`INSERT INTO paydesk_counters (name, process, n) VALUES ($1, '', $2)
			ON CONFLICT (name, process) DO UPDATE SET n = excluded.n`, pgTallyNames[i], int64(sum)); err != nil {
			return err
		}
	}
	return nil
}

// LogsConversionPending reports whether the logs still wait for their
// conversion (or a part of it).
func (e *Engine) LogsConversionPending(ctx context.Context) (bool, error) {
	return e.conversionPending(ctx, "paydesk_logs_conversion")
}

// ConvertLogsAtOpen runs what is left of the logs' conversion as a
// database is opened, after the ledger's (chunk sizes its
// chunks; failAfter cuts it short for the tests). A role that may not
// write cannot do it: its open is refused, saying so, until a role that
// may write has opened the database once.
func (e *Engine) ConvertLogsAtOpen(ctx context.Context, chunk, failAfter int) error {
	pending, err := e.LogsConversionPending(ctx)
	if err != nil || !pending {
		return err
	}
	err = e.ConvertLogs(ctx, chunk, failAfter)
	if errors.Is(err, domain.ErrReadOnlyRole) {
		return fmt.Errorf("database %s: its logs wait to be converted to tables, which the first open by a role that may write does: %w", e.url, domain.ErrNeedsMigration)
	}
	return err
}
