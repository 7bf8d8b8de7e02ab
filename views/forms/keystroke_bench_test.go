package forms

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/ops"
)

// BenchmarkFormKeystroke is the work of one typed character in a form
// with the frame it draws: the gift card form's invoice field (the field
// a scanner or a paste fills fastest), key and View together, as the
// console does for every key.
func BenchmarkFormKeystroke(b *testing.B) {
	f := NewGiftCardPay(nil, "EUR", "", ops.ModeSandbox)
	f.SetSize(100, 40)
	f.Init()
	// Past the provider and card fields, into a free text one.
	for _, m := range []tea.Msg{press("enter"), press("tab"), press("tab"), press("tab"), press("tab")} {
		f, _ = f.Update(m)
	}
	keys := []tea.Msg{press("a"), press("backspace")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _ = f.Update(keys[i%2])
		_ = f.View()
	}
}
