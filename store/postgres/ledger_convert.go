package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/fold"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
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
// record of each becomes rows of the tables. The rows of a chunk are
// copied in (COPY), a table at a time: the tables hold nothing of these
// records yet (a chunk's rows commit with the step's progress, and nothing
// else writes the ledger before the conversion ends), so there is nothing
// to replace, and a statement per row would cost ten times as much.
var ledgerConversionSteps = []struct {
	bucket []byte
	rows   func(k, v []byte, add func(table int, row []any)) error
}{
	{kvlayout.BReservation, func(k, v []byte, add func(int, []any)) error {
		// JSON from a layout-7 paydesk, or the binary form of a later one.
		rp, err := kvlayout.DecodeReservationOf(string(k), v)
		if err != nil {
			return fmt.Errorf("reservation %s: %w", k, err)
		}
		r := *rp
		largs, err := lineArgs(&r)
		if err != nil {
			return err
		}
		var f fold.Folder
		args, err := resArgs(&r, &f)
		if err != nil {
			return err
		}
		add(convReservations, args)
		// lineArgs gives a column each (the arrays an insert unnests):
		// one row per line here.
		for i := range r.Lines {
			row := []any{largs[0], largs[1]}
			for _, col := range largs[2:] {
				row = append(row, reflect.ValueOf(col).Index(i).Interface())
			}
			add(convLines, row)
		}
		return nil
	}},
	{kvlayout.BTransaction, func(k, v []byte, add func(int, []any)) error {
		if kvlayout.IsPushIndexKey(k) {
			return nil // the push index beside the records: the push log's (0010)
		}
		x, err := kvlayout.DecodeTx(v)
		if err != nil {
			return fmt.Errorf("transaction %s: %w", k, err)
		}
		var f fold.Folder
		args, err := txArgs(x, &f)
		if err != nil {
			return err
		}
		add(convTransactions, args)
		return nil
	}},
	{kvlayout.BKeyOwner, func(k, v []byte, add func(int, []any)) error {
		if err := pgTextErr("key owner", "key", string(k), "reservation key", string(v)); err != nil {
			return err
		}
		add(convOwners, []any{pgText(string(k)), pgText(string(v))})
		return nil
	}},
	{kvlayout.BOrphan, func(k, v []byte, add func(int, []any)) error {
		var o domain.OrphanRequest
		if err := json.Unmarshal(v, &o); err != nil {
			return fmt.Errorf("orphan request %s: %w", k, err)
		}
		if o.Key == "" {
			o.Key = string(k)
		}
		args, err := orphanArgs(&o)
		if err != nil {
			return err
		}
		add(convOrphans, args)
		return nil
	}},
	{kvlayout.BResNumber, func(k, v []byte, add func(int, []any)) error {
		if err := pgTextErr("reservation number", "number", string(k), "reservation key", string(v)); err != nil {
			return err
		}
		add(convNumbers, []any{pgText(string(k)), pgText(string(v))})
		return nil
	}},
	{kvlayout.BRelated, func(k, _ []byte, add func(int, []any)) error {
		orig, refund, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("refund link %q: no 0x00 between the payment's key and the refund's", k)
		}
		if err := pgTextErr("refund link", "payment's key", string(orig), "refund's key", string(refund)); err != nil {
			return err
		}
		add(convRefunds, []any{pgText(string(orig)), pgText(string(refund))})
		return nil
	}},
}

// The tables a conversion copies into, in the order of their copies (a
// reservation before its lines).
const (
	convReservations = iota
	convLines
	convTransactions
	convOwners
	convOrphans
	convNumbers
	convRefunds
)

var convTables = []struct {
	name    string
	columns string
}{
	convReservations: {"paydesk_reservations", pgResCols},
	convLines:        {"paydesk_lines", pgLineCols},
	convTransactions: {"paydesk_transactions", pgTxCols},
	convOwners:       {"paydesk_key_owners", "key, reservation_key"},
	convOrphans:      {"paydesk_orphan_requests", pgOrphanSelect},
	convNumbers:      {"paydesk_reservation_numbers", "reservation_number, reservation_key"},
	convRefunds:      {"paydesk_refunds", "original, refund"},
}

// ledgerConversionChunk is the number of records one conversion
// transaction writes.
const ledgerConversionChunk = 2_000

// ledgerConversionLock is the advisory lock the chunks take turns under
// (the migrations' is 7305482190, the list tables' fill 7305482191).
const ledgerConversionLock = 7305482192

// ConvertLedger converts what is left of the ledger in paydesk_kv, chunk
// by chunk of n records (0: ledgerConversionChunk); failAfter > 0 stops
// it with domain.ErrFillCut after that many chunks (the tests of a conversion
// cut short).
func (e *Engine) ConvertLedger(ctx context.Context, n, failAfter int) error {
	if n <= 0 {
		n = ledgerConversionChunk
	}
	for chunks := 0; ; {
		done := false
		// READ COMMITTED: each statement reads what is committed when it
		// starts, so the progress read after the lock is the last chunk's,
		// whoever converted it (a SERIALIZABLE transaction would read it
		// from the snapshot it took before it waited for the lock, and
		// convert that chunk again). The lock makes the chunks take turns.
		err := e.run(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, true, func(t *Tx) error {
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
			last, err := t.convertChunk(s.bucket, after, n, s.rows)
			if err != nil {
				return fmt.Errorf("bucket %s: %w", s.bucket, err)
			}
			if last == nil { // the bucket is done
				step++
			}
			return t.exec(`UPDATE paydesk_ledger_conversion SET step = $1, after = $2`, step, last)
		})
		if DeniedWrite(err) {
			err = &readOnlyError{url: e.url, err: err}
		}
		if err != nil {
			return fmt.Errorf("database %s: convert the ledger to tables: %w", e.url, err)
		}
		if done {
			return nil
		}
		if chunks++; chunks == failAfter {
			return fmt.Errorf("database %s: convert the ledger to tables: %w", e.url, domain.ErrFillCut)
		}
	}
}

// convertChunk converts up to n records of bucket after the key after
// (nil: from the first) and returns the last key it converted, nil when
// the bucket had no more.
func (t *Tx) convertChunk(bucket, after []byte, n int, rowsOf func(k, v []byte, add func(int, []any)) error) ([]byte, error) {
	rows, err := t.query(`SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND ($2::bytea IS NULL OR k > $2) ORDER BY k LIMIT $3`,
		bucket, after, n)
	if err != nil {
		return nil, err
	}
	out := make([][][]any, len(convTables))
	add := func(table int, row []any) { out[table] = append(out[table], row) }
	var first, last []byte
	count := 0
	for rows.Next() {
		var k, v []byte
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, t.fail(err)
		}
		if err := rowsOf(k, v, add); err != nil {
			rows.Close()
			return nil, err
		}
		if first == nil {
			first = k
		}
		last = k
		count++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, t.fail(err)
	}
	for table, rs := range out {
		if len(rs) == 0 {
			continue
		}
		if _, err := t.tx.CopyFrom(t.ctx, pgx.Identifier{convTables[table].name}, columns(convTables[table].columns), pgx.CopyFromRows(rs)); err != nil {
			return nil, t.fail(fmt.Errorf("the records %q to %q into %s: %w", first, last, convTables[table].name, err))
		}
	}
	if count < n {
		return nil, nil // the bucket's end
	}
	return last, nil
}

// LedgerConversionPending reports whether the ledger still waits for its
// conversion (or a part of it).
func (e *Engine) LedgerConversionPending(ctx context.Context) (bool, error) {
	return e.conversionPending(ctx, "paydesk_ledger_conversion")
}

// conversionPending reports whether the progress table of a conversion
// (paydesk_ledger_conversion, paydesk_logs_conversion) still has its row:
// the conversion has not finished.
func (e *Engine) conversionPending(ctx context.Context, table string) (bool, error) {
	var pending bool
	err := e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{table}.Sanitize()+`)`).Scan(&pending)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("database %s: %w", e.url, err)
	}
	return pending, nil
}

// ConvertLedgerAtOpen runs what is left of the ledger's conversion as a
// database is opened (chunk sizes its chunks, 0 the default; failAfter
// cuts it short for the tests). A role that may not write cannot do it,
// and the tables would show it part of the ledger: its open is refused,
// saying so, until a role that may write has opened the database once.
func (e *Engine) ConvertLedgerAtOpen(ctx context.Context, chunk, failAfter int) error {
	pending, err := e.LedgerConversionPending(ctx)
	if err != nil || !pending {
		return err
	}
	err = e.ConvertLedger(ctx, chunk, failAfter)
	if errors.Is(err, domain.ErrReadOnlyRole) {
		return fmt.Errorf("database %s: its ledger waits to be converted to tables, which the first open by a role that may write does: %w", e.url, domain.ErrNeedsMigration)
	}
	return err
}
