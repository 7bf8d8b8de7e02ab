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

func TestGerman(t *testing.T) {
	var f Folder
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"Müller", "mueller", true},
		{"MÜLLER", "mueller", true},
		{"Mu\u0308ller", "mueller", true}, // decomposed
		{"Größe Äpfel", "groesse aepfel", true},
		{"Straße", "", false}, // ß folds to ss by itself
		{"Zola", "", false},
		{"Émile Müller", "emile mueller", true},
	} {
		got, ok := f.AppendGerman(nil, tc.in)
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("AppendGerman(%q) = %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if g, gok := German(tc.in); gok != tc.ok || gok && String(g) != tc.want {
			t.Errorf("German(%q) = %q %v", tc.in, g, gok)
		}
	}
}

func FuzzGerman(f *testing.F) {
	f.Add("Müller")
	f.Add("Mu\u0308ller ß")
	var folder Folder
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := folder.AppendGerman([]byte("x"), s)
		if g, gok := German(s); gok != ok || ok && string(got) != "x"+String(g) {
			t.Fatalf("AppendGerman(%q) = %q %v, German %q %v", s, got, ok, g, gok)
		}
		if !ok && string(got) != "x" {
			t.Fatalf("AppendGerman(%q) appended %q without umlauts", s, got)
		}
	})
}
