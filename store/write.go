package store

import (
	"context"
	"fmt"
)

// AppendAudit adds an entry to the append-only audit log and returns its ID.
// A zero Time is set to now.
func (db *DB) AppendAudit(ctx context.Context, e AuditEntry) (uint64, error) {
	e.Time = nowOr(e.Time, db.now)
	var id uint64
	err := db.update(ctx, func(tx RepoTx, c *Change) (err error) {
		id, err = appendAudit(tx, e, c)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return id, nil
}

// AppendExchange adds an entry to the gateway log, keeping the newest
// Options.MaxExchanges. Card PINs in the request body are masked.
func (db *DB) AppendExchange(ctx context.Context, x Exchange) (uint64, error) {
	x.Time = nowOr(x.Time, db.now)
	x.RequestBody = maskBody(x.RequestBody)
	var id uint64
	err := db.update(ctx, func(tx RepoTx, c *Change) (err error) {
		id, err = tx.AppendExchange(&x, db.opts.MaxExchanges)
		c.Exchanges = true
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("gateway log: %w", err)
	}
	return id, nil
}

// PutReservations writes reservations as given (their ledger fields are
// recomputed from Original, Requests and their transactions), replacing any
// with the same key. It is for imports, fixtures and generated benchmark
// data (storetest.Generate), not for gateway answers.
func (db *DB) PutReservations(ctx context.Context, rs []*Reservation) error {
	return db.update(ctx, func(tx RepoTx, c *Change) error {
		for _, r := range rs {
			if r.Key == "" {
				return fmt.Errorf("put reservation: empty key")
			}
			if err := db.putReservation(tx, r, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutTransactions writes transactions as given (for imports and generated
// data), linking them to their reservations and originals.
func (db *DB) PutTransactions(ctx context.Context, ts []*Transaction) error {
	return db.update(ctx, func(tx RepoTx, c *Change) error {
		for _, t := range ts {
			if t.Key == "" {
				return fmt.Errorf("put transaction: empty key")
			}
			if err := db.putTx(tx, t, c); err != nil {
				return err
			}
		}
		return nil
	})
}

// AuditCheckpoint is the action of the entry paydesk writes when it first
// keys a log that has unkeyed entries (auditkey.go): keyed, and chained to
// the last of them, it anchors them — they cannot be edited or removed
// afterwards without it showing — though nothing proves who wrote them.
const AuditCheckpoint = "checkpoint"

// appendAudit adds e to the audit log, keyed with the commit's key. The
// first keyed entry after unkeyed ones is a checkpoint that anchors them.
func appendAudit(tx RepoTx, e AuditEntry, c *Change) (uint64, error) {
	if c.keys != nil {
		// A last entry that does not read is no reason to refuse a new one.
		if last, err := tx.LastAudit(); err == nil && last != nil && last.KeyID == "" && last.MAC == "" {
			cp := AuditEntry{Time: e.Time, Operator: "paydesk", Action: AuditCheckpoint,
				Result: fmt.Sprintf("keyed from here on; entries up to %d were written before the log was keyed", last.ID)}
			if _, err := tx.AppendAudit(cp, c.keys); err != nil {
				return 0, err
			}
		}
	}
	stored, err := tx.AppendAudit(e, c.keys)
	if err != nil {
		return 0, err
	}
	c.Audit = true
	return stored.ID, nil
}
