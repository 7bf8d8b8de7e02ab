package kv

import (
	"bytes"
	"testing"
)

// appendRow writes what encodeBlock would.
func TestAppendRow(t *testing.T) {
	rows := []textRow{{lo: 1, key: []byte("A"), text: []byte("abc\n")}, {lo: 5, key: []byte("BB"), text: []byte("de\n")}}
	add := textRow{lo: 9, key: []byte("CCC"), text: []byte("fghi\n")}
	got, ok := appendRow(nil, encodeBlock(rows), add.lo, add.key, add.text)
	if want := encodeBlock(append(rows, add)); !ok || !bytes.Equal(got, want) {
		t.Fatalf("appendRow = %q (%v), want %q", got, ok, want)
	}
	if _, ok := appendRow(nil, encodeBlock(rows), 3, add.key, add.text); ok {
		t.Fatal("a row between two went last")
	}
}

// TestTextBlock: a block's rows round-trip, and the search finds a word
// in the right row only, never across two rows.
func TestTextBlock(t *testing.T) {
	rows := []textRow{{lo: 1, key: []byte("A"), text: []byte("abc\x00def\n")}, {lo: 5, key: []byte("B"), text: []byte("ghi\n")}, {lo: 63, key: []byte("C"), text: []byte("xyz\n")}}
	v := encodeBlock(rows)
	back, err := decodeBlock(v)
	if err != nil || len(back) != 3 || string(back[1].key) != "B" || string(back[2].text) != "xyz\n" {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	for _, c := range []struct {
		word string
		want uint64
	}{{"def", 1 << 1}, {"gh", 1 << 5}, {"z", 1 << 63}, {"q", 0}} {
		got, err := blockMatches(v, [][]byte{[]byte(c.word)}, ^uint64(0))
		if err != nil || got != c.want {
			t.Errorf("%q: %b, want %b", c.word, got, c.want)
		}
	}
	if _, err := decodeBlock([]byte{3, 1}); err == nil {
		t.Fatal("a cut block decoded")
	}
}

// FuzzTextBlock: a damaged text block (a file is outside input: a disk, a
// copy, another program) is refused or read, never a panic, by every
// reader of it.
func FuzzTextBlock(f *testing.F) {
	f.Add(encodeBlock([]textRow{{lo: 1, key: []byte("A"), text: []byte("abc\x00def\n")}, {lo: 7, key: []byte("B"), text: []byte("xyz\n")}}), []byte("de"))
	f.Add([]byte{3, 1}, []byte("a"))
	f.Add([]byte{}, []byte("zz"))
	f.Fuzz(func(t *testing.T, v, word []byte) {
		_, _ = decodeBlock(v)
		_, _ = blockMatches(v, [][]byte{word}, ^uint64(0))
		_ = blockRowText(v, 7)
		if nv, ok := appendRow(nil, v, 63, []byte("K"), []byte("t\n")); ok {
			if _, err := decodeBlock(nv); err != nil {
				if _, err0 := decodeBlock(v); err0 == nil {
					t.Fatalf("appending to a good block made a bad one: %v", err)
				}
			}
		}
	})
}
