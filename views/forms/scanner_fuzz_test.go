package forms

import (
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/ops"
)

// FuzzScannerInput: whatever a scanner (or a paste) sends — typed into a
// quantity field, into scan mode, or pasted — never panics, never puts
// anything but digits into a quantity field.
func FuzzScannerInput(f *testing.F) {
	for _, s := range []string{"SHOE-42\r\n", "SOCK-3P\r\r\n\n", "4006381333931\n", "]C1SHIP#\r", "12a\t", "\x1b[31mSHIP\n", "ＳＨＯＥ-42\n", ""} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, paste bool) {
		if !utf8.ValidString(in) {
			return
		}
		k := NewCapture(reservation(), ops.ModeSandbox, fixedNow, ScanAffixes("]C1", "#")).(*kit)
		k.SetSize(90, 40)
		var msgs []tea.Msg
		if paste {
			msgs = []tea.Msg{tea.PasteMsg{Content: in}, press("ctrl+s"), tea.PasteMsg{Content: in}}
		} else {
			for _, r := range in {
				switch r {
				case '\r':
					msgs = append(msgs, cr)
				case '\n':
					msgs = append(msgs, lf)
				case '\t':
					msgs = append(msgs, press("tab"))
				default:
					msgs = append(msgs, tea.KeyPressMsg{Code: r, Text: string(r)})
				}
			}
		}
		var form Form = k
		for _, m := range msgs {
			form, _ = form.Update(m)
		}
		_ = form.View()
		for i, q := range k.spec.(*captureSpec).qty {
			if q != "" && !isDigits(q) {
				t.Fatalf("line %d holds %q after %q", i, q, in)
			}
		}
	})
}
