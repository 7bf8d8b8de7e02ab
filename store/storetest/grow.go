package storetest

import (
	"container/heap"
	"context"
	"fmt"
	"math/rand"
	"time"

	"paydesk/store"
)

// GrowCommit is how many reservations Grow writes a commit: about what a
// listener's group commit or a busy afternoon's orders bring at once.
const GrowCommit = 100

// Grow writes the reservations Generate would, with the same keys, lines,
// states and captures, but as a cache that grows by use gets them: in the
// order they are created (their creation times rise with their invoice and
// reservation numbers, as a shop's do), GrowCommit at a time, and each
// capture in the commit of the moment it happened, after the reservations
// created before it. Generate writes 5,000 reservations a commit at random
// times of the 20 days and their captures at once: its file keeps the
// pages its last big commits freed and has its creation-time index filled
// from every side, which a cache in use does not.
func Grow(db *store.DB, n int, seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	now := db.Now()
	from := now.Add(-span)
	slot := span / time.Duration(max(n, 1))
	var due captures
	put := func(ts []*store.Transaction) error {
		if len(ts) == 0 {
			return nil
		}
		if err := db.PutTransactions(context.Background(), ts); err != nil {
			return fmt.Errorf("grow captures: %w", err)
		}
		return nil
	}
	for start := 0; start < n; start += GrowCommit {
		end := min(n, start+GrowCommit)
		rs := make([]*store.Reservation, 0, end-start)
		var pending []*store.Transaction
		for i := start; i < end; i++ {
			// The i-th of n falls in the i-th slot of the span; where in
			// the slot is the random draw Generate makes.
			r, ts := reservation(rng, i, func(d time.Duration) time.Time {
				return from.Add(time.Duration(i)*slot + d%max(slot, 1))
			})
			rs = append(rs, r)
			pending = append(pending, ts...)
		}
		// The captures made before the first of these reservations.
		if err := put(due.until(rs[0].Created)); err != nil {
			return err
		}
		if err := db.PutReservations(context.Background(), rs); err != nil {
			return fmt.Errorf("grow reservations: %w", err)
		}
		for _, t := range pending {
			heap.Push(&due, t)
		}
	}
	for due.Len() > 0 {
		if err := put(due.next(GrowCommit)); err != nil {
			return err
		}
	}
	return nil
}

// captures is a heap of transactions by creation time, the earliest first.
type captures []*store.Transaction

func (c captures) Len() int           { return len(c) }
func (c captures) Less(i, j int) bool { return c[i].Created.Before(c[j].Created) }
func (c captures) Swap(i, j int)      { c[i], c[j] = c[j], c[i] }
func (c *captures) Push(x any)        { *c = append(*c, x.(*store.Transaction)) }
func (c *captures) Pop() any {
	old := *c
	t := old[len(old)-1]
	*c = old[:len(old)-1]
	return t
}

// until takes the transactions created before t out, in time order.
func (c *captures) until(t time.Time) []*store.Transaction {
	var out []*store.Transaction
	for c.Len() > 0 && (*c)[0].Created.Before(t) {
		out = append(out, heap.Pop(c).(*store.Transaction))
	}
	return out
}

// next takes up to n transactions out, in time order.
func (c *captures) next(n int) []*store.Transaction {
	var out []*store.Transaction
	for c.Len() > 0 && len(out) < n {
		out = append(out, heap.Pop(c).(*store.Transaction))
	}
	return out
}
