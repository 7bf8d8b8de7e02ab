package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s for one line of a terminal: escape sequences (CSI, OSC,
// DCS, SOS, PM, APC and two-character ESC sequences, in their 7-bit and
// 8-bit forms) are removed whole, other C0 and C1 controls and DEL are
// dropped, tab, CR and LF become a space, invisible format characters
// (zero-width space, BOM, bidi overrides, …) are shown as ⟨U+200B⟩, and
// invalid UTF-8 becomes U+FFFD. Other Unicode is kept.
func Clean(s string) string { return clean(s, false) }

// CleanLines is Clean that keeps line feeds, for multi-line text such as a
// pretty-printed body.
func CleanLines(s string) string { return clean(s, true) }

const (
	esc = 0x1b
	bel = 0x07
)

func clean(s string, keepNewlines bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		switch {
		case r == esc:
			i = skipEscape(s, i+1)
			continue
		case r == 0x9b: // 8-bit CSI
			i = skipCSI(s, i+size)
			continue
		case r == 0x90 || r == 0x9d || r == 0x98 || r == 0x9e || r == 0x9f: // DCS, OSC, SOS, PM, APC
			i = skipString(s, i+size)
			continue
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			// other controls: dropped
		case isInvisible(r):
			// Shown, not kept or dropped: a zero-width space or a bidi
			// override inside an invoice makes a look-alike of another
			// invoice, and dropping it would hide that the two differ.
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only, the common case.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// isInvisible reports whether r draws nothing (or reorders what is around
// it) although it is not a control: Unicode's format characters (zero-width
// space, joiners, BOM, bidi marks and overrides, soft hyphen, tags), the
// Hangul fillers, the combining grapheme joiner and variation selectors.
func isInvisible(r rune) bool {
	switch {
	case unicode.Is(unicode.Cf, r):
		return true
	case r == 0x034f || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0:
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true
	}
	return false
}

// skipEscape skips what follows an ESC at i and returns the index after the
// sequence.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// ESC, intermediates 0x20–0x2f, one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes up to and including the
// final byte (0x40–0x7e). Anything else ends the sequence where it stands.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c <= 0x3f:
			i++
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i
		}
	}
	return i
}

// skipString skips a control string up to its terminator: BEL, ESC \ or the
// 8-bit ST (U+009C). An unterminated string runs to the end of s.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == bel:
			return i + 1
		case s[i] == esc:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c:
			return i + 2
		}
		i++
	}
	return i
}
