package kv

import (
	"fmt"
	"paydesk/store/kvlayout"
)

// Repeated receipts in buckets: bPushReceipts holds, per push ID, a head
// (the 8-byte ID → count, first and last repeat) and a ring of slots (the
// ID and a slot byte → one receipt), slot = repeat number mod keep. A repeat
// reads the 24-byte head and writes it and one slot: its cost does not
// grow with what is kept, and a push repeated for ever holds keep slots.
// The bucket is made by the first repeat: a cache that never saw one has
// none (no layout version for it), and reading it then costs nothing.
var bPushReceipts = kvlayout.BPushReceipts

func (k *kvTx) AddPushReceipt(ref PushRef, r PushReceipt, keep int) error {
	if keep < 1 || keep > 255 {
		return fmt.Errorf("push %d: receipts: keep %d, must be 1 to 255 (one slot byte)", ref.ID, keep)
	}
	b, err := k.outboxBucket(bPushReceipts)
	if err != nil {
		return err
	}
	head := u64(ref.ID)
	var rep PushRepeats
	if v := b.Get(head); v != nil {
		if rep, err = kvlayout.DecodeReceiptHead(ref.ID, v); err != nil {
			return err
		}
	}
	slot := int(uint64(rep.Count) % uint64(keep))
	rep.Add(r, 0)
	if err := b.Put(kvlayout.ReceiptSlotKey(ref.ID, slot), kvlayout.EncodeReceipt(r)); err != nil {
		return err
	}
	return b.Put(head, kvlayout.EncodeReceiptHead(&rep))
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
		rep, err := kvlayout.DecodeReceiptHead(ref.ID, v)
		if err != nil {
			return nil, err
		}
		// The newest MaxPushReceipts, oldest first: repeat i sits in slot
		// i mod MaxPushReceipts.
		n := min(rep.Count, MaxPushReceipts)
		for i := rep.Count - n; i < rep.Count; i++ {
			s := b.Get(kvlayout.ReceiptSlotKey(ref.ID, int(uint64(i)%MaxPushReceipts)))
			if s == nil {
				continue // lost: the count still tells
			}
			r, err := kvlayout.DecodeReceipt(ref.ID, s)
			if err != nil {
				return nil, err
			}
			rep.Recent = append(rep.Recent, r)
		}
		out[ref.ID] = &rep
	}
	return out, nil
}
