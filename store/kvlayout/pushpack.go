package kvlayout

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"net/http"
	"sync"

	"paydesk/store/domain"
)

// A push record of format 2 keeps the headers and the body as received in
// one packed section: most of a push's bytes are its JSON body, which
// repeats the same field names and nulls in every push. The section is
// written as pieces of a fixed dictionary of the family's push shapes
// (pushDict1) and the bytes between them, so ~600 bytes of body take
// ~170. The parsed fields stay outside the section, so the push log's
// filters and counts read them without unpacking anything
// (DecodePushFields).
//
// Why not compress/flate with the dictionary as preset: measured in
// paydesk listen under load, a flate writer's Reset (it clears ~640 KB of
// hash tables) and its Huffman codes cost 58 µs a push, a third more CPU
// for the whole push; this packing costs a few µs and keeps 80 % of what
// flate saves.
//
// The section is a packing byte (packDict1; another dictionary would be
// another byte), the unpacked length and the packed bytes: ops over
// pushDict1, each uvarint(n<<1) and n bytes as they are, or
// uvarint((n-minPiece)<<1|1) and uvarint(offset), the n bytes of pushDict1
// at offset.
//
// Unpacked, it is the header count, each header's name, value count and
// values (length-prefixed), then the body to the end.

const packDict1 = 1

// pushDict1 is the dictionary of packDict1, made once by
// store/kvlayout/mkpushdict (its comment says how and what it holds). The
// records packed with it are read with these bytes for good:
// TestPushDictionaryPinned holds them to their SHA-256.
//
//go:embed pushdict1.txt
var pushDict1 []byte

// minPiece is the shortest piece of the dictionary taken: a piece costs
// two or three bytes.
const minPiece = 4

// maxCandidates bounds the places of the dictionary tried for a piece,
// and a piece of goodPiece bytes is taken without trying more: a longer
// one would save a byte or two for the time of comparing it.
const (
	maxCandidates = 4
	goodPiece     = 32
)

// matchLen is the length of the common prefix of a and b, compared eight
// bytes at a time.
func matchLen(a, b []byte) int {
	n := 0
	for len(a)-n >= 8 && len(b)-n >= 8 {
		if x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:]); x != 0 {
			return n + bits.TrailingZeros64(x)/8
		}
		n += 8
	}
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

var errPacked = errors.New("corrupt record: packed headers and body")

// dictIndex finds pieces of a dictionary: for each 4-byte sequence, the
// last place it starts (head) and, from each place, the place before with
// the same hash (prev). Built once from the constant dictionary, read only.
type dictIndex struct {
	dict []byte
	head [1 << dictHashBits]int16
	prev []int16
}

// The tables are small (2 KB and two bytes a dictionary byte) so that they
// stay in the cache of a busy processor.
const dictHashBits = 10

func hash4(b []byte) uint32 {
	return (binary.LittleEndian.Uint32(b) * 2654435761) >> (32 - dictHashBits)
}

func newDictIndex(dict []byte) *dictIndex {
	if len(dict) > math.MaxInt16 {
		panic("kvlayout: a push dictionary is at most 32 KB") // the dictionaries are constants of this package
	}
	x := &dictIndex{dict: dict, prev: make([]int16, len(dict))}
	for i := range x.head {
		x.head[i] = -1
	}
	for i := 0; i+minPiece <= len(dict); i++ {
		h := hash4(dict[i:])
		x.prev[i] = x.head[h]
		x.head[h] = int16(i)
	}
	return x
}

var dict1 = sync.OnceValue(func() *dictIndex { return newDictIndex(pushDict1) })

// longest is the longest piece of the dictionary that src starts with: its
// offset and length (0 when none of minPiece bytes or more).
func (x *dictIndex) longest(src []byte) (int, int) {
	if len(src) < minPiece {
		return 0, 0
	}
	best, bestLen := 0, 0
	for at, tries := x.head[hash4(src)], 0; at >= 0 && tries < maxCandidates; at, tries = x.prev[at], tries+1 {
		if n := matchLen(x.dict[at:], src); n > bestLen {
			best, bestLen = int(at), n
			if n >= goodPiece {
				break
			}
		}
	}
	if bestLen < minPiece {
		return 0, 0
	}
	return best, bestLen
}

// pack appends src as pieces of the dictionary, pieces of local (the
// record's own parsed fields, each whole, at offsets after the
// dictionary's) and the bytes between them. The fields are looked for
// where a run of bytes would start (after a piece: `"Key":"` is in the
// dictionary, the key is the record's), and a run that finds no piece is
// passed over in growing steps, as in Snappy: a signature's random bytes
// cost little.
func (x *dictIndex) pack(dst, src []byte, local [][]byte) []byte {
	lit := 0 // the start of the bytes not yet written
	for i := 0; i < len(src); {
		off, n := 0, 0
		if i == lit {
			at := len(x.dict)
			for _, l := range local {
				if len(l) >= minPiece && len(l) > n && bytes.HasPrefix(src[i:], l) {
					off, n = at, len(l)
				}
				at += len(l)
			}
		}
		if n == 0 {
			off, n = x.longest(src[i:])
		}
		if n == 0 {
			i += 1 + (i-lit)>>4
			continue
		}
		if i > lit {
			dst = binary.AppendUvarint(dst, uint64(i-lit)<<1)
			dst = append(dst, src[lit:i]...)
		}
		dst = binary.AppendUvarint(dst, uint64(n-minPiece)<<1|1)
		dst = binary.AppendUvarint(dst, uint64(off))
		i += n
		lit = i
	}
	if lit < len(src) {
		dst = binary.AppendUvarint(dst, uint64(len(src)-lit)<<1)
		dst = append(dst, src[lit:]...)
	}
	return dst
}

// unpack appends to dst what pack made of packed with local (its pieces
// joined), failing on an op that leaves the dictionary, local or packed, or
// on more than size bytes.
func (x *dictIndex) unpack(dst, packed []byte, size int, local []byte) ([]byte, error) {
	start := len(dst)
	for len(packed) > 0 {
		op, m := binary.Uvarint(packed)
		if m <= 0 {
			return nil, errPacked
		}
		packed = packed[m:]
		if op&1 == 0 {
			n := op >> 1
			if n == 0 || n > uint64(len(packed)) || n > uint64(size-(len(dst)-start)) {
				return nil, errPacked
			}
			dst = append(dst, packed[:n]...)
			packed = packed[n:]
			continue
		}
		n := op>>1 + minPiece
		off, m := binary.Uvarint(packed)
		from := x.dict
		if m > 0 && off >= uint64(len(x.dict)) {
			from, off = local, off-uint64(len(x.dict))
		}
		if m <= 0 || off > uint64(len(from)) || n > uint64(len(from))-off || n > uint64(size-(len(dst)-start)) {
			return nil, errPacked
		}
		packed = packed[m:]
		dst = append(dst, from[off:off+n]...)
	}
	if len(dst)-start != size {
		return nil, errPacked
	}
	return dst, nil
}

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

// packPush appends the packed section of h and body to e; local are
// fields of the record written before it (pushLocal).
func (e *enc) packPush(h http.Header, body []byte, local [][]byte) {
	// The headers and the body are packed one after the other (a piece
	// never spans both): the body is not copied behind the headers first.
	var buf [256]byte
	hdr := appendHeaders(buf[:0], h)
	e.byte(packDict1)
	e.uvarint(uint64(len(hdr) + len(body)))
	// The packed bytes go behind room for their length prefix, which is
	// then moved up to them: the section is not built twice.
	at := len(e.b)
	e.b = append(e.b, 0, 0, 0)
	x := dict1()
	e.b = x.pack(e.b, hdr, local)
	e.b = x.pack(e.b, body, local)
	n := len(e.b) - at - 3
	var pre [binary.MaxVarintLen64]byte
	m := binary.PutUvarint(pre[:], uint64(n))
	switch {
	case m < 3:
		copy(e.b[at+m:], e.b[at+3:])
		e.b = e.b[:at+m+n]
	case m > 3:
		e.b = append(e.b, pre[:m-3]...)
		copy(e.b[at+m:], e.b[at+3:at+3+n])
	}
	copy(e.b[at:], pre[:m])
}

// unpackPush reads the packed section at d into headers and body; with
// fieldsOnly it skips it; unpackPushSome with bodyOnly reads the body alone.
func (d *decoder) unpackPush(fieldsOnly bool, local []byte) (http.Header, []byte) {
	return d.unpackPushSome(fieldsOnly, local, false)
}

func (d *decoder) unpackPushSome(fieldsOnly bool, local []byte, bodyOnly bool) (http.Header, []byte) {
	packing := d.byte()
	size := d.uvarint()
	packed := d.raw()
	if d.err != nil || fieldsOnly {
		return nil, nil
	}
	// A piece is at most the dictionary and costs at least 2 bytes,
	// a run of bytes is at most packed: a larger claim is damage, and
	// must not make the reader allocate it.
	if packing != packDict1 || size > uint64(len(packed))*uint64(len(pushDict1)) {
		d.err = errPacked
		return nil, nil
	}
	raw, err := dict1().unpack(make([]byte, 0, size), packed, int(size), local)
	if err != nil {
		d.err = err
		return nil, nil
	}
	if bodyOnly {
		// The body alone: pass over the headers without keeping them.
		hd := decoder{b: raw}
		n := hd.uvarint()
		for i := uint64(0); i < n && hd.err == nil; i++ {
			hd.raw()
			m := hd.uvarint()
			if m > uint64(len(hd.b)) {
				hd.fail()
			}
			for j := uint64(0); j < m && hd.err == nil; j++ {
				hd.raw()
			}
		}
		if hd.err != nil {
			d.err = errPacked
			return nil, nil
		}
		if len(hd.b) == 0 {
			return nil, nil
		}
		return nil, hd.b
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
	// The body is the rest (nil when empty, as format 1 reads it); raw is
	// the record's own copy, never the file's memory.
	if len(hd.b) == 0 {
		return h, nil
	}
	return h, hd.b
}

// pushLocal are the parsed fields of p that its headers and body usually
// repeat (the key and invoice in the body, the website key in the
// signature), in the order the section's offsets count them.
func pushLocal(p *domain.PushRecord) [][]byte {
	return [][]byte{[]byte(p.Key), []byte(p.Invoice), []byte(p.Service), []byte(p.WebsiteKey)}
}

// joinLocal is local as unpack reads it.
func joinLocal(local [][]byte) []byte { return bytes.Join(local, nil) }

// pushBodyV2 reads only the body of a push record of format 2: the
// outbox's worker sends the body and needs none of the rest, whose strings
// and header map would cost it more than unpacking.
func pushBodyV2(b []byte) ([]byte, error) {
	d := decoder{b: b}
	d.byte()
	d.skipPushRequest()
	d.raw() // envelope
	key, invoice, service := d.raw(), d.raw(), d.raw()
	d.raw()    // kind
	d.varint() // status code
	d.raw()    // sub code
	d.time()   // status time
	d.raw()    // currency
	d.dec()    // amount
	d.bool()   // has amount
	websiteKey := d.raw()
	d.raw()  // signature
	d.bool() // rejected
	d.raw()  // reason
	if len(d.b) < 32 {
		d.fail()
	} else {
		d.b = d.b[32:] // hash
	}
	d.uvarint() // body size
	d.uvarint() // count
	d.time()    // last seen
	if d.err != nil {
		return nil, d.err
	}
	local := joinLocal([][]byte{key, invoice, service, websiteKey})
	_, body := d.unpackPushSome(false, local, true)
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	return body, nil
}
