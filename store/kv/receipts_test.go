package kv

import (
	"paydesk/store/kvlayout"
	"strings"
	"testing"
	"time"
)

// FuzzReceiptDecode: whatever a damaged slot or head holds, decoding it
// returns an error or a record, never a panic; a head counts at least one.
func FuzzReceiptDecode(f *testing.F) {
	f.Add(kvlayout.EncodeReceipt(PushReceipt{At: t0, RemoteAddr: "192.0.2.1:1", Signature: SignatureValid}))
	f.Add(kvlayout.EncodeReceiptHead(&PushRepeats{Count: 1, First: t0, Last: t0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := kvlayout.DecodeReceipt(7, b); err == nil && len(r.RemoteAddr)+len(r.Signature)+8 > len(b) {
			t.Fatalf("decoded more than the record holds: %+v", r)
		}
		if h, err := kvlayout.DecodeReceiptHead(7, b); err == nil && h.Count < 1 {
			t.Fatalf("head with count %d", h.Count)
		}
	})
}

// TestReceiptRecords: the bucket engine's records of receipts read back
// as written, and a damaged one is an error naming the push, never a
// panic or a count below one.
func TestReceiptRecords(t *testing.T) {
	r := PushReceipt{At: t0.Add(time.Nanosecond), RemoteAddr: "[2001:db8::1]:443", Signature: SignatureValid}
	got, err := kvlayout.DecodeReceipt(1, kvlayout.EncodeReceipt(r))
	if err != nil || !got.At.Equal(r.At) || got.RemoteAddr != r.RemoteAddr || got.Signature != r.Signature {
		t.Errorf("receipt read back as %+v (%v), want %+v", got, err, r)
	}
	head := PushRepeats{Count: 3, First: t0, Last: t0.Add(time.Minute)}
	h, err := kvlayout.DecodeReceiptHead(1, kvlayout.EncodeReceiptHead(&head))
	if err != nil || h.Count != 3 || !h.First.Equal(t0) || !h.Last.Equal(t0.Add(time.Minute)) {
		t.Errorf("head read back as %+v (%v), want %+v", h, err, head)
	}
	for _, tc := range []struct {
		name string
		v    []byte
		head bool
	}{
		{"short receipt", []byte{1, 2, 3}, false},
		{"text past the end", append(make([]byte, 8), 9, 'v'), false},
		{"trailing bytes", append(kvlayout.EncodeReceipt(r), 0), false},
		{"short head", make([]byte, 23), true},
		{"zero count", make([]byte, 24), true},
	} {
		var err error
		if tc.head {
			_, err = kvlayout.DecodeReceiptHead(5, tc.v)
		} else {
			_, err = kvlayout.DecodeReceipt(5, tc.v)
		}
		if err == nil || !strings.Contains(err.Error(), "push 5") {
			t.Errorf("%s: %v, want an error naming push 5", tc.name, err)
		}
	}
}
