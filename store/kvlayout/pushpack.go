package kvlayout

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"errors"
	"io"
	"net/http"
	"sync"
)

// A push record of format 2 keeps the headers and the body as received in
// one packed section: most of a push's bytes are its JSON body, which
// repeats the same field names and nulls in every push, so deflate with a
// preset dictionary of the family's push shapes keeps ~600 bytes of body in
// ~100. The parsed fields stay outside the section, so the push log's
// filters and counts read them without inflating anything
// (DecodePushFields).
//
// The section is a packing byte, the unpacked length and the packed bytes:
//
//	packRaw     the headers and body as they are (deflate did not help)
//	packFlate1  deflated with pushDict1
//
// Unpacked, it is the header count, each header's name, value count and
// values (length-prefixed), then the body to the end.

const (
	packRaw    = 0
	packFlate1 = 1
)

// pushDict1 is the preset dictionary of packFlate1, made once by
// store/kvlayout/mkpushdict (its comment says how and what it holds). The
// records packed with it are read with these bytes for good:
// TestPushDictionaryPinned holds them to their SHA-256.
//
//go:embed pushdict1.txt
var pushDict1 []byte

// packLevel: below level 2 compress/flate ignores a preset dictionary, and
// above it a push's few hundred bytes gain a few bytes for more CPU.
const packLevel = 2

// maxInflation bounds what a packed section may claim to unpack to: deflate
// cannot make more than 1,032 bytes of one, so a larger claim is a damaged
// record and must not make the reader allocate it.
const maxInflation = 1032

var errPacked = errors.New("corrupt record: packed headers and body")

// packer is a deflate writer with its scratch buffers. Writers are pooled:
// a new one allocates and clears ~1 MB of tables, many times the work of
// packing one push, and a push is packed on the goroutine that received it.
type packer struct {
	w   *flate.Writer
	out bytes.Buffer // the deflated section
	raw []byte       // the unpacked headers
}

var packers = sync.Pool{New: func() any {
	p := &packer{}
	w, err := flate.NewWriterDict(&p.out, packLevel, pushDict1)
	if err != nil {
		panic(err) // only for a level out of range: packLevel is a constant
	}
	p.w = w
	return p
}}

// unpacker is a deflate reader with its input; pooled like packer.
type unpacker struct {
	in bytes.Reader
	r  io.ReadCloser
}

var unpackers = sync.Pool{New: func() any {
	u := &unpacker{}
	u.r = flate.NewReader(&u.in)
	return u
}}

// appendHeaders is the unpacked form of h (the body follows it).
func appendHeaders(b []byte, h http.Header) []byte {
	e := enc{b: b}
	e.uvarint(uint64(len(h)))
	for k, vs := range h {
		e.str(k)
		e.uvarint(uint64(len(vs)))
		for _, v := range vs {
			e.str(v)
		}
	}
	return e.b
}

// packPush appends the packed section of h and body to e.
func (e *enc) packPush(h http.Header, body []byte) {
	p := packers.Get().(*packer)
	defer packers.Put(p)
	p.raw = appendHeaders(p.raw[:0], h)
	size := len(p.raw) + len(body)
	p.out.Reset()
	p.w.Reset(&p.out)
	_, err := p.w.Write(p.raw)
	if err == nil {
		_, err = p.w.Write(body)
	}
	if err == nil {
		err = p.w.Close()
	}
	// Writing to a bytes.Buffer does not fail; if it ever did, the
	// section is kept unpacked, which is always right.
	if err == nil && p.out.Len() < size {
		e.byte(packFlate1)
		e.uvarint(uint64(size))
		e.bytes(p.out.Bytes())
		return
	}
	e.byte(packRaw)
	e.uvarint(uint64(size))
	e.uvarint(uint64(size))
	e.b = append(append(e.b, p.raw...), body...)
}

// unpackPush reads the packed section at d into headers and body; with
// fieldsOnly it skips it.
func (d *decoder) unpackPush(fieldsOnly bool) (http.Header, []byte) {
	packing := d.byte()
	size := d.uvarint()
	packed := d.raw()
	if d.err != nil || fieldsOnly {
		return nil, nil
	}
	var raw []byte
	switch packing {
	case packRaw:
		if size != uint64(len(packed)) {
			d.err = errPacked
			return nil, nil
		}
		raw = packed
	case packFlate1:
		if size > maxInflation*uint64(len(packed)+1) {
			d.err = errPacked
			return nil, nil
		}
		raw = make([]byte, size)
		u := unpackers.Get().(*unpacker)
		u.in.Reset(packed)
		err := u.r.(flate.Resetter).Reset(&u.in, pushDict1)
		if err == nil {
			_, err = io.ReadFull(u.r, raw)
		}
		if err == nil {
			// The section ends where its length says: more is damage.
			var one [1]byte
			if n, _ := u.r.Read(one[:]); n != 0 {
				err = errPacked
			}
		}
		u.in.Reset(nil)
		unpackers.Put(u)
		if err != nil {
			d.err = errPacked
			return nil, nil
		}
	default:
		d.err = errPacked
		return nil, nil
	}
	hd := decoder{b: raw}
	n := hd.uvarint()
	if n > uint64(len(hd.b)) {
		d.err = errPacked
		return nil, nil
	}
	var h http.Header
	if n > 0 {
		h = make(http.Header, n)
	}
	for i := uint64(0); i < n && hd.err == nil; i++ {
		k := hd.str()
		m := hd.uvarint()
		if m > uint64(len(hd.b)) {
			d.err = errPacked
			return nil, nil
		}
		vs := make([]string, 0, m)
		for j := uint64(0); j < m; j++ {
			vs = append(vs, hd.str())
		}
		h[k] = vs
	}
	if hd.err != nil {
		d.err = errPacked
		return nil, nil
	}
	// The body is the rest (nil when empty, as format 1 reads it), copied
	// when raw is the record's own bytes: a decoded record never shares
	// the file's memory.
	body := hd.b
	switch {
	case len(body) == 0:
		body = nil
	case packing == packRaw:
		body = append([]byte(nil), body...)
	}
	return h, body
}
