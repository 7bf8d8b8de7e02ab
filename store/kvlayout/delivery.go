package kvlayout

import (
	"encoding/json"
	"fmt"
	"time"

	"paydesk/store/domain"
)

// A delivery in a bucket is written twice for every push forwarded (in
// the push's commit, and with its first attempt), inside the single
// writer: JSON cost the listener a tenth of its CPU there, so it is kept
// in the binary form of the other hot records. Records written as JSON
// by an earlier paydesk (they start with '{') are still read.

// maxAttemptsDecoded bounds the attempts a stored record may claim: a
// damaged count must not make the reader allocate gigabytes.
const maxAttemptsDecoded = 4 * domain.MaxAttemptsKept

// EncodeDelivery is a delivery's binary form.
func EncodeDelivery(d *domain.Delivery) []byte {
	size := 64 + len(d.Key) + len(d.Endpoint) + len(d.State)
	for _, a := range d.Attempts {
		size += 32 + len(a.Error) + len(a.Excerpt)
	}
	e := enc{b: make([]byte, 0, size)}
	e.byte(codecV1)
	e.uvarint(d.ID)
	e.uvarint(d.PushID)
	e.str(d.Key)
	e.str(d.Endpoint)
	e.time(d.Created)
	e.str(string(d.State))
	e.time(d.NextAt)
	e.time(d.DeliveredAt)
	e.uvarint(uint64(max(d.Resent, 0)))
	e.uvarint(uint64(max(d.Tries, 0)))
	e.uvarint(uint64(len(d.Attempts)))
	for _, a := range d.Attempts {
		e.time(a.At)
		e.varint(int64(a.Status))
		e.str(a.Error)
		e.varint(int64(a.Latency))
		e.str(a.Excerpt)
	}
	return e.b
}

// DecodeDelivery reads a delivery stored under id, binary or JSON.
func DecodeDelivery(id uint64, v []byte) (*domain.Delivery, error) {
	if len(v) > 0 && v[0] == '{' {
		var d domain.Delivery
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("delivery %d: %w", id, err)
		}
		return &d, nil
	}
	d, err := decodeDeliveryBinary(v)
	if err != nil {
		return nil, fmt.Errorf("delivery %d: %w", id, err)
	}
	return d, nil
}

func decodeDeliveryBinary(v []byte) (*domain.Delivery, error) {
	dc := decoder{b: v, s: string(v)}
	if dc.byte() != codecV1 {
		return nil, ErrCorrupt
	}
	d := &domain.Delivery{ID: dc.uvarint(), PushID: dc.uvarint(), Key: dc.str(), Endpoint: dc.str(), Created: utc(dc.time()),
		State: domain.DeliveryState(dc.str()), NextAt: utc(dc.time()), DeliveredAt: utc(dc.time())}
	resent, tries := dc.uvarint(), dc.uvarint()
	n := dc.uvarint()
	// Each attempt takes at least five bytes.
	if dc.err != nil || resent > 1<<31 || tries > 1<<31 || n > maxAttemptsDecoded || n > uint64(len(dc.b))/5 {
		return nil, ErrCorrupt
	}
	d.Resent, d.Tries = int(resent), int(tries)
	if n > 0 {
		d.Attempts = make([]domain.Attempt, 0, n)
	}
	for range n {
		d.Attempts = append(d.Attempts, domain.Attempt{At: utc(dc.time()), Status: int(dc.varint()), Error: dc.str(),
			Latency: time.Duration(dc.varint()), Excerpt: dc.str()})
	}
	if dc.err != nil || len(dc.b) != 0 {
		return nil, ErrCorrupt
	}
	return d, nil
}

// utc is t in UTC, the zero time left zero (as the JSON form read back).
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// PushBody reads only the body of a stored push (DecodePush's layout up to
// it): the worker sends the body and needs none of the rest, whose header
// map and strings cost it more than the delivery itself.
func PushBody(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == pushV2 {
		return pushBodyV2(b)
	}
	d := decoder{b: b}
	if d.byte() != codecV1 {
		return nil, ErrCorrupt
	}
	d.skipPushRequest()
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return nil, ErrCorrupt
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		d.raw()
		m := d.uvarint()
		if m > uint64(len(d.b)) {
			return nil, ErrCorrupt
		}
		for j := uint64(0); j < m && d.err == nil; j++ {
			d.raw()
		}
	}
	body := d.bytes()
	if d.err != nil {
		return nil, d.err
	}
	return body, nil
}
