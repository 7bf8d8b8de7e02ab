package ui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"paydesk/store"
)

// SharedStore lets many consoles on one store (paydesk serve's consoles
// over SSH) share their reads: after a change every console reloads the
// same lists, counts and logs, and fifty consoles reading them fifty times
// took the push listener's CPU. A read is done once per change and the
// others are handed its result; a read asked for while it runs waits for
// it.
//
// Correctness rests on the order of events: SharedStore hears the store's
// changes itself and hands them on to its subscribers (the consoles) only
// after it has forgotten what it read before the change, so a console
// that reloads for a change never gets a result read before that change.
// A result read while a change arrives is kept for the change before
// only. Records in the results are shared, read-only, as the consoles
// treat them; the slices are each console's own.
type SharedStore struct {
	// The store itself, so that every method of it (those the console
	// asks for by interface too) is there; the reads below are shared.
	*store.DB

	mu     sync.Mutex
	gen    uint64
	reads  map[string]*sharedRead
	subs   map[*sharedSub]struct{}
	closed bool
	stop   func()
	done   chan struct{}
}

type sharedRead struct {
	ready chan struct{}
	val   any
	err   error
	// waiters are the callers waiting for it, under SharedStore.mu;
	// cancel gives the read up when the last of them does.
	waiters int
	cancel  context.CancelFunc
}

type sharedSub struct {
	ch       chan store.Change
	overflow bool
}

// sharedBuffer is how many changes a console may lag behind before they
// become one Overflow change (as the store's own subscriptions do).
const sharedBuffer = 64

// relayWindow is how long the SharedStore gathers the changes of a stream
// before it hands them on (the first change after a quiet relayWindow goes
// on at once). A read is shared within a generation, and at a thousand
// pushes a second every change was one: the consoles, reloading together
// after their windows, each read everything alone. Handed on in tenths of
// a second, the changes leave the consoles a generation to share.
const relayWindow = 100 * time.Millisecond

// NewSharedStore wraps db; Stop ends it (and its subscriptions).
func NewSharedStore(db *store.DB) *SharedStore {
	return newSharedStore(db, relayWindow)
}

func newSharedStore(db *store.DB, window time.Duration) *SharedStore {
	ch, stop := db.Subscribe()
	s := &SharedStore{DB: db, reads: map[string]*sharedRead{}, subs: map[*sharedSub]struct{}{}, stop: stop, done: make(chan struct{})}
	go s.relay(ch, window)
	return s
}

// relay hands the changes on, those of a stream gathered for window: it
// forgets the reads of the generation before, then hands the change on.
func (s *SharedStore) relay(ch <-chan store.Change, window time.Duration) {
	defer close(s.done)
	var (
		pending store.Change
		have    bool
		idx     keyIndex
		timer   = time.NewTimer(window)
		last    time.Time // when the last change was handed on
	)
	timer.Stop()
	defer timer.Stop()
	handOn := func(c store.Change) {
		s.mu.Lock()
		s.gen++
		clear(s.reads)
		for sub := range s.subs {
			sub.send(c)
		}
		s.mu.Unlock()
		last = time.Now()
	}
	for open := true; open; {
		select {
		case c, ok := <-ch:
			switch {
			case !ok:
				open = false
			case have:
				pending = mergeIndexed(pending, c, &idx)
			case last.IsZero() || time.Since(last) >= window:
				handOn(c) // after a quiet spell: at once
			default:
				pending, have, idx = c, true, keyIndex{}
				timer.Reset(window)
			}
		case <-timer.C:
			handOn(pending)
			pending, have = store.Change{}, false
		}
	}
	if have {
		handOn(pending)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for sub := range s.subs {
		close(sub.ch)
		delete(s.subs, sub)
	}
}

func (sub *sharedSub) send(c store.Change) {
	if sub.overflow {
		c.Overflow = true
	}
	select {
	case sub.ch <- c:
		sub.overflow = false
	default:
		sub.overflow = true
	}
}

// Stop stops hearing the store; the consoles' subscriptions end. (The
// store itself stays open: it is not the SharedStore's.)
func (s *SharedStore) Stop() {
	s.stop()
	<-s.done
}

// Subscribe is a subscription to the store's changes, handed on after the
// shared reads of the generation before were forgotten.
func (s *SharedStore) Subscribe() (<-chan store.Change, func()) {
	sub := &sharedSub{ch: make(chan store.Change, sharedBuffer)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		close(sub.ch)
		return sub.ch, func() {}
	}
	s.subs[sub] = struct{}{}
	var once sync.Once
	return sub.ch, func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if _, ok := s.subs[sub]; ok {
				delete(s.subs, sub)
				close(sub.ch)
			}
		})
	}
}

// shared runs read once per generation and key, on a goroutine of its
// own, for every console asking for it meanwhile. Its context is the
// first caller's without its cancel: one console closing, or typing a new
// filter, does not fail the others' read. When every caller has given up
// waiting (each console's question changed), the read is cancelled and
// forgotten, so that a count nobody waits for stops (on PostgreSQL the
// server stops it) and the next caller reads afresh.
func shared[T any](ctx context.Context, s *SharedStore, key string, read func(context.Context) (T, error)) (T, error) {
	s.mu.Lock()
	r, ok := s.reads[key]
	if !ok {
		rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		r = &sharedRead{ready: make(chan struct{}), cancel: cancel}
		s.reads[key] = r
		gen := s.gen
		go func() {
			defer cancel()
			v, err := read(rctx)
			r.val, r.err = v, err
			close(r.ready)
			if err != nil {
				// An error is not kept: the next console asks again.
				s.mu.Lock()
				if s.gen == gen && s.reads[key] == r {
					delete(s.reads, key)
				}
				s.mu.Unlock()
			}
		}()
	}
	r.waiters++
	s.mu.Unlock()
	select {
	case <-r.ready:
		s.mu.Lock()
		r.waiters--
		s.mu.Unlock()
		v, _ := r.val.(T)
		return v, r.err
	case <-ctx.Done():
		s.mu.Lock()
		r.waiters--
		if r.waiters == 0 && s.reads[key] == r {
			select {
			case <-r.ready: // done meanwhile: kept for the others
			default:
				r.cancel()
				delete(s.reads, key)
			}
		}
		s.mu.Unlock()
		var zero T
		return zero, ctx.Err()
	}
}

func (s *SharedStore) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	p, err := shared(ctx, s, fmt.Sprintf("ReservationPage %#v", q), func(ctx context.Context) (store.Page, error) { return s.DB.ReservationPage(ctx, q) })
	p.Rows = slices.Clone(p.Rows)
	return p, err
}

func (s *SharedStore) ReservationCount(ctx context.Context, q store.PageQuery) (int, error) {
	return shared(ctx, s, fmt.Sprintf("ReservationCount %#v", q), func(ctx context.Context) (int, error) { return s.DB.ReservationCount(ctx, q) })
}

func (s *SharedStore) TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error) {
	p, err := shared(ctx, s, fmt.Sprintf("TransactionPage %#v", q), func(ctx context.Context) (store.TxPage, error) { return s.DB.TransactionPage(ctx, q) })
	p.Rows = slices.Clone(p.Rows)
	return p, err
}

func (s *SharedStore) TransactionCount(ctx context.Context, q store.PageQuery) (int, error) {
	return shared(ctx, s, fmt.Sprintf("TransactionCount %#v", q), func(ctx context.Context) (int, error) { return s.DB.TransactionCount(ctx, q) })
}

func (s *SharedStore) Pushes(ctx context.Context, limit int, beforeID uint64) ([]*store.PushRecord, error) {
	ps, err := shared(ctx, s, fmt.Sprintf("Pushes %d %d", limit, beforeID), func(ctx context.Context) ([]*store.PushRecord, error) { return s.DB.Pushes(ctx, limit, beforeID) })
	return slices.Clone(ps), err
}

func (s *SharedStore) RejectedPushes(ctx context.Context, limit int) ([]*store.PushRecord, error) {
	ps, err := shared(ctx, s, fmt.Sprintf("RejectedPushes %d", limit), func(ctx context.Context) ([]*store.PushRecord, error) { return s.DB.RejectedPushes(ctx, limit) })
	return slices.Clone(ps), err
}

func (s *SharedStore) Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error) {
	ops, err := shared(ctx, s, fmt.Sprintf("Ops %v", states), func(ctx context.Context) ([]*store.PendingOp, error) { return s.DB.Ops(ctx, states...) })
	return slices.Clone(ops), err
}

func (s *SharedStore) Audit(ctx context.Context, limit int) ([]store.AuditEntry, error) {
	es, err := shared(ctx, s, fmt.Sprintf("Audit %d", limit), func(ctx context.Context) ([]store.AuditEntry, error) { return s.DB.Audit(ctx, limit) })
	return slices.Clone(es), err
}

func (s *SharedStore) Exchanges(ctx context.Context, limit int) ([]store.Exchange, error) {
	xs, err := shared(ctx, s, fmt.Sprintf("Exchanges %d", limit), func(ctx context.Context) ([]store.Exchange, error) { return s.DB.Exchanges(ctx, limit) })
	return slices.Clone(xs), err
}

// PushPage, PushCount and PushReceiptsOf are the push log's window, read
// again by every console after each change (the log is the store's
// views.PushSource): shared like the other lists.
func (s *SharedStore) PushPage(ctx context.Context, q store.PushQuery) (store.PushPage, error) {
	p, err := shared(ctx, s, fmt.Sprintf("PushPage %#v", q), func(ctx context.Context) (store.PushPage, error) { return s.DB.PushPage(ctx, q) })
	p.Rows = slices.Clone(p.Rows)
	return p, err
}

func (s *SharedStore) PushCount(ctx context.Context, q store.PushQuery) (int, error) {
	return shared(ctx, s, fmt.Sprintf("PushCount %#v", q), func(ctx context.Context) (int, error) { return s.DB.PushCount(ctx, q) })
}

func (s *SharedStore) PushReceiptsOf(ctx context.Context, ps []*store.PushRecord) (map[uint64]store.PushReceipts, error) {
	var key strings.Builder
	key.WriteString("PushReceiptsOf")
	for _, p := range ps {
		fmt.Fprintf(&key, " %d", p.ID)
	}
	m, err := shared(ctx, s, key.String(), func(ctx context.Context) (map[uint64]store.PushReceipts, error) {
		return s.DB.PushReceiptsOf(ctx, ps)
	})
	return maps.Clone(m), err
}

func (s *SharedStore) Counts(ctx context.Context) (store.Counts, error) {
	return shared(ctx, s, "Counts", func(ctx context.Context) (store.Counts, error) { return s.DB.Counts(ctx) })
}

func (s *SharedStore) Reservation(ctx context.Context, ref string) (*store.Reservation, error) {
	return shared(ctx, s, "Reservation "+ref, func(ctx context.Context) (*store.Reservation, error) { return s.DB.Reservation(ctx, ref) })
}

func (s *SharedStore) Transaction(ctx context.Context, key string) (*store.Transaction, error) {
	return shared(ctx, s, "Transaction "+key, func(ctx context.Context) (*store.Transaction, error) { return s.DB.Transaction(ctx, key) })
}
