package forms

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"paydesk/internal/ops"
)

// scanned types codes as a barcode scanner does: the characters, then
// enter, all in one burst.
func scanned(codes ...string) []tea.Msg {
	var out []tea.Msg
	for _, c := range codes {
		out = append(out, typeText(c)...)
		out = append(out, press("enter"))
	}
	return out
}

// TestScanModeAtScannerSpeed: in scan mode each code + enter counts one
// unit of its line; an unknown code and one over the quantity are said
// plainly and count nothing; the running total follows; ctrl+s goes back
// to the fields, which hold the counts. Sent with no delay between keys to
// a running program.
func TestScanModeAtScannerSpeed(t *testing.T) {
	capture := func() Form { return NewCapture(reservation(), ops.ModeSandbox, fixedNow) }
	tests := []struct {
		name     string
		input    []tea.Msg
		want     []string // SHOE-42, SOCK-3P, SHIP
		scanning bool
		screen   []string
	}{
		{"counting", append([]tea.Msg{press("ctrl+s")}, scanned("SHOE-42", "sock-3p", "SOCK-3P", "SOCK-3P", "SHOE-42", "4006381333931")...),
			[]string{"2", "2", "0"}, true, []string{"4006381333931 is not an article of this reservation", "Counted 4 unit(s) · 148.90 EUR"}},
		{"over-quantity", append([]tea.Msg{press("ctrl+s")}, scanned("SHIP", "SHIP")...),
			[]string{"0", "0", "1"}, true, []string{"already counted: nothing counted", "Counted 1 unit(s) · 4.95 EUR"}},
		{"pasted-then-fields", []tea.Msg{press("ctrl+s"), paste("SHOE-42\nSOCK-3P\nSHIP\n"), press("ctrl+s")},
			[]string{"1", "1", "1"}, false, []string{"SHOE-42 · Trail running shoe", "enter next"}},
		{"then-confirm", append(append([]tea.Msg{press("ctrl+s")}, scanned("SHOE-42", "SHIP")...), press("ctrl+s"), press("enter"), press("enter"), press("enter")),
			[]string{"1", "0", "1"}, false, []string{"Capture 64.90 EUR from Jan Jansen", "Ships: 1 × SHOE-42"}},
	}
	for _, tt := range tests {
		for _, size := range [][2]int{{120, 36}, {80, 24}} {
			t.Run(tt.name+sizeName(size), func(t *testing.T) {
				h := burst(t, capture(), size[0], size[1], tt.input...)
				k := h.f.(*kit)
				got := k.spec.(*captureSpec).qty
				for i := range tt.want {
					if got[i] != tt.want[i] {
						t.Errorf("line %d = %q, want %q (all %q)", i, got[i], tt.want[i], got)
					}
				}
				if on := k.scan.on; on != tt.scanning {
					t.Errorf("scan mode %v, want %v", on, tt.scanning)
				}
				out := render(t, h.f)
				plain := stripANSI(string(out))
				for _, s := range tt.screen {
					if !strings.Contains(plain, s) {
						t.Errorf("screen lacks %q:\n%s", s, plain)
					}
				}
				golden.RequireEqual(t, out)
			})
		}
	}
}
