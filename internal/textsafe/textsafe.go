package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clean returns s for one line of a terminal or a CSV cell, inert and with
// nothing hidden: every C0 control (tab, CR and LF included) is shown as its
// Unicode control picture (NUL as ␀, BEL as ␇, ESC as ␛, TAB as ␉, LF as
// ␊), DEL as ␡, C1 controls and invisible format characters (zero-width
// space, BOM, bidi overrides, …) as ⟨U+0085⟩, and invalid UTF-8 as U+FFFD.
// An escape sequence so loses its ESC and is shown as the text it is. Other
// Unicode is kept. Shown rather than dropped: invoices IMP-NUL, IMP-\x07NUL
// and IMP-\x00NUL must not look alike.
func Clean(s string) string { return clean(s, false) }

// CleanLines is Clean that keeps line feeds (a CR before one is dropped),
// for multi-line text such as a pretty-printed body.
func CleanLines(s string) string { return clean(s, true) }

func clean(s string, keepNewlines bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		switch {
		case keepNewlines && r == '\n':
			b.WriteByte('\n')
		case keepNewlines && r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF is a line end
		case r < 0x20:
			b.WriteRune(0x2400 + r) // the control pictures block
		case r == 0x7f:
			b.WriteRune('\u2421') // ␡
		case r >= 0x80 && r <= 0x9f, isInvisible(r):
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

// Bound cuts s to at most max bytes (on a character boundary) and says how
// much was cut, so one field of a hostile file cannot make a report line of
// megabytes. s shorter than max is returned as it is.
func Bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[%d more bytes]", len(s)-cut)
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
