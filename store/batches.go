package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// This file keeps batches: a run of work from a shipment manifest (many
// captures, or many cancels of the rest), journaled as one unit with an id
// so that a second run of the same manifest, or a resume after a kill, knows
// what was already done. (batch.go is something else: the group-commit
// writer of the pushes.)
//
// Every capture inside a batch still goes through the operation journal
// (BeginOp → send → settle); a batch item only remembers which operation
// carried it, so the batch never sends a row set twice.

// ErrBatchExists: a batch of the same kind for the same manifest exists.
var ErrBatchExists = errors.New("this manifest was already run as a batch")

// CreateBatch journals a new batch with its items in one transaction and
// returns it with its ID. A batch of the same kind and manifest hash
// refuses with ErrBatchExists (the caller resumes that one instead).
func (db *DB) CreateBatch(ctx context.Context, b Batch, items []BatchItem) (Batch, error) {
	b.Created = nowOr(b.Created, db.now)
	b.Items = len(items)
	err := db.update(ctx, func(tx RepoTx, _ *Change) error {
		if b.Hash != "" {
			id, err := tx.BatchByHash(b.Kind, b.Hash)
			if err != nil {
				return err
			}
			if id != "" {
				return fmt.Errorf("%w: %s", ErrBatchExists, id)
			}
		}
		n, err := tx.NextBatchNumber()
		if err != nil {
			return err
		}
		b.ID = fmt.Sprintf("B%d", n)
		if err := tx.PutBatch(&b); err != nil {
			return err
		}
		for i := range items {
			it := items[i]
			it.Index = i
			it.Updated = b.Created
			if err := tx.PutBatchItem(b.ID, it); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return b, fmt.Errorf("journal batch: %w", err)
	}
	return b, nil
}

// BatchByHash finds the batch of kind run from the manifest with this hash;
// nil when there is none.
func (db *DB) BatchByHash(ctx context.Context, kind, hash string) (*Batch, error) {
	var id string
	err := db.read(ctx, func(tx RepoTx) (err error) {
		id, err = tx.BatchByHash(kind, hash)
		return err
	})
	if err != nil || id == "" {
		return nil, err
	}
	b, _, err := db.Batch(ctx, id)
	return b, err
}

// Batch returns a batch and its items in order.
func (db *DB) Batch(ctx context.Context, id string) (*Batch, []BatchItem, error) {
	var b *Batch
	var items []BatchItem
	err := db.read(ctx, func(tx RepoTx) (err error) {
		if b, err = tx.Batch(id); err != nil {
			return err
		}
		if b == nil {
			return fmt.Errorf("batch %s: %w", id, ErrNotFound)
		}
		items, err = tx.BatchItems(id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return b, items, nil
}

// Batches lists the batches, newest first (limit 0: all).
func (db *DB) Batches(ctx context.Context, limit int) ([]Batch, error) {
	var out []Batch
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.Batches()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load batches: %w", err)
	}
	// Keys sort as text (B10 before B2): order by creation.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Created.After(out[j-1].Created); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// UpdateBatchItem writes an item's new state. The batch must exist.
func (db *DB) UpdateBatchItem(ctx context.Context, id string, it BatchItem) error {
	it.Updated = nowOr(time.Time{}, db.now)
	err := db.update(ctx, func(tx RepoTx, _ *Change) error {
		b, err := tx.Batch(id)
		if err != nil {
			return err
		}
		if b == nil {
			return fmt.Errorf("batch %s: %w", id, ErrNotFound)
		}
		return tx.PutBatchItem(id, it)
	})
	if err != nil {
		return fmt.Errorf("batch %s item %d: %w", id, it.Index, err)
	}
	return nil
}

// ReservationLedgers finds each reference as Reservation does (key,
// reservation number, else the newest reservation with that invoice) in one
// read transaction and returns what was found with its ledger only: the
// addresses, original order and history are left empty. References not
// found are missing from the map.
func (db *DB) ReservationLedgers(ctx context.Context, refs []string) (map[string]*Reservation, error) {
	out := make(map[string]*Reservation, len(refs))
	err := db.read(ctx, func(tx RepoTx) error {
		for _, ref := range refs {
			if ref == "" {
				continue
			}
			r, err := tx.ReservationLedger(ref)
			if err == nil && r == nil {
				var k string
				if k, err = tx.ReservationKeyByNumber(ref); err == nil && k != "" {
					r, err = tx.ReservationLedger(k)
				}
			}
			if err != nil {
				return err
			}
			if r != nil {
				out[ref] = r
				continue
			}
			keys, err := tx.ReservationKeysByInvoice(ref)
			if err != nil {
				return err
			}
			var best *Reservation
			for _, k := range keys {
				v, err := tx.ReservationLedger(k)
				if err != nil {
					return err
				}
				if v != nil && newer(v.Created, v.Key, best) {
					best = v
				}
			}
			if best != nil {
				out[ref] = best
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look up reservations: %w", err)
	}
	return out, nil
}
