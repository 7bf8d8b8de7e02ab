package kv

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Repeated receipts in buckets: bPushReceipts holds, per push ID, a head
// (the 8-byte ID → count, first and last repeat) and a ring of slots (the
// ID and a slot byte → one receipt), slot = repeat number mod keep. A repeat
// reads the 24-byte head and writes it and one slot: its cost does not
// grow with what is kept, and a push repeated for ever holds keep slots.
// The bucket is made by the first repeat: a cache that never saw one has
// none (no layout version for it), and reading it then costs nothing.
var bPushReceipts = []byte("pushreceipts")

const receiptHeadLen = 24

func receiptSlotKey(id uint64, slot int) []byte {
	return append(u64(id), byte(slot))
}

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
		if rep, err = decodeReceiptHead(ref.ID, v); err != nil {
			return err
		}
	}
	slot := int(uint64(rep.Count) % uint64(keep))
	rep.Add(r, 0)
	if err := b.Put(receiptSlotKey(ref.ID, slot), encodeReceipt(r)); err != nil {
		return err
	}
	return b.Put(head, encodeReceiptHead(&rep))
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
		rep, err := decodeReceiptHead(ref.ID, v)
		if err != nil {
			return nil, err
		}
		// The newest MaxPushReceipts, oldest first: repeat i sits in slot
		// i mod MaxPushReceipts.
		n := min(rep.Count, MaxPushReceipts)
		for i := rep.Count - n; i < rep.Count; i++ {
			s := b.Get(receiptSlotKey(ref.ID, int(uint64(i)%MaxPushReceipts)))
			if s == nil {
				continue // lost: the count still tells
			}
			r, err := decodeReceipt(ref.ID, s)
			if err != nil {
				return nil, err
			}
			rep.Recent = append(rep.Recent, r)
		}
		out[ref.ID] = &rep
	}
	return out, nil
}

func encodeReceiptHead(rep *PushRepeats) []byte {
	b := make([]byte, receiptHeadLen)
	binary.BigEndian.PutUint64(b, uint64(rep.Count))
	binary.BigEndian.PutUint64(b[8:], uint64(unixNano(rep.First)))
	binary.BigEndian.PutUint64(b[16:], uint64(unixNano(rep.Last)))
	return b
}

// decodeReceiptHead reads a stored head; a count that is not positive is
// a damaged record.
func decodeReceiptHead(id uint64, v []byte) (PushRepeats, error) {
	if len(v) != receiptHeadLen {
		return PushRepeats{}, fmt.Errorf("push %d: receipts: a head of %d bytes, want %d", id, len(v), receiptHeadLen)
	}
	n := int64(binary.BigEndian.Uint64(v))
	if n <= 0 {
		return PushRepeats{}, fmt.Errorf("push %d: receipts: count %d, want at least 1", id, n)
	}
	return PushRepeats{Count: n, First: timeOfNano(int64(binary.BigEndian.Uint64(v[8:]))),
		Last: timeOfNano(int64(binary.BigEndian.Uint64(v[16:])))}, nil
}

// encodeReceipt is a slot: the time (Unix ns), then the verdict and the
// remote address, each with its length (uvarint).
func encodeReceipt(r PushReceipt) []byte {
	b := make([]byte, 8, 8+2+len(r.Signature)+len(r.RemoteAddr)+4)
	binary.BigEndian.PutUint64(b, uint64(unixNano(r.At)))
	b = binary.AppendUvarint(b, uint64(len(r.Signature)))
	b = append(b, r.Signature...)
	b = binary.AppendUvarint(b, uint64(len(r.RemoteAddr)))
	return append(b, r.RemoteAddr...)
}

func decodeReceipt(id uint64, v []byte) (PushReceipt, error) {
	bad := func(what string) (PushReceipt, error) {
		return PushReceipt{}, fmt.Errorf("push %d: receipt: %s", id, what)
	}
	if len(v) < 8 {
		return bad("shorter than its time")
	}
	r := PushReceipt{At: timeOfNano(int64(binary.BigEndian.Uint64(v)))}
	v = v[8:]
	for _, f := range []*string{&r.Signature, &r.RemoteAddr} {
		n, k := binary.Uvarint(v)
		if k <= 0 || n > uint64(len(v)-k) {
			return bad("a text longer than the record")
		}
		*f, v = string(v[k:k+int(n)]), v[k+int(n):]
	}
	if len(v) != 0 {
		return bad("bytes after its end")
	}
	return r, nil
}

// unixNano is t in Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// timeOfNano is unixNano's inverse, in UTC.
func timeOfNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
