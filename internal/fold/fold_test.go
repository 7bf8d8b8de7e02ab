package fold

import "testing"

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Müller", "muller"},
		{"MÜLLER", "muller"},
		{"Straße", "strasse"},
		{"Gruber, Sophie", "gruber, sophie"},
		{"Ångström café", "angstrom cafe"},
		{"Łódź", "łodz"}, // Ł is a letter of its own, not L with a mark
		{"SHOP-77001", "shop-77001"},
		{"", ""},
		{"\xff\xfeMü", "\ufffd\ufffdmu"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("Müller")
	f.Add("ǅ\u0301ß")
	var folder Folder
	f.Fuzz(func(t *testing.T, s string) {
		a := String(s)
		if b := string(folder.Append([]byte("x"), s)); b != "x"+a {
			t.Fatalf("Folder.Append(%q) = %q, String = %q", s, b, a)
		}
		if b := String(a); b != a && len(b) > 4*len(a)+16 {
			t.Fatalf("folding %q grows: %q → %q", s, a, b)
		}
	})
}
