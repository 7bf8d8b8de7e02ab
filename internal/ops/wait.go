package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"paydesk/store"
)

// pollEvery is the fallback when a change notification is missed (a
// subscriber that overflowed); the notifications do the real work.
const pollEvery = 250 * time.Millisecond

// DefaultWait is how long commands wait for the push that settles their
// operation.
const DefaultWait = 5 * time.Second

// Waiter waits briefly for the cache to show what a push brings.
type Waiter struct{ st Store }

// Waiter returns a waiter over the service's cache.
func (s *Service) Waiter() Waiter { return Waiter{st: s.cfg.Store} }

// NewWaiter waits on st.
func NewWaiter(st Store) Waiter { return Waiter{st: st} }

// until subscribes, then checks done after every change (and every
// pollEvery) until it reports true, the timeout passes or ctx ends.
func (w Waiter) until(ctx context.Context, timeout time.Duration, done func() (bool, error)) (bool, error) {
	changes, stop := w.st.Subscribe()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		ok, err := done()
		if err != nil || ok {
			return ok, err
		}
		select {
		case <-ctx.Done():
			return false, nil
		case _, open := <-changes:
			if !open {
				return done()
			}
		case <-tick.C:
		}
	}
}

// Op waits until operation id is no longer open (settled, failed,
// resolved) and returns it as last seen; ok is false on timeout.
func (w Waiter) Op(ctx context.Context, id uint64, timeout time.Duration) (op *store.PendingOp, ok bool, err error) {
	ok, err = w.until(ctx, timeout, func() (bool, error) {
		o, err := w.st.Op(ctx, id)
		if err != nil {
			return false, fmt.Errorf("wait for operation %d: %w", id, err)
		}
		op = o
		return !o.State.IsOpen(), nil
	})
	return op, ok, err
}

// Push waits until a push about key is stored; ok is false on timeout.
func (w Waiter) Push(ctx context.Context, key string, timeout time.Duration) (ok bool, err error) {
	if key == "" {
		return false, nil
	}
	return w.until(ctx, timeout, func() (bool, error) {
		ps, err := w.st.PushesFor(ctx, key)
		if err != nil {
			return false, fmt.Errorf("wait for the push of %s: %w", key, err)
		}
		return len(ps) > 0, nil
	})
}

// Reservation waits until the reservation leaves "awaiting customer" (the
// Reserve push arrived) and returns it.
func (w Waiter) Reservation(ctx context.Context, ref string, timeout time.Duration) (r *store.Reservation, ok bool, err error) {
	ok, err = w.until(ctx, timeout, func() (bool, error) {
		x, err := w.st.Reservation(ctx, ref)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil // a shop's reservation appears with its push
		}
		if err != nil {
			return false, fmt.Errorf("wait for reservation %s: %w", ref, err)
		}
		r = x
		return x.State() != store.StateAwaitingCustomer, nil
	})
	return r, ok, err
}

// Settle waits for what an operation's result still expects: the push of
// its key, or (outcome unknown) the push that settles the journal entry.
func (w Waiter) Settle(ctx context.Context, res Result, timeout time.Duration) (bool, error) {
	if res.OutcomeUnknown() || res.Key == "" {
		if res.OpID == 0 {
			return false, nil
		}
		_, ok, err := w.Op(ctx, res.OpID, timeout)
		return ok, err
	}
	return w.Push(ctx, res.Key, timeout)
}
