package textsafe

import "testing"

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Order 42: 19.99 EUR", "Order 42: 19.99 EUR"},
		{"unicode kept", "Müller – café 日本 🎁", "Müller – café 日本 🎁"},
		// Escape sequences lose their ESC and show as the text they are:
		// inert, and nothing of the input is hidden.
		{"OSC 52 clipboard write, BEL", "a\x1b]52;c;ZXZpbA==\x07b", "a␛]52;c;ZXZpbA==␇b"},
		{"OSC 52 clipboard write, ST", "a\x1b]52;c;ZXZpbA==\x1b\\b", "a␛]52;c;ZXZpbA==␛\\b"},
		{"clear screen", "x\x1b[2Jy", "x␛[2Jy"},
		{"CSI with params", "\x1b[38;5;196mred\x1b[0m", "␛[38;5;196mred␛[0m"},
		{"8-bit CSI", "a\u009b2Jb", "a⟨U+009B⟩2Jb"},
		{"other C1 shown", "a\u0085b\u0084c", "a⟨U+0085⟩b⟨U+0084⟩c"},
		{"C0 shown as control pictures", "a\x00b\x08c\td\ne\rf\x7fg", "a␀b␈c␉d␊e␍f␡g"},
		// issue 24: three invoices that showed alike.
		{"NUL spelt out stays text", "IMP-NUL", "IMP-NUL"},
		{"BEL inside", "IMP-\x07NUL", "IMP-␇NUL"},
		{"NUL byte inside", "IMP-\x00NUL", "IMP-␀NUL"},
		{"bidi override shown", "abc\u202edcba", "abc⟨U+202E⟩dcba"},
		// F10: look-alike invoices must not look alike.
		{"zero-width space shown", "INV\u200b-1", "INV⟨U+200B⟩-1"},
		{"BOM shown", "\ufeffINV-1", "⟨U+FEFF⟩INV-1"},
		{"word joiner and soft hyphen shown", "a\u2060b\u00adc", "a⟨U+2060⟩b⟨U+00AD⟩c"},
		{"Hangul filler shown", "a\u3164b", "a⟨U+3164⟩b"},
		{"variation selector shown", "a\ufe0fb", "a⟨U+FE0F⟩b"},
		{"tag character shown", "a\U000e0041b", "a⟨U+E0041⟩b"},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
		{"lone ESC at end", "a\x1b", "a␛"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in); got != tc.want {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := CleanLines("a\r\nb\x1b[2J\tc\rd"); got != "a\nb␛[2J␉c␍d" {
		t.Errorf("CleanLines = %q", got)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"\x1b]52;c;x\x07", "\x1b[2J", "\u009b1m", "ok", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Clean(s)
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("Clean(%q) = %q keeps control %U", s, out, r)
			}
		}
		for _, r := range out {
			if isInvisible(r) {
				t.Fatalf("Clean(%q) = %q keeps invisible %U", s, out, r)
			}
		}
		if CleanLines(out) != out {
			t.Fatalf("CleanLines changes Clean's output of %q", s)
		}
		if Clean(out) != out {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}

// Distinct inputs that differ in a control character stay distinct.
func TestCleanKeepsDifferences(t *testing.T) {
	seen := map[string]string{}
	for _, in := range []string{"IMP-NUL", "IMP-\x07NUL", "IMP-\x00NUL", "IMP-\x1b[0mNUL", "IMP-\tNUL", "IMP- NUL", "IMP-\u0085NUL", "IMP-\u200bNUL"} {
		out := Clean(in)
		if prev, ok := seen[out]; ok {
			t.Errorf("Clean(%q) = Clean(%q) = %q", in, prev, out)
		}
		seen[out] = in
	}
}

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"0123456789abc", 10, "0123456789…[3 more bytes]"},
		{"ééééé", 3, "é…[8 more bytes]"},
	} {
		if got := Bound(tc.in, tc.max); got != tc.want {
			t.Errorf("Bound(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
