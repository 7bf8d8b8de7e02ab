package store

import (
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"time"

	"github.com/shopspring/decimal"
)

// The hot records (summaries, pushes) use a small binary encoding: JSON would
// cost most of the time of loading 100,000 list rows. Each record starts with
// a format byte so a later layout can be read beside this one.

const codecV1 = 1

var errCorrupt = errors.New("corrupt record")

type enc struct{ b []byte }

func (e *enc) byte(c byte)      { e.b = append(e.b, c) }
func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}
func (e *enc) bytes(p []byte) { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *enc) str(s string)   { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

// time as Unix nanoseconds; the zero time as 0 with a flag byte.
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.byte(0)
		return
	}
	e.byte(1)
	e.varint(t.UnixNano())
}

// decimal as coefficient and exponent when the coefficient fits in an
// int64, else as text.
func (e *enc) dec(d decimal.Decimal) {
	if c := d.Coefficient(); c.IsInt64() {
		e.byte(0)
		e.varint(c.Int64())
		e.varint(int64(d.Exponent()))
		return
	}
	e.byte(1)
	e.str(d.String())
}

type decoder struct {
	b   []byte
	err error
	// s, when set, is the whole record as one string: str returns
	// substrings of it, one allocation per record instead of one per field.
	s string
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bool() bool { return d.byte() == 1 }

func (d *decoder) raw() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) bytes() []byte {
	p := d.raw()
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

func (d *decoder) str() string {
	if d.s == "" {
		return string(d.raw())
	}
	p := d.raw()
	if d.err != nil {
		return ""
	}
	start := len(d.s) - len(d.b) - len(p)
	return d.s[start : start+len(p)]
}

func (d *decoder) time() time.Time {
	if d.byte() == 0 {
		return time.Time{}
	}
	return time.Unix(0, d.varint())
}

func (d *decoder) dec() decimal.Decimal {
	switch d.byte() {
	case 0:
		c := d.varint()
		exp := d.varint()
		if exp < math.MinInt32 || exp > math.MaxInt32 {
			d.fail()
			return decimal.Zero
		}
		return decimal.New(c, int32(exp))
	case 1:
		v, err := decimal.NewFromString(d.str())
		if err != nil {
			d.fail()
		}
		return v
	}
	d.fail()
	return decimal.Zero
}

func encodeSummary(s Summary) []byte {
	e := enc{b: make([]byte, 0, 96+len(s.Articles))}
	e.byte(codecV1)
	e.str(s.Key)
	e.str(s.ReservationNumber)
	e.str(s.Invoice)
	e.str(s.Customer)
	e.str(s.Country)
	e.str(s.Currency)
	e.dec(s.Amount)
	e.dec(s.Captured)
	e.dec(s.Remaining)
	e.str(string(s.State))
	e.time(s.Created)
	e.bool(s.OutcomeUnknown)
	e.bool(s.IsTest)
	e.str(s.Articles)
	return e.b
}

func decodeSummary(b []byte) (Summary, error) {
	d := decoder{b: b, s: string(b)}
	if d.byte() != codecV1 {
		return Summary{}, errCorrupt
	}
	s := Summary{Key: d.str(), ReservationNumber: d.str(), Invoice: d.str(), Customer: d.str(), Country: d.str(),
		Currency: d.str(), Amount: d.dec(), Captured: d.dec(), Remaining: d.dec(), State: State(d.str()),
		Created: d.time(), OutcomeUnknown: d.bool(), IsTest: d.bool(), Articles: d.str()}
	return s, d.err
}

func encodePush(p *PushRecord) []byte {
	e := enc{b: make([]byte, 0, 256+len(p.Body))}
	e.byte(codecV1)
	e.uvarint(p.ID)
	e.time(p.ReceivedAt)
	e.str(p.RemoteAddr)
	e.str(p.Method)
	e.str(p.URL)
	e.uvarint(uint64(len(p.Header)))
	for k, vs := range p.Header {
		e.str(k)
		e.uvarint(uint64(len(vs)))
		for _, v := range vs {
			e.str(v)
		}
	}
	e.bytes(p.Body)
	e.str(p.Envelope)
	e.str(p.Key)
	e.str(p.Invoice)
	e.str(p.Service)
	e.str(p.Kind)
	e.varint(int64(p.Status.Code))
	e.str(p.Status.SubCode)
	e.time(p.Status.Time)
	e.str(p.Currency)
	e.dec(p.Amount)
	e.bool(p.HasAmount)
	e.str(p.WebsiteKey)
	e.str(p.Signature)
	e.bool(p.Rejected)
	e.str(p.Reason)
	e.bool(p.Applied)
	e.str(p.Ignored)
	e.str(p.ReservationKey)
	e.b = append(e.b, p.Hash[:]...)
	return e.b
}

func decodePush(b []byte) (*PushRecord, error) {
	d := decoder{b: b}
	if d.byte() != codecV1 {
		return nil, errCorrupt
	}
	p := &PushRecord{ID: d.uvarint(), ReceivedAt: d.time(), RemoteAddr: d.str(), Method: d.str(), URL: d.str()}
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	if n > 0 {
		p.Header = make(http.Header, n)
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		k := d.str()
		m := d.uvarint()
		if m > uint64(len(d.b)) {
			return nil, errCorrupt
		}
		vs := make([]string, 0, m)
		for j := uint64(0); j < m; j++ {
			vs = append(vs, d.str())
		}
		p.Header[k] = vs
	}
	p.Body = d.bytes()
	p.Envelope, p.Key, p.Invoice, p.Service, p.Kind = d.str(), d.str(), d.str(), d.str(), d.str()
	p.Status = Status{Code: int(d.varint()), SubCode: d.str(), Time: d.time()}
	p.Currency = d.str()
	p.Amount = d.dec()
	p.HasAmount = d.bool()
	p.WebsiteKey = d.str()
	p.Signature = d.str()
	p.Rejected = d.bool()
	p.Reason = d.str()
	p.Applied = d.bool()
	p.Ignored = d.str()
	p.ReservationKey = d.str()
	if len(d.b) < 32 {
		d.fail()
	} else {
		copy(p.Hash[:], d.b[:32])
	}
	if d.err != nil {
		return nil, d.err
	}
	return p, nil
}
