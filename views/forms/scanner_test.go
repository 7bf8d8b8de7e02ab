package forms

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"paydesk/internal/ops"
)

// scannerHost runs one form as a program, as the console's dialog stack
// does, and records what the form asks of the host. It never sleeps: the
// keys are sent, then a message that ends the program; the program takes
// its messages in order, so every key has been handled when it ends.
type scannerHost struct {
	f      Form
	submit []SubmitMsg
	closed []CloseMsg
	// asked is told of every SubmitMsg and CloseMsg: they come back from
	// commands, possibly after the keys, so a test that expects one waits
	// for it.
	asked chan struct{}
}

type scannerDone struct{}

func (h *scannerHost) Init() tea.Cmd { return h.f.Init() }

func (h *scannerHost) tell() {
	select {
	case h.asked <- struct{}{}:
	default: // nobody waits for more
	}
}

func (h *scannerHost) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case scannerDone:
		return h, tea.Quit
	case SubmitMsg:
		h.submit = append(h.submit, msg)
		h.tell()
		return h, nil
	case CloseMsg:
		h.closed = append(h.closed, msg)
		h.tell()
		return h, nil
	}
	var cmd tea.Cmd
	h.f, cmd = h.f.Update(msg)
	return h, cmd
}

func (h *scannerHost) View() tea.View { return tea.NewView(h.f.View()) }

// runForm sends msgs to a running program with the form, with no delay
// between them, and returns the host as the program left it.
func runForm(t *testing.T, f Form, msgs ...tea.Msg) *scannerHost {
	t.Helper()
	return runFormUntil(t, f, false, msgs...)
}

// runFormUntil is runForm; with asks it first waits for the form to submit
// or to ask to be closed (a generous deadline only fails a stuck test).
func runFormUntil(t *testing.T, f Form, asks bool, msgs ...tea.Msg) *scannerHost {
	t.Helper()
	f.SetSize(100, 40)
	host := &scannerHost{f: f, asked: make(chan struct{}, 8)}
	tm := teatest.NewTestModel(t, host, teatest.WithInitialTermSize(100, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	for _, m := range msgs {
		tm.Send(m)
	}
	if asks {
		select {
		case <-host.asked:
		case <-time.After(30 * time.Second):
			t.Fatal("the form never submitted nor asked to be closed")
		}
	}
	tm.Send(scannerDone{})
	return tm.FinalModel(t, teatest.WithFinalTimeout(30*time.Second)).(*scannerHost)
}

// cr, lf: what a scanner ends a code with (CR arrives as enter, LF as
// ctrl+j).
var (
	cr = tea.KeyPressMsg{Code: tea.KeyEnter}
	lf = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
)

// scan is a scanner's burst: the code's characters, then its line end.
func scan(code string, end ...tea.Msg) []tea.Msg {
	return append(typeText(code), end...)
}

func msgs(parts ...[]tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func one(m ...tea.Msg) []tea.Msg { return m }

func captureForm(opts ...CaptureOption) Form {
	return NewCapture(reservation(), ops.ModeSandbox, fixedNow, opts...)
}

func plainView(f Form) string { return stripANSI(f.View()) }

// TestScanModeIgnoresLineEnds: CR, LF, CR+LF and empty enters never leave
// scan mode, so no scan lands in a field. The scenario seen at the
// warehouse door: a CR+LF scanner, a stray enter, then the next scan —
// before, the empty line left scan mode and "SOCK-3P" was typed into the
// shoe's quantity ("2SOCK-3P"), and back in scan mode the shoes read
// "0 of 2".
func TestScanModeIgnoresLineEnds(t *testing.T) {
	tests := []struct {
		name  string
		input []tea.Msg
		want  []string // SHOE-42, SOCK-3P, SHIP
		empty int
	}{
		{"cr", msgs(one(press("ctrl+s")), scan("SHOE-42", cr), scan("SOCK-3P", cr)), []string{"1", "1", "0"}, 0},
		{"lf", msgs(one(press("ctrl+s")), scan("SHOE-42", lf), scan("SOCK-3P", lf)), []string{"1", "1", "0"}, 0},
		{"cr-lf", msgs(one(press("ctrl+s")), scan("SHOE-42", cr, lf), scan("SOCK-3P", cr, lf), scan("SHIP", cr, lf)), []string{"1", "1", "1"}, 3},
		{"stray-enter-then-scan", msgs(one(press("ctrl+s")), scan("SHOE-42", cr, lf), scan("SHOE-42", cr, lf), one(cr, cr), scan("SOCK-3P", cr, lf)),
			[]string{"2", "1", "0"}, 5},
		{"leave-and-come-back", msgs(one(press("ctrl+s")), scan("SHOE-42", cr), scan("SHOE-42", cr), one(press("ctrl+s"), press("ctrl+s")), scan("SHIP", cr)),
			[]string{"2", "0", "1"}, 0},
		{"pasted-cr-lf", one(press("ctrl+s"), paste("SHOE-42\r\nSOCK-3P\r\n\r\nSHIP\r\n")), []string{"1", "1", "1"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := runForm(t, captureForm(), tt.input...)
			k := h.f.(*kit)
			if !k.scan.on {
				t.Fatalf("scan mode left:\n%s", plainView(h.f))
			}
			got := k.spec.(*captureSpec).qty
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("line %d = %q, want %q (all %q)", i, got[i], tt.want[i], got)
				}
			}
			if k.scan.empty != tt.empty {
				t.Errorf("empty lines ignored %d, want %d", k.scan.empty, tt.empty)
			}
			if v := plainView(h.f); !strings.Contains(v, "SCAN MODE") || !strings.Contains(v, "Counted ") {
				t.Errorf("not the scan screen:\n%s", v)
			}
		})
	}
}

// TestScanListHasEveryVerdict: every scan is listed with its verdict, not
// only the last one.
func TestScanListHasEveryVerdict(t *testing.T) {
	h := runForm(t, captureForm(), msgs(one(press("ctrl+s")), scan("SHIP", cr), scan("BOGUS-1", cr), scan("SHIP", cr), scan("SHOE-42", cr))...)
	v := plainView(h.f)
	for _, want := range []string{
		"Scans: 4 · counted 2 · unknown code 1 · over the quantity 1",
		"1 ✓ counted           SHIP · Shipping: 1 of 1",
		"2 ✗ unknown code      BOGUS-1 is not an article of this reservation",
		"3 ✗ over the quantity SHIP: all 1 already counted: nothing counted",
		"4 ✓ counted           SHOE-42 · Trail running shoe, size 42: 1 of 2",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("scan list lacks %q:\n%s", want, v)
		}
	}
}

// TestScanNeverLandsInAUnitsField: a burst typed while a quantity field
// has the focus (scan mode off) never changes that field: a code ending in
// enter is counted as a scan (and scan mode opens, showing it); text that
// is no number and is not ended by enter is refused loudly; a small number
// still goes in.
func TestScanNeverLandsInAUnitsField(t *testing.T) {
	tests := []struct {
		name     string
		input    []tea.Msg
		want     []string
		scanning bool
		screen   string
	}{
		{"code-cr-lf", scan("SOCK-3P", cr, lf), []string{"0", "1", "0"}, true, "1 ✓ counted"},
		{"ean-digits", scan("4006381333931", cr), []string{"0", "0", "0"}, true, "4006381333931 is not an article"},
		{"code-starting-with-a-digit", msgs(typeText("1"), scan("SHIP", cr)), []string{"0", "0", "0"}, true, "1SHIP is not an article of this reservation"},
		{"letters-then-tab", msgs(typeText("SOCK"), one(press("tab"))), []string{"0", "0", "0"}, false, `"SOCK" is not a number of units: refused`},
		{"pending-shown", typeText("SO"), []string{"0", "0", "0"}, false, `Not a number of units, kept out of the field: "SO"`},
		{"pasted-codes", one(paste("SHOE-42\nSHIP\n")), []string{"1", "0", "1"}, true, "Scans: 2 · counted 2"},
		{"typed-number", msgs(typeText("2"), one(press("tab")), typeText("1")), []string{"2", "1", "0"}, false, "Amount to capture: 134.40 EUR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := runForm(t, captureForm(), tt.input...)
			k := h.f.(*kit)
			got := k.spec.(*captureSpec).qty
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Errorf("line %d = %q, want %q (all %q)", i, got[i], tt.want[i], got)
				}
			}
			if k.scan.on != tt.scanning {
				t.Errorf("scan mode %v, want %v", k.scan.on, tt.scanning)
			}
			if v := plainView(h.f); !strings.Contains(strings.Join(strings.Fields(v), " "), tt.screen) {
				t.Errorf("screen lacks %q:\n%s", tt.screen, v)
			}
		})
	}
}

// TestReturnScanCountsUnits: the return form has the capture form's scan
// mode (a returned parcel scanned at the warehouse door): a code + enter
// in a units field counts one unit of its line, never more than shipped
// and not refunded. Before, the text was refused: the form had no scan
// mode.
func TestReturnScanCountsUnits(t *testing.T) {
	r, txs := twoCaptures()
	h := runForm(t, NewReturn(r, txs, ops.ModeSandbox), msgs(one(press("ctrl+s")), scan("SHOE-42", cr), scan("shoe-42", cr),
		scan("SOCK-3P", cr), scan("SHOE-42", cr), scan("SHOE-42", cr), scan("4006381333931", cr))...)
	if got := h.f.(*kit).spec.(*returnSpec).units; got[0] != "3" || got[1] != "1" {
		t.Fatalf("units = %q, want 3 shoes (all that shipped) and 1 pack of socks", got)
	}
	v := strings.Join(strings.Fields(plainView(h.f)), " ")
	for _, want := range []string{"Back 4 unit(s) · 194.35 EUR", "all 3 shipped and not refunded already counted", "4006381333931 is not an article"} {
		if !strings.Contains(v, want) {
			t.Errorf("screen lacks %q:\n%s", want, v)
		}
	}
}

// TestEscAsksBeforeDiscardingUnits: esc on a capture with counted units
// asks first; n keeps them, y closes. Nothing counted: esc closes at once.
func TestEscAsksBeforeDiscardingUnits(t *testing.T) {
	scanned := msgs(one(press("ctrl+s")), scan("SHOE-42", cr), scan("SHOE-42", cr), one(press("esc")))
	tests := []struct {
		name   string
		input  []tea.Msg
		closed bool
		screen string
	}{
		{"asks", msgs(scanned, one(press("esc"))), false, "Discard 2 scanned unit(s)? y/n"},
		{"n-keeps", msgs(scanned, one(press("esc"), press("n"))), false, "Kept: nothing was discarded."},
		{"y-closes", msgs(scanned, one(press("esc"), press("y"))), true, ""},
		{"typed-asks", msgs(typeText("1"), one(press("esc"))), false, "Discard 1 chosen unit(s)? y/n"},
		{"nothing-closes", one(press("esc")), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := runFormUntil(t, captureForm(), tt.closed, tt.input...)
			if k := h.f.(*kit); !tt.closed && k.discarding == 0 && k.note == "" {
				t.Fatalf("esc neither asked nor said anything:\n%s", plainView(h.f))
			}
			if got := len(h.closed) > 0; got != tt.closed {
				t.Fatalf("closed %v, want %v:\n%s", got, tt.closed, plainView(h.f))
			}
			if !tt.closed {
				if got := h.f.(*kit).spec.(*captureSpec).qty[0]; got == "0" && tt.name != "typed-asks" {
					t.Errorf("shoes = %q after %s", got, tt.name)
				}
				if v := plainView(h.f); !strings.Contains(v, tt.screen) {
					t.Errorf("screen lacks %q:\n%s", tt.screen, v)
				}
			}
		})
	}
}

// TestScanAffixesAreTakenOff: the scanner's configured prefix and suffix
// are stripped before matching.
func TestScanAffixesAreTakenOff(t *testing.T) {
	h := runForm(t, captureForm(ScanAffixes("]C1", "#")), msgs(one(press("ctrl+s")), scan("]C1SHOE-42#", cr), scan("]C1SHIP#", cr), scan("SOCK-3P", cr))...)
	got := h.f.(*kit).spec.(*captureSpec).qty
	if strings.Join(got, ",") != "1,1,1" {
		t.Fatalf("counts %q, want 1,1,1:\n%s", got, plainView(h.f))
	}
}

// TestCaptureOpensWithNothingChosen: the capture form never ships the most
// by default: it opens with every line at 0 and enter does not reach the
// confirm step; a (shown in the help) chooses all that remains.
func TestCaptureOpensWithNothingChosen(t *testing.T) {
	h := runForm(t, captureForm(), press("enter"), press("enter"), press("enter"))
	k := h.f.(*kit)
	if k.stage != stageEdit || strings.Join(values(h.f), ",") != "0,0,0" {
		t.Fatalf("stage %d, values %q:\n%s", k.stage, values(h.f), plainView(h.f))
	}
	if v := plainView(h.f); !strings.Contains(v, "a all that remains") || !strings.Contains(v, "Nothing chosen yet") {
		t.Fatalf("help does not offer all that remains:\n%s", v)
	}
	h = runForm(t, captureForm(), press("a"), press("enter"), press("enter"), press("enter"))
	k = h.f.(*kit)
	if k.stage != stageConfirm || strings.Join(values(h.f), ",") != "2,2,1" {
		t.Fatalf("stage %d, values %q:\n%s", k.stage, values(h.f), plainView(h.f))
	}
	if v := plainView(h.f); !strings.Contains(v, "Nothing stays open") {
		t.Fatalf("confirm:\n%s", v)
	}
}
