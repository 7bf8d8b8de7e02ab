package domain

import "errors"

// A row's key ends its list position (PosKey, TxPosKey): the order's last
// tie-break and what makes a position unique. On bbolt a position is an
// index entry's key, written six times a push and seven times a
// reservation, and a gateway's transaction key is 32 hexadecimal digits.
// AppendSortKey writes a key in 5-bit symbols instead of bytes: a digit or
// a hex letter (either case) or '-' is one symbol, any other byte an
// escape symbol and the byte (13 bits). A 32-digit key takes 20 bytes
// instead of 32. The symbols are numbered in byte order and each escape
// stands for the bytes between its neighbours, so the packed forms sort
// exactly as the keys do: the lists' order, the engines' and the reference
// evaluator's, does not change, only its bytes. The last byte is padded
// with zero bits; escape symbol 0 is 13 bits, longer than any padding, so
// a key that goes on past another's end sorts after it.

// sortSym is, for each byte, its symbol (1–27); 0 marks a byte that is
// written after an escape symbol.
var sortSym = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		t[c] = sortSymOf(byte(c))
	}
	return t
}()

// sortSymOf numbers the symbols in byte order: escapes for the ranges
// between the bytes that have a symbol of their own.
func sortSymOf(c byte) byte {
	switch {
	case c < '-': // 0x00–0x2C
		return 0
	case c == '-':
		return 1
	case c < '0': // '.', '/'
		return 0
	case c <= '9':
		return 3 + c - '0' // 3–12
	case c < 'A': // 0x3A–0x40
		return 0
	case c <= 'F':
		return 14 + c - 'A' // 14–19
	case c < 'a': // 0x47–0x60
		return 0
	case c <= 'f':
		return 21 + c - 'a' // 21–26
	}
	return 0 // 0x67–0xFF
}

// sortEsc is the escape symbol of a byte without a symbol of its own.
func sortEsc(c byte) byte {
	switch {
	case c < '-':
		return 0
	case c < '0':
		return 2
	case c < 'A':
		return 13
	case c < 'a':
		return 20
	}
	return 27
}

// sortChar is each direct symbol's byte (escapes: 0).
var sortChar = func() (t [32]byte) {
	for c := 0; c < 256; c++ {
		if s := sortSymOf(byte(c)); s != 0 {
			t[s] = byte(c)
		}
	}
	return t
}()

// SortKeyLen is the length of key's packed form.
func SortKeyLen(key string) int {
	bits := 0
	for i := 0; i < len(key); i++ {
		if sortSym[key[i]] != 0 {
			bits += 5
		} else {
			bits += 13
		}
	}
	return (bits + 7) / 8
}

// AppendSortKey appends key's packed form.
func AppendSortKey(dst []byte, key string) []byte {
	var acc uint32 // bits not yet written, the oldest highest
	n := 0         // how many
	for i := 0; i < len(key); i++ {
		c := key[i]
		if s := sortSym[c]; s != 0 {
			acc, n = acc<<5|uint32(s), n+5
		} else {
			acc, n = acc<<13|uint32(sortEsc(c))<<8|uint32(c), n+13
		}
		for n >= 8 {
			n -= 8
			dst = append(dst, byte(acc>>n))
		}
		acc &= 1<<n - 1
	}
	if n > 0 {
		dst = append(dst, byte(acc<<(8-n)))
	}
	return dst
}

// errSortKey says packed key bytes no AppendSortKey wrote.
var errSortKey = errors.New("packed key: not a key's packed form")

// DecodeSortKey reads a packed key back.
func DecodeSortKey(b []byte) (string, error) {
	out, err := AppendDecodedSortKey(make([]byte, 0, len(b)*8/5), b)
	return string(out), err
}

// AppendDecodedSortKey appends the key packed in b to dst: a list walk
// reads each row's key into one buffer.
func AppendDecodedSortKey(dst, b []byte) ([]byte, error) {
	var acc uint64
	n := 0 // bits in acc
	i := 0
	take := func(k int) (uint32, bool) {
		for n < k && i < len(b) {
			acc, n = acc<<8|uint64(b[i]), n+8
			i++
		}
		if n < k {
			return 0, false
		}
		n -= k
		v := uint32(acc>>n) & (1<<k - 1)
		acc &= 1<<n - 1
		return v, true
	}
	for {
		s, ok := take(5)
		if !ok {
			break
		}
		if c := sortChar[s]; c != 0 {
			dst = append(dst, c)
			continue
		}
		c, ok := take(8)
		if !ok {
			// The padding: zero bits, fewer than eight.
			if s != 0 || acc != 0 || n+5 >= 8 {
				return dst, errSortKey
			}
			break
		}
		if s > 27 || sortSym[c] != 0 || sortEsc(byte(c)) != byte(s) {
			return dst, errSortKey
		}
		dst = append(dst, byte(c))
	}
	if acc != 0 {
		return dst, errSortKey // padding is zero bits
	}
	return dst, nil
}
