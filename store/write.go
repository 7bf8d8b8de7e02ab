package store

import (
	"encoding/json"
	"fmt"
)

// trim deletes the oldest entries of a sequence-numbered bucket beyond max.
// The newest ID is the bucket's sequence, so the oldest kept is seq−max+1.
func trim(b Bucket, max int) error {
	seq := b.Sequence()
	if seq <= uint64(max) {
		return nil
	}
	limit := seq - uint64(max) // delete IDs ≤ limit
	c := b.Cursor()
	for k, _ := c.First(); k != nil && be64(k) <= limit; k, _ = c.First() {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// AppendAudit adds an entry to the append-only audit log and returns its ID.
// A zero Time is set to now.
func (db *DB) AppendAudit(e AuditEntry) (uint64, error) {
	e.Time = nowOr(e.Time, db.now)
	var id uint64
	err := db.update(func(tx Tx, c *Change) (err error) {
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
func (db *DB) AppendExchange(x Exchange) (uint64, error) {
	x.Time = nowOr(x.Time, db.now)
	x.RequestBody = maskBody(x.RequestBody)
	var id uint64
	err := db.update(func(tx Tx, c *Change) error {
		b := appendOnly(tx, bExchange)
		n, err := b.NextSequence()
		if err != nil {
			return err
		}
		x.ID, id = n, n
		v, err := json.Marshal(x)
		if err != nil {
			return err
		}
		if err := b.Put(u64(n), v); err != nil {
			return err
		}
		c.Exchanges = true
		return trim(b, db.opts.MaxExchanges)
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
func (db *DB) PutReservations(rs []*Reservation) error {
	return db.update(func(tx Tx, c *Change) error {
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
func (db *DB) PutTransactions(ts []*Transaction) error {
	return db.update(func(tx Tx, c *Change) error {
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

func appendAudit(tx Tx, e AuditEntry, c *Change) (uint64, error) {
	b := appendOnly(tx, bAudit)
	lastK, last := b.Cursor().Last()
	if c.keys != nil && lastK != nil {
		var prev AuditEntry
		if json.Unmarshal(last, &prev) == nil && prev.KeyID == "" && prev.MAC == "" {
			cp := AuditEntry{Time: e.Time, Operator: "paydesk", Action: AuditCheckpoint,
				Result: fmt.Sprintf("keyed from here on; entries up to %d were written before the log was keyed", be64(lastK))}
			var err error
			if _, last, err = putAudit(b, cp, last, c.keys); err != nil {
				return 0, err
			}
		}
	}
	n, _, err := putAudit(b, e, last, c.keys)
	if err != nil {
		return 0, err
	}
	c.Audit = true
	return n, nil
}

// putAudit stores e as the log's next entry, chained to prev (the last
// entry as stored, nil for the first) and keyed with keys (nil: unkeyed),
// and returns its number and what was stored.
func putAudit(b Bucket, e AuditEntry, prev []byte, keys *auditKeyring) (uint64, []byte, error) {
	n, err := b.NextSequence()
	if err != nil {
		return 0, nil, err
	}
	e.ID = n
	e.Prev = ""
	if prev != nil {
		e.Prev = chainHash(prev)
	}
	v, err := keys.seal(e)
	if err != nil {
		return 0, nil, err
	}
	return n, v, b.Put(u64(n), v)
}
