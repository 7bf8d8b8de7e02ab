package store

import (
	"encoding/json"
	"fmt"
)

// Repeated receipts in buckets: bPushReceipts holds push ID → PushRepeats
// (JSON). The bucket is made by the first repeat recorded: a cache that
// never saw one has none (no layout version for it), and reading it then
// costs nothing.
var bPushReceipts = []byte("pushreceipts")

func (k *kvTx) AddPushReceipt(ref PushRef, r PushReceipt, keep int) error {
	b, err := k.outboxBucket(bPushReceipts)
	if err != nil {
		return err
	}
	var rep PushRepeats
	if v := b.Get(u64(ref.ID)); v != nil {
		if err := decodePushRepeats(ref.ID, v, &rep); err != nil {
			return err
		}
	}
	rep.add(r, keep)
	v, err := json.Marshal(&rep)
	if err != nil {
		return fmt.Errorf("push %d: receipts: %w", ref.ID, err)
	}
	return b.Put(u64(ref.ID), v)
}

func (k *kvTx) PushRepeatsOf(refs []PushRef) (map[uint64]*PushRepeats, error) {
	b := k.tx.Bucket(bPushReceipts)
	if b == nil {
		return nil, nil
	}
	out := map[uint64]*PushRepeats{}
	for _, ref := range refs {
		v := b.Get(u64(ref.ID))
		if v == nil {
			continue
		}
		rep := &PushRepeats{}
		if err := decodePushRepeats(ref.ID, v, rep); err != nil {
			return nil, err
		}
		out[ref.ID] = rep
	}
	return out, nil
}

// decodePushRepeats reads a stored PushRepeats, holding it to its bound
// (a record written by hand or damaged may hold more).
func decodePushRepeats(id uint64, v []byte, rep *PushRepeats) error {
	if err := json.Unmarshal(v, rep); err != nil {
		return fmt.Errorf("push %d: receipts: %w", id, err)
	}
	if n := len(rep.Recent); n > MaxPushReceipts {
		rep.Recent = rep.Recent[n-MaxPushReceipts:]
	}
	if rep.Count < int64(len(rep.Recent)) {
		rep.Count = int64(len(rep.Recent))
	}
	return nil
}
