package forms

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"paydesk/internal/ops"
	"paydesk/internal/teacmd"
)

// burstHost runs one form as a program, the way the console's dialog
// stack does: every message goes to the form, the form's commands run
// asynchronously, SubmitMsg is recorded instead of run. It knows when the
// burst is over: every key handled and every command the form started
// (timers aside) come back.
type burstHost struct {
	f      Form
	submit []SubmitMsg

	sent, handled int // keys (and pastes) sent, and handled so far
	pending       int // the form's commands on their way (timers aside)
	idle          chan struct{}
}

type burstDone struct{}

// cmdDone carries back what a tracked command returned.
type cmdDone struct{ msg tea.Msg }

func (h *burstHost) Init() tea.Cmd { return h.track(h.f.Init()) }

func (h *burstHost) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := h.update(msg)
	if h.handled == h.sent && h.pending == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
	return h, cmd
}

func (h *burstHost) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case burstDone:
		return tea.Quit
	case SubmitMsg:
		h.submit = append(h.submit, msg)
		return nil
	case cmdDone:
		h.pending--
		if b, ok := msg.msg.(tea.BatchMsg); ok {
			return tea.Batch(h.trackAll(b)...)
		}
		if cmds, ok := sequence(msg.msg); ok {
			return tea.Sequence(h.trackAll(cmds)...)
		}
		if msg.msg == nil {
			return nil
		}
		return h.update(msg.msg)
	case tea.KeyPressMsg, tea.PasteMsg:
		h.handled++
	}
	var cmd tea.Cmd
	h.f, cmd = h.f.Update(msg)
	return h.track(cmd)
}

// track follows a command of the form's until its message is back; a timer
// (a cursor's blink) is left to run on its own.
func (h *burstHost) track(cmd tea.Cmd) tea.Cmd {
	if cmd == nil || teacmd.Timer(cmd) {
		return cmd
	}
	h.pending++
	return func() tea.Msg { return cmdDone{cmd()} }
}

func (h *burstHost) trackAll(cmds []tea.Cmd) []tea.Cmd {
	out := make([]tea.Cmd, len(cmds))
	for i, c := range cmds {
		out[i] = h.track(c)
	}
	return out
}

func (h *burstHost) View() tea.View { return tea.NewView(h.f.View()) }

// burst sends every message to a running program with no delay between
// them (as a paste, a scanner or a fast typist does), waits until the
// keys are handled and what their commands bring back (huh's focus moves
// and redraws, which may come after later keys) is in, and returns the
// form as the program left it.
func burst(t *testing.T, f Form, w, h int, msgs ...tea.Msg) *burstHost {
	t.Helper()
	f.SetSize(w, h)
	idle := make(chan struct{})
	host := &burstHost{f: f, sent: len(msgs), idle: idle}
	tm := teatest.NewTestModel(t, host, teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	for _, m := range msgs {
		tm.Send(m)
	}
	select {
	case <-idle:
	case <-time.After(time.Minute): // only a stuck test
		t.Fatal("the burst's keys and commands did not come to an end")
	}
	tm.Send(burstDone{})
	return tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(*burstHost)
}

func keys(names ...string) []tea.Msg {
	out := make([]tea.Msg, len(names))
	for i, n := range names {
		out[i] = press(n)
	}
	return out
}

func paste(s string) tea.Msg { return tea.PasteMsg{Content: s} }

func values(f Form) []string {
	k := f.(*kit)
	out := make([]string, len(k.fields))
	for i, fl := range k.fields {
		out[i] = *fl.value
	}
	return out
}

// TestZeroDelayKeysLandInTheirFields sends a whole form's keys in one
// burst and checks every field's value: huh moves the focus when a
// command of its own comes back, after keys already queued, so without
// our own focus handling the capture burst below left the first line
// empty and set the second to "10".
func TestZeroDelayKeysLandInTheirFields(t *testing.T) {
	type tc struct {
		name  string
		form  func() Form
		input []tea.Msg
		want  []string
		stage stage
	}
	cat := func(parts ...[]tea.Msg) []tea.Msg {
		var out []tea.Msg
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	capture := func() Form { return NewCapture(reservation(), ops.ModeSandbox, fixedNow) }
	gift := func() Form { return NewGiftCardPay(nil, "EUR", "", ops.ModeSandbox) }
	tests := []tc{
		{"capture-zeros", capture, keys("backspace", "0", "enter", "backspace", "0", "enter", "backspace", "0"),
			[]string{"0", "0", "0"}, stageEdit},
		{"capture-to-confirm", capture, keys("backspace", "1", "enter", "backspace", "2", "enter", "backspace", "1", "enter"),
			[]string{"1", "2", "1"}, stageConfirm},
		{"capture-back-and-forth", capture, keys("backspace", "2", "tab", "backspace", "1", "shift+tab", "backspace", "1", "tab", "tab", "backspace", "0"),
			[]string{"1", "1", "0"}, stageEdit},
		{"giftcard-typed", gift, cat(keys("enter"), typeText("0000000000000000001"), keys("enter"), typeText("2450"), keys("enter"),
			typeText("24.50"), keys("enter"), typeText("INV-77"), keys("enter"), typeText("de Vries"), keys("enter"), typeText("jan@example.com")),
			[]string{"voucherb", "0000000000000000001", "2450", "24.50", "INV-77", "de Vries", "jan@example.com"}, stageEdit},
		{"giftcard-pasted", gift, []tea.Msg{press("enter"), paste("0000000000000000001"), press("enter"), paste("2450"), press("enter"), paste("24.50"), press("enter")},
			[]string{"voucherb", "0000000000000000001", "2450", "24.50", "", "", ""}, stageEdit},
	}
	for _, tt := range tests {
		for _, size := range [][2]int{{120, 36}, {80, 24}} {
			t.Run(tt.name+sizeName(size), func(t *testing.T) {
				h := burst(t, tt.form(), size[0], size[1], tt.input...)
				got := values(h.f)
				if len(got) != len(tt.want) {
					t.Fatalf("fields: got %q, want %q", got, tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("field %d (%s) = %q, want %q", i, h.f.(*kit).fields[i].title, got[i], tt.want[i])
					}
				}
				if st := h.f.(*kit).stage; st != tt.stage {
					t.Errorf("stage %d, want %d", st, tt.stage)
				}
				golden.RequireEqual(t, render(t, h.f))
			})
		}
	}
}

func sizeName(s [2]int) string {
	return "-" + itoa(s[0]) + "x" + itoa(s[1])
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
