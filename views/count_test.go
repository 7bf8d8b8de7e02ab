package views

import "testing"

// A list of one says "1 reservation", not "1 reservations".
func TestCountTextSingular(t *testing.T) {
	for _, tc := range []struct {
		shown, total int
		noun, want   string
	}{
		{1, 1, "reservations", "1 reservation"},
		{1, 1, "transactions", "1 transaction"},
		{1, 1, "pushes", "1 push"},
		{1, 1, "entries", "1 entry"},
		{0, 0, "reservations", "0 reservations"},
		{2, 2, "pushes", "2 pushes"},
		{1, 40, "reservations", "1 of 40 reservations"},
		{1200, 1200, "transactions", "1,200 transactions"},
	} {
		if got := countText(tc.shown, tc.total, tc.noun); got != tc.want {
			t.Errorf("countText(%d, %d, %q) = %q, want %q", tc.shown, tc.total, tc.noun, got, tc.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 reservations", 1: "1 reservation", 2: "2 reservations"} {
		if got := plural(n, "reservations"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
