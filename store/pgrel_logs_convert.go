package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A database written before the relations (layout 7) keeps its logs, its
// journal, orders and batches as records of the store's own encodings in
// paydesk_kv. The relational engine's first open converts them into 0010's
// tables after the ledger (pgrel_ledger_convert.go), the same way: bucket
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

// logsConversionSteps are the buckets converted, in order, and how a
// record of each becomes a row.
var logsConversionSteps = []struct {
	bucket []byte
	put    func(t *pgRelTx, k, v []byte) error
}{
	{bPush, func(t *pgRelTx, k, v []byte) error {
		p, err := decodePush(v)
		if err != nil {
			return fmt.Errorf("push %d: %w", be64(k), err)
		}
		p.ID = be64(k)
		return t.insertPush(p)
	}},
	{bRejected, func(t *pgRelTx, k, v []byte) error {
		p, err := decodePush(v)
		if err != nil {
			return fmt.Errorf("rejected entry %d: %w", be64(k), err)
		}
		p.ID = be64(k)
		return t.insertRejected(p)
	}},
	{bMeta, func(t *pgRelTx, k, v []byte) error {
		// Of meta, the rejected log's groups: group key → entry.
		g, ok := bytes.CutPrefix(k, kRejectedGroup)
		if !ok || len(v) != 8 {
			return nil
		}
		source, class, _ := bytes.Cut(g, []byte{0})
		var exists bool
		if _, err := t.scanRow(`SELECT EXISTS (SELECT 1 FROM paydesk_rejected WHERE id = $1)`, []any{int64(be64(v))}, &exists); err != nil || !exists {
			return err // a group whose entry is gone leads nowhere
		}
		return t.SetRejectedGroupEntry(string(source), string(class), be64(v))
	}},
	{bExchange, func(t *pgRelTx, k, v []byte) error {
		var x Exchange
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("gateway log entry %d: %w", be64(k), err)
		}
		x.ID = be64(k)
		return t.insertExchange(&x)
	}},
	{bOp, func(t *pgRelTx, k, v []byte) error {
		var op PendingOp
		if err := json.Unmarshal(v, &op); err != nil {
			return fmt.Errorf("operation %d: %w", be64(k), err)
		}
		op.ID = be64(k)
		return t.PutOp(&op)
	}},
	{bOrder, func(t *pgRelTx, k, v []byte) error {
		var o Order
		if err := json.Unmarshal(v, &o); err != nil {
			return fmt.Errorf("order %s: %w", k, err)
		}
		return t.PutOrder(&o)
	}},
	{bOrderConflict, func(t *pgRelTx, k, v []byte) error {
		var o Order
		if err := json.Unmarshal(v, &o); err != nil {
			return fmt.Errorf("order conflict %q: %w", k, err)
		}
		return t.PutOrderConflict(&o)
	}},
	{bBatch, func(t *pgRelTx, k, v []byte) error {
		var b Batch
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("batch %s: %w", k, err)
		}
		return t.PutBatch(&b)
	}},
	{bBatchItem, func(t *pgRelTx, k, v []byte) error {
		id, _, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("batch item %q: the key names no batch", k)
		}
		var it BatchItem
		if err := json.Unmarshal(v, &it); err != nil {
			return fmt.Errorf("batch %s item: %w", id, err)
		}
		return t.PutBatchItem(string(id), it)
	}},
}

// convertLogs converts what is left of the logs in paydesk_kv, chunk by
// chunk of n records (0: logsConversionChunk); failAfter > 0 stops it
// with errFillCut after that many chunks (the tests of a conversion cut
// short). Run it after the ledger's conversion.
func (e *pgRelEngine) convertLogs(ctx context.Context, n, failAfter int) error {
	if n <= 0 {
		n = logsConversionChunk
	}
	for chunks := 0; ; {
		done := false
		err := e.update(ctx, func(t *pgRelTx) error {
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
				done = true
				return t.exec(`DELETE FROM paydesk_logs_conversion`)
			}
			s := logsConversionSteps[step]
			last, err := t.convertRecords(s.bucket, after, n, s.put)
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
			return fmt.Errorf("database %s: convert the logs to tables: %w", e.url, errFillCut)
		}
	}
}

// convertRecords converts up to n records of bucket after the key after
// (nil: from the first), a row or two each, and returns the last key it
// converted, nil when the bucket had no more.
func (t *pgRelTx) convertRecords(bucket, after []byte, n int, put func(t *pgRelTx, k, v []byte) error) ([]byte, error) {
	rows, err := t.query(`SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND ($2::bytea IS NULL OR k > $2) ORDER BY k LIMIT $3`,
		bucket, after, n)
	if err != nil {
		return nil, err
	}
	type kv struct{ k, v []byte }
	var recs []kv
	for rows.Next() {
		var r kv
		if err := rows.Scan(&r.k, &r.v); err != nil {
			rows.Close()
			return nil, t.fail(err)
		}
		recs = append(recs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	for _, r := range recs {
		if err := put(t, r.k, r.v); err != nil {
			return nil, err
		}
	}
	if len(recs) < n {
		return nil, nil // the bucket's end
	}
	return recs[len(recs)-1].k, nil
}

// convertNumbers copies the journal's and the batches' numbering and the
// audit log's (paydesk_bucket's sequences) and the counters (meta, every
// process's share summed) — the last step, in one transaction.
func (t *pgRelTx) convertNumbers() error {
	for name, bucket := range map[string][]byte{"operations": bOp, "batches": bBatch, "audit": bAudit} {
		if err := t.exec(`INSERT INTO paydesk_numbers (name, last)
			SELECT $1, seq FROM paydesk_bucket WHERE name = $2
			ON CONFLICT (name) DO UPDATE SET last = greatest(paydesk_numbers.last, excluded.last)`, name, bucket); err != nil {
			return err
		}
	}
	for i, key := range [][]byte{kPushCount, kRejectedCount, kReservationCount, kTransactionCount} {
		rows, err := t.query(`SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND (k = $2 OR substring(k FROM 1 FOR $3) = $4)`,
			bMeta, key, len(key)+1, append(append([]byte(nil), key...), '/'))
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
			sum += be64(v) // a counter taken below zero wrapped around: the sum comes out right
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

// logsConversionPending reports whether the logs still wait for their
// conversion (or a part of it).
func (e *pgRelEngine) logsConversionPending(ctx context.Context) (bool, error) {
	var pending bool
	err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paydesk_logs_conversion)`).Scan(&pending)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("database %s: %w", e.url, err)
	}
	return pending, nil
}

// convertLogsAtOpen runs what is left of the logs' conversion as a
// database is opened, after the ledger's (Options.fillChunk sizes its
// chunks, failFillAfter cuts it short for the tests). A role that may not
// write cannot do it: its open is refused, saying so, until a role that
// may write has opened the database once.
func (e *pgRelEngine) convertLogsAtOpen(ctx context.Context, opts Options) error {
	pending, err := e.logsConversionPending(ctx)
	if err != nil || !pending {
		return err
	}
	err = e.convertLogs(ctx, opts.fillChunk, opts.failFillAfter)
	if errors.Is(err, ErrReadOnlyRole) {
		return fmt.Errorf("database %s: its logs wait to be converted to tables, which the first open by a role that may write does: %w", e.url, ErrNeedsMigration)
	}
	return err
}
