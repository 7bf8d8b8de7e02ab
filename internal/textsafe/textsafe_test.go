package textsafe

import "testing"

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "Order 42: 19.99 EUR", "Order 42: 19.99 EUR"},
		{"unicode kept", "Müller – café 日本 🎁", "Müller – café 日本 🎁"},
		{"OSC 52 clipboard write, BEL", "a\x1b]52;c;ZXZpbA==\x07b", "ab"},
		{"OSC 52 clipboard write, ST", "a\x1b]52;c;ZXZpbA==\x1b\\b", "ab"},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"clear screen", "x\x1b[2Jy", "xy"},
		{"CSI with params", "\x1b[38;5;196mred\x1b[0m", "red"},
		{"cursor move", "\x1b[10;20H!", "!"},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab"},
		{"APC", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"two-char ESC", "a\x1bcb\x1b(Bc", "abc"},
		{"8-bit CSI", "a\u009b2Jb", "ab"},
		{"8-bit OSC to ST", "a\u009d52;c;xx\u009cb", "ab"},
		{"other C1 dropped", "a\u0085b\u0084c", "abc"},
		{"C0 dropped, whitespace to space", "a\x00b\x08c\td\ne\rf\x7fg", "abc d e fg"},
		{"bidi override shown", "abc\u202edcba", "abc⟨U+202E⟩dcba"},
		// F10: look-alike invoices must not look alike.
		{"zero-width space shown", "INV\u200b-1", "INV⟨U+200B⟩-1"},
		{"BOM shown", "\ufeffINV-1", "⟨U+FEFF⟩INV-1"},
		{"word joiner and soft hyphen shown", "a\u2060b\u00adc", "a⟨U+2060⟩b⟨U+00AD⟩c"},
		{"Hangul filler shown", "a\u3164b", "a⟨U+3164⟩b"},
		{"variation selector shown", "a\ufe0fb", "a⟨U+FE0F⟩b"},
		{"tag character shown", "a\U000e0041b", "a⟨U+E0041⟩b"},
		{"invalid UTF-8", "a\xffb", "a\ufffdb"},
		{"unterminated OSC", "a\x1b]0;title", "a"},
		{"lone ESC at end", "a\x1b", "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Clean(tc.in); got != tc.want {
				t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := CleanLines("a\nb\x1b[2J\tc"); got != "a\nb c" {
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
		if Clean(out) != out {
			t.Fatalf("Clean is not idempotent on %q", s)
		}
	})
}
