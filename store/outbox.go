package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// The outbox: every push stored is delivered to each shop endpoint the
// store keeps (outbox_endpoints.go). A delivery is recorded in
// the commit that stores the push, so a process killed right after it
// answered the gateway 200 loses none; a worker (internal/outbox) sends
// them, at least once, in order per transaction key and endpoint, and
// records every attempt here.

// CheckEndpoint says why target cannot be a forward endpoint.
func CheckEndpoint(target string) error {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("forward-to %q: must be an absolute http(s) URL", target)
	}
	return nil
}

// enqueueDeliveries records one delivery of the push just stored per
// endpoint, in the push's own transaction. A push without a body is no
// push: nothing is delivered (a shop's verifier throws on an empty body).
func (db *DB) enqueueDeliveries(tx RepoTx, rec *PushRecord, pushID uint64) error {
	if len(rec.Body) == 0 || rec.Rejected || rec.Signature != SignatureValid {
		return nil
	}
	// The store's endpoints, as this transaction sees them: every process
	// sharing the store records the same deliveries (outbox_endpoints.go).
	eps, err := tx.ForwardTo()
	if err != nil {
		return fmt.Errorf("delivery of push %d: the store's forward-to: %w", pushID, err)
	}
	if len(eps) == 0 {
		return nil
	}
	at := rec.ReceivedAt
	if at.IsZero() {
		at = db.now()
	}
	for _, ep := range eps {
		d := &Delivery{PushID: pushID, Key: rec.Key, Endpoint: ep, Created: at, State: DeliveryPending, NextAt: at}
		if _, err := tx.AppendDelivery(d); err != nil {
			return fmt.Errorf("delivery of push %d to %s: %w", pushID, ep, err)
		}
	}
	return nil
}

// DueDelivery is an open delivery with the push body it sends.
type DueDelivery struct {
	Delivery
	Body []byte
}

// NextDeliveries returns what is due at now, oldest first: for each
// endpoint and transaction key only the oldest open delivery (a later
// push for the same key waits for the earlier one's delivery), and only
// when its NextAt has come; with more due than limit, the ones due
// earliest. next is the earliest NextAt of the ones not due yet (zero:
// none waits). On a file it reads the due ones only, not every open one
// (kvrepo_outbox.go: a shop down for a day left 100,000 open, and a look
// after every push read them all).
func (db *DB) NextDeliveries(ctx context.Context, now time.Time, limit int) (due []DueDelivery, next time.Time, err error) {
	err = db.repo.View(ctx, func(tx RepoTx) error {
		due = nil
		heads, nextAt, err := dueHeads(tx, now, limit)
		if err != nil {
			return err
		}
		next = nextAt
		for _, o := range heads {
			d, err := tx.Delivery(o.ID)
			if err != nil {
				return err
			}
			if d == nil {
				continue
			}
			body, err := pushBodyOf(tx, d.PushID)
			if err != nil {
				return err
			}
			due = append(due, DueDelivery{Delivery: *d, Body: body})
		}
		return nil
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("deliveries due: %w", err)
	}
	return due, next, nil
}

// dueIndex is an engine that keeps the heads of the open deliveries by
// their next attempt (kvTx): the worker reads the due ones, not all.
type dueIndex interface {
	DueDeliveries(now time.Time, limit int) (due []OpenDelivery, next time.Time, ok bool, err error)
}

// dueHeads is the oldest open delivery of each endpoint and key whose
// next attempt has come (at most limit; ≤ 0: all), ascending by ID, and
// the earliest next attempt of the others (zero: none waits).
func dueHeads(tx RepoTx, now time.Time, limit int) ([]OpenDelivery, time.Time, error) {
	if ix, ok := tx.(dueIndex); ok {
		due, next, ok, err := ix.DueDeliveries(now, limit)
		if err != nil || ok {
			return due, next, err
		}
	}
	return scanDueHeads(tx, now, limit)
}

// scanDueHeads is dueHeads from all the open deliveries.
func scanDueHeads(tx RepoTx, now time.Time, limit int) (due []OpenDelivery, next time.Time, err error) {
	open, err := tx.OpenDeliveries()
	if err != nil {
		return nil, time.Time{}, err
	}
	seen := map[[2]string]bool{}
	for _, o := range open {
		k := [2]string{o.Endpoint, o.Key}
		if seen[k] {
			continue
		}
		seen[k] = true
		if o.NextAt.After(now) {
			if next.IsZero() || o.NextAt.Before(next) {
				next = o.NextAt
			}
			continue
		}
		if limit > 0 && len(due) >= limit {
			// Enough for one round; the caller asks again, and next
			// only matters once nothing is due.
			break
		}
		due = append(due, o)
	}
	return due, next, nil
}

// pushBodyReader is an engine that reads a push's body alone (kvTx).
type pushBodyReader interface {
	PushBody(id uint64) ([]byte, error)
}

// pushBodyOf is the body of the push id, nil when it is gone.
func pushBodyOf(tx RepoTx, id uint64) ([]byte, error) {
	if r, ok := tx.(pushBodyReader); ok {
		return r.PushBody(id)
	}
	p, err := tx.Push(id)
	if err != nil || p == nil {
		return nil, err
	}
	return p.Body, nil
}

// AttemptOutcome is what the worker decided after an attempt: Delivered,
// or retry at NextAt, or (GaveUp) no more attempts.
type AttemptOutcome struct {
	Delivered bool
	GaveUp    bool
	NextAt    time.Time
}

// AttemptRecord is one attempt for RecordAttempts.
type AttemptRecord struct {
	ID      uint64
	Attempt Attempt
	Outcome AttemptOutcome
}

// RecordAttempt adds a to the delivery id and moves it on as out says.
// A delivery that is no longer pending (resent or delivered meanwhile by
// another worker) keeps its state; the attempt is recorded all the same.
func (db *DB) RecordAttempt(ctx context.Context, id uint64, a Attempt, out AttemptOutcome) error {
	return db.RecordAttempts(ctx, []AttemptRecord{{ID: id, Attempt: a, Outcome: out}})
}

// RecordAttempts is RecordAttempt for several deliveries in one commit.
func (db *DB) RecordAttempts(ctx context.Context, recs []AttemptRecord) error {
	if len(recs) == 0 {
		return nil
	}
	fn := func(tx RepoTx, _ *Change) error {
		for _, r := range recs {
			if err := recordAttempt(tx, r.ID, r.Attempt, r.Outcome); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	if db.batch != nil && !db.opts.NoGroupCommit {
		// With the pushes' group commit: measured with pushload -compare
		// -forward, a commit of its own (its fsync holding the single
		// writer) cost the listener more (47 % of its pushes/s, against 34 %).
		err = db.batch.do(ctx, fn)
	} else {
		err = db.update(ctx, fn)
	}
	if err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	return nil
}

func recordAttempt(tx RepoTx, id uint64, a Attempt, out AttemptOutcome) error {
	d, err := tx.Delivery(id)
	if err != nil {
		return err
	}
	if d == nil {
		return fmt.Errorf("no delivery %d", id)
	}
	// A NUL is no text (jsonb refuses it); the worker's excerpt is inert
	// already, an error's text from the network may not be.
	a.Error, a.Excerpt = strings.ReplaceAll(a.Error, "\x00", "\uFFFD"), strings.ReplaceAll(a.Excerpt, "\x00", "\uFFFD")
	d.Attempts = appendAttempt(d.Attempts, a)
	if d.State == DeliveryPending {
		d.Tries++
		switch {
		case out.Delivered:
			d.State, d.DeliveredAt, d.NextAt = DeliveryDelivered, a.At, time.Time{}
		case out.GaveUp:
			d.State, d.NextAt = DeliveryFailed, time.Time{}
		default:
			d.NextAt = out.NextAt
		}
	}
	return tx.PutDelivery(d)
}

// appendAttempt keeps the first half of MaxAttemptsKept and the newest.
func appendAttempt(as []Attempt, a Attempt) []Attempt {
	as = append(as, a)
	if len(as) > MaxAttemptsKept {
		half := MaxAttemptsKept / 2
		as = append(as[:half], as[len(as)-(MaxAttemptsKept-half):]...)
	}
	return as
}

// Deliveries returns the deliveries q keeps, newest first.
func (db *DB) Deliveries(ctx context.Context, q DeliveryQuery) ([]*Delivery, error) {
	var out []*Delivery
	err := db.repo.View(ctx, func(tx RepoTx) error {
		out = nil
		all, err := tx.DeliveriesBefore(0, 0)
		if err != nil {
			return err
		}
		for _, d := range all {
			if q.Keeps(d) {
				out = append(out, d)
				if q.Limit > 0 && len(out) >= q.Limit {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return out, nil
}

func resend(tx RepoTx, d *Delivery, now time.Time) error {
	d.State, d.NextAt, d.DeliveredAt = DeliveryPending, now, time.Time{}
	d.Resent++
	d.Tries = 0
	return tx.PutDelivery(d)
}
