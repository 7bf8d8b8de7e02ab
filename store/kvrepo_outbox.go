package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

// The outbox in buckets: bDelivery holds id → Delivery (codec_outbox.go), bDeliveryOpen
// id → nil for the open ones. The buckets are made by the first delivery
// recorded: a cache that never forwarded has none, and an older paydesk
// opening the file is not troubled by them (no layout version for it).
var (
	bDelivery     = []byte("deliveries")
	bDeliveryOpen = []byte("deliveriesopen")
)

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
	fillPages(b)
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
	return id, k.PutDelivery(d)
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
	return decodeDelivery(id, v)
}

func (k *kvTx) PutDelivery(d *Delivery) error {
	b, err := k.outboxBucket(bDelivery)
	if err != nil {
		return err
	}
	if err := b.Put(u64(d.ID), encodeDelivery(d)); err != nil {
		return err
	}
	open, err := k.outboxBucket(bDeliveryOpen)
	if err != nil {
		return err
	}
	if d.State.IsOpen() {
		// The value (next attempt, endpoint 0x00 key) spares the worker
		// decoding the deliveries that are not due (NextDeliveries).
		var next uint64 // a zero NextAt is due at once
		if !d.NextAt.IsZero() {
			next = uint64(d.NextAt.UnixNano())
		}
		v := binary.BigEndian.AppendUint64(nil, next)
		return open.Put(u64(d.ID), append(v, pairKey(d.Endpoint, d.Key)...))
	}
	return open.Delete(u64(d.ID))
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
			return nil, fmt.Errorf("open delivery %d: %w", be64(key), errCorrupt)
		}
		ep, dk, _ := bytes.Cut(v[8:], []byte{0})
		out = append(out, OpenDelivery{ID: be64(key), Endpoint: string(ep), Key: string(dk),
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
		d, err := decodeDelivery(be64(key), v)
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
	b, err := pushBody(v)
	if err != nil {
		return nil, fmt.Errorf("push %d: %w", id, err)
	}
	return b, nil
}
