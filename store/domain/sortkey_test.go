package domain

import (
	"bytes"
	"strings"
	"testing"
)

func TestSortKeyPacked(t *testing.T) {
	for _, tc := range []struct {
		key  string
		size int
	}{
		{"", 0},
		{"00000000000000000002D3B17D91FD41", 20}, // a gateway's transaction key
		{"a1b2c3d4e5f60718293a4b5c6d7e8f90", 20},
		{"550e8400-e29b-41d4-a716-446655440000", 23},
		{"R-1000042", 7},
		{"GC-795709222812993", 13}, // G is escaped: 13 + 17×5 bits
		{"ü", 4},                   // two escaped bytes
		{"\x00", 2},
		{"A\x00", 3},
	} {
		got := AppendSortKey(nil, tc.key)
		if len(got) != tc.size || SortKeyLen(tc.key) != tc.size {
			t.Errorf("%q: %d bytes (SortKeyLen %d), want %d", tc.key, len(got), SortKeyLen(tc.key), tc.size)
		}
		back, err := DecodeSortKey(got)
		if err != nil || back != tc.key {
			t.Errorf("%q: decoded %q, %v", tc.key, back, err)
		}
	}
}

func TestSortKeyOrder(t *testing.T) {
	keys := []string{"", "\x00", "\x00\x00", " ", ",", "-", "-0", ".", "/", "0", "00", "09", "0A", "0a", "0g", "9", ":", "@",
		"A", "A\x00", "AA", "AF", "AG", "F", "G", "Z", "_", "`", "a", "f", "g", "z", "\x7f", "\xc3\xbc", "\xff", "\xff\xff"}
	for _, a := range keys {
		for _, b := range keys {
			want := strings.Compare(a, b)
			if got := bytes.Compare(AppendSortKey(nil, a), AppendSortKey(nil, b)); got != want {
				t.Errorf("%q vs %q: packed compare %d, keys %d", a, b, got, want)
			}
		}
	}
}

func TestDecodeSortKeyRefuses(t *testing.T) {
	for _, b := range [][]byte{
		{0x01},       // padding that is not zero
		{0xff},       // symbol 31
		{0x10, 0x80}, // escape 2 of 'A', which has its own symbol: 00010 01000001 0…
	} {
		if s, err := DecodeSortKey(b); err == nil {
			t.Errorf("%x: decoded %q, want an error", b, s)
		}
	}
}

// FuzzSortKey holds the packed form to the keys' order and to the key:
// a position read back from a list cursor decodes its key with it.
func FuzzSortKey(f *testing.F) {
	f.Add("00000000000000000002D3B17D91FD41", "00000000000000000002D3B17D91FD42", []byte{0x18, 0x60})
	f.Add("A", "A\x00", []byte{0x01})
	f.Add("-x", "ü", []byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, a, b string, raw []byte) {
		pa, pb := AppendSortKey(nil, a), AppendSortKey(nil, b)
		if got, want := bytes.Compare(pa, pb), strings.Compare(a, b); got != want {
			t.Fatalf("%q vs %q: packed compare %d, keys %d", a, b, got, want)
		}
		if back, err := DecodeSortKey(pa); err != nil || back != a {
			t.Fatalf("%q: decoded %q, %v", a, back, err)
		}
		if len(pa) != SortKeyLen(a) {
			t.Fatalf("%q: %d bytes, SortKeyLen %d", a, len(pa), SortKeyLen(a))
		}
		// Any bytes: an error or a key that packs to them again.
		if s, err := DecodeSortKey(raw); err == nil && !bytes.Equal(AppendSortKey(nil, s), raw) {
			t.Fatalf("%x decodes to %q, which packs to %x", raw, s, AppendSortKey(nil, s))
		}
	})
}
