package store

import (
	"encoding/json"
	"fmt"
)

// The outbox in buckets: bDelivery holds id → Delivery (JSON), bDeliveryOpen
// id → nil for the open ones. The buckets are made by the first delivery
// recorded: a cache that never forwarded has none, and an older paydesk
// opening the file is not troubled by them (no layout version for it).
var (
	bDelivery     = []byte("deliveries")
	bDeliveryOpen = []byte("deliveriesopen")
)

// outboxBucket returns the bucket for writing, made on first use.
func (k *kvTx) outboxBucket(name []byte) (Bucket, error) {
	if b := k.tx.Bucket(name); b != nil {
		return b, nil
	}
	return k.tx.CreateBucketIfNotExists(name)
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

func decodeDelivery(id uint64, v []byte) (*Delivery, error) {
	var d Delivery
	if err := json.Unmarshal(v, &d); err != nil {
		return nil, fmt.Errorf("delivery %d: %w", id, err)
	}
	return &d, nil
}

func (k *kvTx) PutDelivery(d *Delivery) error {
	v, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("delivery %d: %w", d.ID, err)
	}
	b, err := k.outboxBucket(bDelivery)
	if err != nil {
		return err
	}
	if err := b.Put(u64(d.ID), v); err != nil {
		return err
	}
	open, err := k.outboxBucket(bDeliveryOpen)
	if err != nil {
		return err
	}
	if d.State.IsOpen() {
		return open.Put(u64(d.ID), nil)
	}
	return open.Delete(u64(d.ID))
}

func (k *kvTx) OpenDeliveries() ([]*Delivery, error) {
	open, all := k.tx.Bucket(bDeliveryOpen), k.tx.Bucket(bDelivery)
	if open == nil || all == nil {
		return nil, nil
	}
	var out []*Delivery
	c := open.Cursor()
	for key, _ := c.First(); key != nil; key, _ = c.Next() {
		v := all.Get(key)
		if v == nil {
			continue
		}
		d, err := decodeDelivery(be64(key), v)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
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
