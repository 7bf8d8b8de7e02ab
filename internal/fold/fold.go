// Package fold makes text comparable for search: case and accents folded
// ("Müller", "MULLER" and "muller" are one word), with golang.org/x/text;
// German gives the German transliteration ("Mueller") a search text keeps
// beside the fold, so that "mueller" finds Müller and "muller" still does.
package fold

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Version is the version of the folding of a stored search text: a store
// whose texts were folded by an older one folds them again when opened.
// 1: case and accents; 2: and the German transliterations beside them.
const Version = 2

// German returns s with its umlauts transliterated ("Müller" becomes
// "Mueller") and whether there were any: a search text then holds both
// folds, so the words typed either way are found.
func German(s string) (string, bool) {
	if !strings.ContainsAny(s, "äöüÄÖÜ\u0308") {
		return s, false
	}
	b, changed := transliterate(nil, norm.NFC.String(s))
	if !changed {
		return s, false
	}
	return string(b), true
}

// transliterate appends s (composed) with ä, ö, ü as ae, oe, ue, and
// reports whether it had any.
func transliterate(b []byte, s string) ([]byte, bool) {
	changed := false
	for _, r := range s {
		switch r {
		case 'ä', 'Ä':
			b, changed = append(b, 'a', 'e'), true
		case 'ö', 'Ö':
			b, changed = append(b, 'o', 'e'), true
		case 'ü', 'Ü':
			b, changed = append(b, 'u', 'e'), true
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return b, changed
}

// String folds s for search: Unicode case folding (ß becomes ss) and
// decomposition with the combining marks dropped (é becomes e). ASCII text,
// nearly all of it, only has its case folded.
func String(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return unicodeFold(s)
		}
	}
	return strings.ToLower(s)
}

func unicodeFold(s string) string {
	// A chain holds state: one per call keeps String safe for concurrent use.
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), cases.Fold(), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return strings.ToLower(s)
	}
	return out
}

// Folder folds many strings with one transformer, without the allocations
// of a new chain per string: for building a search index. Not safe for
// concurrent use; the zero value is ready.
type Folder struct {
	t   transform.Transformer
	buf []byte // AppendGerman's transliteration
}

// AppendGerman appends the fold of s's German transliteration (German)
// and reports whether s has umlauts; without any it appends nothing.
// It reuses the Folder's buffers: a search index of many names with
// umlauts costs no allocation per name.
func (f *Folder) AppendGerman(dst []byte, s string) ([]byte, bool) {
	if !strings.ContainsAny(s, "äöüÄÖÜ\u0308") {
		return dst, false
	}
	if !norm.NFC.IsNormalString(s) {
		s = norm.NFC.String(s) // a decomposed umlaut: u and its two dots
	}
	b, changed := transliterate(f.buf[:0], s)
	f.buf = b
	if !changed {
		return dst, false
	}
	if f.t == nil {
		f.t = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), cases.Fold(), norm.NFC)
	}
	f.t.Reset()
	out, _, err := transform.Append(f.t, dst, b)
	if err != nil {
		return append(dst, strings.ToLower(string(b))...), true
	}
	return out, true
}

// Append appends the fold of s to dst.
func (f *Folder) Append(dst []byte, s string) []byte {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		return dst
	}
	if f.t == nil {
		f.t = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), cases.Fold(), norm.NFC)
	}
	f.t.Reset()
	out, _, err := transform.Append(f.t, dst, []byte(s))
	if err != nil {
		return append(dst, strings.ToLower(s)...)
	}
	return out
}
