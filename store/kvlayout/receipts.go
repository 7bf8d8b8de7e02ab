package kvlayout

import (
	"encoding/binary"
	"fmt"
	"time"

	"paydesk/store/domain"
)

// BPushReceipts holds a stored push's repeated receipts (store/kv's
// kvrepo_receipts.go): per push ID a head (ReceiptHeadLen bytes: the
// count, the first and the last repeat) and a ring of slots under the ID
// and a slot byte, one receipt each.
var BPushReceipts = []byte("pushreceipts")

// ReceiptHeadLen is the length of a receipts head.
const ReceiptHeadLen = 24

// ReceiptSlotKey is the key of a push's receipt slot.
func ReceiptSlotKey(id uint64, slot int) []byte {
	return append(binary.BigEndian.AppendUint64(nil, id), byte(slot))
}

func EncodeReceiptHead(rep *domain.PushRepeats) []byte {
	b := make([]byte, ReceiptHeadLen)
	binary.BigEndian.PutUint64(b, uint64(rep.Count))
	binary.BigEndian.PutUint64(b[8:], uint64(unixNano(rep.First)))
	binary.BigEndian.PutUint64(b[16:], uint64(unixNano(rep.Last)))
	return b
}

// DecodeReceiptHead reads a stored head; a count that is not positive is
// a damaged record.
func DecodeReceiptHead(id uint64, v []byte) (domain.PushRepeats, error) {
	if len(v) != ReceiptHeadLen {
		return domain.PushRepeats{}, fmt.Errorf("push %d: receipts: a head of %d bytes, want %d", id, len(v), ReceiptHeadLen)
	}
	n := int64(binary.BigEndian.Uint64(v))
	if n <= 0 {
		return domain.PushRepeats{}, fmt.Errorf("push %d: receipts: count %d, want at least 1", id, n)
	}
	return domain.PushRepeats{Count: n, First: timeOfNano(int64(binary.BigEndian.Uint64(v[8:]))),
		Last: timeOfNano(int64(binary.BigEndian.Uint64(v[16:])))}, nil
}

// EncodeReceipt is a slot: the time (Unix ns), then the verdict and the
// remote address, each with its length (uvarint).
func EncodeReceipt(r domain.PushReceipt) []byte {
	b := make([]byte, 8, 8+2+len(r.Signature)+len(r.RemoteAddr)+4)
	binary.BigEndian.PutUint64(b, uint64(unixNano(r.At)))
	b = binary.AppendUvarint(b, uint64(len(r.Signature)))
	b = append(b, r.Signature...)
	b = binary.AppendUvarint(b, uint64(len(r.RemoteAddr)))
	return append(b, r.RemoteAddr...)
}

func DecodeReceipt(id uint64, v []byte) (domain.PushReceipt, error) {
	bad := func(what string) (domain.PushReceipt, error) {
		return domain.PushReceipt{}, fmt.Errorf("push %d: receipt: %s", id, what)
	}
	if len(v) < 8 {
		return bad("shorter than its time")
	}
	r := domain.PushReceipt{At: timeOfNano(int64(binary.BigEndian.Uint64(v)))}
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
