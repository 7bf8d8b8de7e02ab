package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"paydesk/store/kvlayout"
)

// The outbox in buckets: bDelivery holds id → Delivery (kvlayout/delivery.go), bDeliveryOpen
// id → nil for the open ones. The buckets are made by the first delivery
// recorded: a cache that never forwarded has none, and an older paydesk
// opening the file is not troubled by them (no layout version for it).
//
// Two indexes spare the worker reading every open delivery each time it
// looks (after every push stored: with a shop down for a day that was a
// scan of all of them per push): bDeliveryChain holds every open delivery
// by endpoint and key (chainKey → nil), bDeliveryDue the oldest open one
// of each endpoint and key — the only one that may go — by its next
// attempt (next attempt, id → nil). A file whose open deliveries were
// recorded without them gets them with the next delivery written.
var (
	bDelivery      = kvlayout.BDelivery
	bDeliveryOpen  = kvlayout.BDeliveryOpen
	bDeliveryChain = kvlayout.BDeliveryChain
	bDeliveryDue   = kvlayout.BDeliveryDue
)

// kForwardTo is the meta key of the store's forward endpoints: their
// URLs joined by newlines (a URL holds no control character: CheckEndpoint
// refuses one), absent when there are none.
var kForwardTo = kvlayout.KForwardTo

func (k *kvTx) ForwardTo() ([]string, error) {
	m := k.tx.Bucket(bMeta)
	if m == nil {
		return nil, nil
	}
	return kvlayout.DecodeForwardTo(m.Get(kForwardTo))
}

func (k *kvTx) SetForwardTo(endpoints []string) error {
	m := k.tx.Bucket(bMeta)
	if m == nil {
		return fmt.Errorf("forward-to: no meta bucket: %w", kvlayout.ErrCorrupt)
	}
	if len(endpoints) == 0 {
		return m.Delete(kForwardTo)
	}
	for _, ep := range endpoints {
		if ep == "" || strings.ContainsAny(ep, "\n\r") {
			return fmt.Errorf("forward-to %q: an endpoint is one line, not empty", ep)
		}
	}
	return m.Put(kForwardTo, []byte(strings.Join(endpoints, "\n")))
}

// outboxBucket returns the bucket for writing, made on first use. Both
// take new IDs at their end only, so their pages are filled before they
// split (a half-full page left behind is never filled again).
func (k *kvTx) outboxBucket(name []byte) (Bucket, error) {
	b := k.tx.Bucket(name)
	if b == nil {
		var err error
		if b, err = k.tx.CreateBucketIfNotExists(name); err != nil {
			return nil, err
		}
	}
	FillPages(b)
	return b, nil
}

func (k *kvTx) AppendDelivery(d *Delivery) (uint64, error) {
	b, err := k.outboxBucket(bDelivery)
	if err != nil {
		return 0, err
	}
	id, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	d.ID = id
	return id, k.putDelivery(d, true)
}

func (k *kvTx) Delivery(id uint64) (*Delivery, error) {
	b := k.tx.Bucket(bDelivery)
	if b == nil {
		return nil, nil
	}
	v := b.Get(u64(id))
	if v == nil {
		return nil, nil
	}
	return kvlayout.DecodeDelivery(id, v)
}

func (k *kvTx) PutDelivery(d *Delivery) error { return k.putDelivery(d, false) }

// putDelivery writes d; newest says that d's ID is above every other
// delivery's (AppendDelivery).
func (k *kvTx) putDelivery(d *Delivery, newest bool) error {
	b, err := k.outboxBucket(bDelivery)
	if err != nil {
		return err
	}
	if err := b.Put(u64(d.ID), kvlayout.EncodeDelivery(d)); err != nil {
		return err
	}
	open, err := k.outboxBucket(bDeliveryOpen)
	if err != nil {
		return err
	}
	chain, due, err := k.outboxIndexes(open)
	if err != nil {
		return err
	}
	prefix := chainPrefix(d.Endpoint, d.Key)
	before, err := chainHead(chain, open, prefix)
	if err != nil {
		return err
	}
	if d.State.IsOpen() {
		// The value (next attempt, endpoint 0x00 key) spares the worker
		// decoding the deliveries that are not due (NextDeliveries).
		v := binary.BigEndian.AppendUint64(nil, nextKey(d.NextAt))
		if err := open.Put(u64(d.ID), append(v, pairKey(d.Endpoint, d.Key)...)); err != nil {
			return err
		}
		if err := chain.Put(binary.BigEndian.AppendUint64(prefix, d.ID), nil); err != nil {
			return err
		}
	} else {
		if err := open.Delete(u64(d.ID)); err != nil {
			return err
		}
		if err := chain.Delete(binary.BigEndian.AppendUint64(prefix, d.ID)); err != nil {
			return err
		}
	}
	if newest && before != nil {
		// A new delivery goes behind the chain's head, which stays: the
		// look at the head again (a seek and a read) is spared on the
		// push's path.
		return nil
	}
	if newest && d.State.IsOpen() {
		// The first open one of its chain (a new key, the common case):
		// it is the head, no seek needed to find it.
		return due.Put(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), nextKey(d.NextAt)), d.ID), nil)
	}
	// The chain's head (its oldest open delivery) may have changed, or
	// its next attempt: the due index holds the head as it is now.
	after, err := chainHead(chain, open, prefix)
	if err != nil {
		return err
	}
	if bytes.Equal(before, after) {
		return nil
	}
	if before != nil {
		if err := due.Delete(before); err != nil {
			return err
		}
	}
	if after != nil {
		return due.Put(after, nil)
	}
	return nil
}

// nextKey is a next attempt as the indexes order it: Unix nanoseconds,
// a zero NextAt (due at once) as 0.
func nextKey(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

// chainPrefix is the start of the chain keys of an endpoint and key:
// both length-prefixed, as a key may hold any byte.
func chainPrefix(endpoint, key string) []byte {
	p := make([]byte, 0, 2*binary.MaxVarintLen64+len(endpoint)+len(key)+8)
	p = binary.AppendUvarint(p, uint64(len(endpoint)))
	p = append(p, endpoint...)
	p = binary.AppendUvarint(p, uint64(len(key)))
	return append(p, key...)
}

// chainHead is the due index's key (next attempt, id) of the oldest open
// delivery under prefix, nil when none is open.
func chainHead(chain, open Bucket, prefix []byte) ([]byte, error) {
	c := chain.Cursor()
	key, _ := c.Seek(prefix)
	if key == nil || len(key) != len(prefix)+8 || !bytes.HasPrefix(key, prefix) {
		return nil, nil
	}
	id := key[len(prefix):]
	v := open.Get(id)
	if len(v) < 8 {
		return nil, fmt.Errorf("open delivery %d: not in the open ones: %w", kvlayout.Be64(id), kvlayout.ErrCorrupt)
	}
	return append(append(make([]byte, 0, 16), v[:8]...), id...), nil
}

// outboxIndexes returns the chain and due buckets for writing; a file
// with open deliveries recorded before them gets them built here, once.
func (k *kvTx) outboxIndexes(open Bucket) (chain, due Bucket, err error) {
	if chain, due = k.tx.Bucket(bDeliveryChain), k.tx.Bucket(bDeliveryDue); chain != nil && due != nil {
		return chain, due, nil
	}
	if chain, err = k.outboxBucket(bDeliveryChain); err != nil {
		return nil, nil, err
	}
	if due, err = k.outboxBucket(bDeliveryDue); err != nil {
		return nil, nil, err
	}
	// Ascending by ID: the first of each endpoint and key is its head.
	c := open.Cursor()
	for id, v := c.First(); id != nil; id, v = c.Next() {
		if len(v) < 8 {
			return nil, nil, fmt.Errorf("open delivery %d: %w", kvlayout.Be64(id), kvlayout.ErrCorrupt)
		}
		ep, dk, _ := bytes.Cut(v[8:], []byte{0})
		prefix := chainPrefix(string(ep), string(dk))
		head, err := chainHead(chain, open, prefix)
		if err != nil {
			return nil, nil, err
		}
		if err := chain.Put(append(prefix, id...), nil); err != nil {
			return nil, nil, err
		}
		if head == nil {
			if err := due.Put(append(append([]byte(nil), v[:8]...), id...), nil); err != nil {
				return nil, nil, err
			}
		}
	}
	return chain, due, nil
}

// DueDeliveries is what NextDeliveries needs of the open deliveries,
// read from the due index: the oldest open delivery of each endpoint and
// key whose next attempt has come (up to limit; ≤ 0: all), ascending by
// ID, and the earliest next attempt of the others (zero: none waits).
// ok is false on a file whose open deliveries are not indexed yet: the
// caller reads them all (OpenDeliveries).
func (k *kvTx) DueDeliveries(now time.Time, limit int) (due []OpenDelivery, next time.Time, ok bool, err error) {
	idx, open := k.tx.Bucket(bDeliveryDue), k.tx.Bucket(bDeliveryOpen)
	if idx == nil {
		if open == nil {
			return nil, time.Time{}, true, nil
		}
		return nil, time.Time{}, false, nil
	}
	until := nextKey(now)
	c := idx.Cursor()
	for key, _ := c.First(); key != nil; key, _ = c.Next() {
		if len(key) != 16 {
			return nil, time.Time{}, true, fmt.Errorf("due delivery: %w", kvlayout.ErrCorrupt)
		}
		at := binary.BigEndian.Uint64(key[:8])
		if at > until {
			next = time.Unix(0, int64(at)).UTC()
			break
		}
		if limit > 0 && len(due) >= limit {
			// Enough for one round; next only matters once none is due.
			break
		}
		id := key[8:]
		v := open.Get(id)
		if len(v) < 8 {
			return nil, time.Time{}, true, fmt.Errorf("due delivery %d: not open: %w", kvlayout.Be64(id), kvlayout.ErrCorrupt)
		}
		ep, dk, _ := bytes.Cut(v[8:], []byte{0})
		var at0 time.Time
		if at > 0 {
			at0 = time.Unix(0, int64(at)).UTC()
		}
		due = append(due, OpenDelivery{ID: kvlayout.Be64(id), Endpoint: string(ep), Key: string(dk), NextAt: at0})
	}
	slices.SortFunc(due, func(a, b OpenDelivery) int { return cmp.Compare(a.ID, b.ID) })
	return due, next, true, nil
}

func (k *kvTx) OpenDeliveries() ([]OpenDelivery, error) {
	open := k.tx.Bucket(bDeliveryOpen)
	if open == nil {
		return nil, nil
	}
	var out []OpenDelivery
	c := open.Cursor()
	for key, v := c.First(); key != nil; key, v = c.Next() {
		if len(v) < 8 {
			return nil, fmt.Errorf("open delivery %d: %w", kvlayout.Be64(key), kvlayout.ErrCorrupt)
		}
		ep, dk, _ := bytes.Cut(v[8:], []byte{0})
		out = append(out, OpenDelivery{ID: kvlayout.Be64(key), Endpoint: string(ep), Key: string(dk),
			NextAt: time.Unix(0, int64(binary.BigEndian.Uint64(v[:8]))).UTC()})
	}
	return out, nil
}

func (k *kvTx) DeliveriesBefore(before uint64, limit int) ([]*Delivery, error) {
	b := k.tx.Bucket(bDelivery)
	if b == nil {
		return nil, nil
	}
	var out []*Delivery
	c := b.Cursor()
	var key, v []byte
	if before == 0 {
		key, v = c.Last()
	} else {
		if key, _ = c.Seek(u64(before)); key == nil {
			key, v = c.Last() // every ID is below before
		} else {
			key, v = c.Prev()
		}
	}
	for ; key != nil && (limit <= 0 || len(out) < limit); key, v = c.Prev() {
		d, err := kvlayout.DecodeDelivery(kvlayout.Be64(key), v)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// PushBody is the body of the push with that ID, nil when there is none
// (NextDeliveries: the rest of the record is not decoded).
func (k *kvTx) PushBody(id uint64) ([]byte, error) {
	v := k.tx.Bucket(bPush).Get(u64(id))
	if v == nil {
		return nil, nil
	}
	b, err := kvlayout.PushBody(v)
	if err != nil {
		return nil, fmt.Errorf("push %d: %w", id, err)
	}
	return b, nil
}
