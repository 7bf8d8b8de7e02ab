package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A database written before the relations (layout 7: the buckets of
// paydesk_kv) keeps its ledger as records of the store's own encodings.
// The first paydesk that opens it converts them into the typed tables of
// 0009: the records are the truth, read in key order bucket by bucket and
// written as rows, a bounded number per transaction; each transaction also
// moves paydesk_ledger_conversion on, so a conversion cut short (killed,
// the power lost) goes on where it stopped, and a chunk is never written
// twice. Two processes opening at once take turns under an advisory lock.
//
// The look-ups the rules wrote beside the records are copied as they are
// (key owners, reservation numbers, refund links), so they lead where
// they led. Two buckets are not copied, the tables' own columns answer
// them: invoices (the invoice columns and their indexes) and summaries
// (the list row is part of paydesk_reservations, made from the record).
// The kv rows stay where they are.

// ledgerConversionSteps are the buckets converted, in order, and how a
// record of each becomes rows.
var ledgerConversionSteps = []struct {
	bucket []byte
	put    func(t *pgRelTx, k, v []byte) error
}{
	{bReservation, func(t *pgRelTx, k, v []byte) error {
		var r Reservation
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("reservation %s: %w", k, err)
		}
		_, err := t.PutReservation(&r)
		return err
	}},
	{bTransaction, func(t *pgRelTx, k, v []byte) error {
		if isPushIndexKey(k) {
			return nil // the push index beside the records: the push log's (0010)
		}
		x, err := decodeTx(v)
		if err != nil {
			return fmt.Errorf("transaction %s: %w", k, err)
		}
		_, err = t.PutTransaction(x)
		return err
	}},
	{bKeyOwner, func(t *pgRelTx, k, v []byte) error {
		if err := pgTextErr("key owner", "key", string(k), "reservation key", string(v)); err != nil {
			return err
		}
		return t.exec(`INSERT INTO paydesk_key_owners (key, reservation_key) VALUES ($1, $2)
			ON CONFLICT (key) DO UPDATE SET reservation_key = excluded.reservation_key`, pgText(string(k)), pgText(string(v)))
	}},
	{bOrphan, func(t *pgRelTx, k, v []byte) error {
		var o orphanRequest
		if err := json.Unmarshal(v, &o); err != nil {
			return fmt.Errorf("orphan request %s: %w", k, err)
		}
		if o.Key == "" {
			o.Key = string(k)
		}
		return t.PutOrphan(&o)
	}},
	{bResNumber, func(t *pgRelTx, k, v []byte) error {
		if err := pgTextErr("reservation number", "number", string(k), "reservation key", string(v)); err != nil {
			return err
		}
		return t.exec(`INSERT INTO paydesk_reservation_numbers (reservation_number, reservation_key) VALUES ($1, $2)
			ON CONFLICT (reservation_number) DO UPDATE SET reservation_key = excluded.reservation_key`, pgText(string(k)), pgText(string(v)))
	}},
	{bRelated, func(t *pgRelTx, k, _ []byte) error {
		orig, refund, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("refund link %q: no 0x00 between the payment's key and the refund's", k)
		}
		return t.LinkRefund(string(orig), string(refund))
	}},
}

// ledgerConversionChunk is the number of records one conversion
// transaction writes.
const ledgerConversionChunk = 2_000

// ledgerConversionLock is the advisory lock the chunks take turns under
// (the migrations' is 7305482190, the list tables' fill 7305482191).
const ledgerConversionLock = 7305482192

// convertLedger converts what is left of the ledger in paydesk_kv, chunk
// by chunk of n records (0: ledgerConversionChunk); failAfter > 0 stops
// it with errFillCut after that many chunks (the tests of a conversion
// cut short).
func (e *pgRelEngine) convertLedger(ctx context.Context, n, failAfter int) error {
	if n <= 0 {
		n = ledgerConversionChunk
	}
	for chunks := 0; ; {
		done := false
		err := e.update(ctx, func(t *pgRelTx) error {
			if err := t.exec(`SELECT pg_advisory_xact_lock($1)`, int64(ledgerConversionLock)); err != nil {
				return err
			}
			var step int
			var after []byte
			ok, err := t.scanRow(`SELECT step, after FROM paydesk_ledger_conversion`, nil, &step, &after)
			if err != nil {
				return err
			}
			if !ok || step >= len(ledgerConversionSteps) {
				done = true
				return t.exec(`DELETE FROM paydesk_ledger_conversion`)
			}
			s := ledgerConversionSteps[step]
			last, err := t.convertChunk(s.bucket, after, n, s.put)
			if err != nil {
				return fmt.Errorf("bucket %s: %w", s.bucket, err)
			}
			if last == nil { // the bucket is done
				step++
			}
			return t.exec(`UPDATE paydesk_ledger_conversion SET step = $1, after = $2`, step, last)
		})
		if err != nil {
			return fmt.Errorf("database %s: convert the ledger to tables: %w", e.url, err)
		}
		if done {
			return nil
		}
		if chunks++; chunks == failAfter {
			return fmt.Errorf("database %s: convert the ledger to tables: %w", e.url, errFillCut)
		}
	}
}

// convertChunk converts up to n records of bucket after the key after
// (nil: from the first) and returns the last key it converted, nil when
// the bucket had no more.
func (t *pgRelTx) convertChunk(bucket, after []byte, n int, put func(t *pgRelTx, k, v []byte) error) ([]byte, error) {
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

// ledgerConversionPending reports whether the ledger still waits for its
// conversion (or a part of it).
func (e *pgRelEngine) ledgerConversionPending(ctx context.Context) (bool, error) {
	var pending bool
	err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM paydesk_ledger_conversion)`).Scan(&pending)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("database %s: %w", e.url, err)
	}
	return pending, nil
}
