package forms

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// scanToggle switches a form's scan mode on and off.
const scanToggle = "ctrl+s"

// lineEnd reports the keys that end a scanned code: a scanner sends CR
// (enter), LF (ctrl+j) or both, depending on its setup.
func lineEnd(k string) bool { return k == "enter" || k == "ctrl+j" || k == "ctrl+m" }

// verdict is what a scan did.
type verdict int

const (
	verdictCounted verdict = iota
	verdictUnknown         // not an article of this reservation
	verdictOver            // its line is counted in full already
)

func (v verdict) String() string {
	switch v {
	case verdictCounted:
		return "counted"
	case verdictUnknown:
		return "unknown code"
	}
	return "over the quantity"
}

// scanner is a spec that counts scanned codes: the capture form, where
// each article number (or EAN) followed by enter is one unit of its line.
// The count is the form's own quantity fields: leaving scan mode and
// coming back, or typing a quantity by hand, never loses a unit.
type scanner interface {
	// scan counts one unit for code and says what happened.
	scan(code string) (msg string, v verdict)
	// scanLines are the lines with their counts, and the running total.
	scanLines() []string
}

// scanEntry is one scan of the list, with its verdict.
type scanEntry struct {
	code    string
	verdict verdict
	msg     string
}

// scanState is the scan mode of a form: an input a barcode scanner (a
// keyboard that types fast and ends with enter) writes into.
type scanState struct {
	spec  scanner
	on    bool
	input textinput.Model
	log   []scanEntry // every scan, oldest first
	// empty counts the empty lines ignored (the LF of a CR+LF, a stray
	// enter): they never leave scan mode.
	empty int
	// prefix and suffix are what the scanner adds around each code (its
	// setup, e.g. an AIM identifier); they are taken off before matching.
	prefix, suffix string
}

// counted is the number of scans that counted a unit.
func (sc *scanState) counted() int {
	n := 0
	for _, e := range sc.log {
		if e.verdict == verdictCounted {
			n++
		}
	}
	return n
}

// scanKey handles a key or a paste in scan mode (and the toggle from the
// fields). Every code is taken inside this Update, so a scanner's burst of
// keys is read in order whatever its speed. Only ctrl+s and esc leave scan
// mode: an empty line (the LF after a CR, a second enter) is ignored, so
// the next scan can never land in a field.
func (k *kit) scanKey(msg tea.Msg) tea.Cmd {
	sc := k.scan
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch s := km.String(); {
		case s == scanToggle || s == "esc":
			if !sc.on {
				return k.scanOn()
			}
			return k.scanOff()
		case lineEnd(s):
			code := strings.TrimSpace(sc.input.Value())
			sc.input.SetValue("")
			if code == "" {
				sc.empty++
				return nil
			}
			k.scanOne(code)
			return nil
		}
		var cmd tea.Cmd
		sc.input, cmd = sc.input.Update(msg)
		return cmd
	}
	if p, ok := msg.(tea.PasteMsg); ok {
		k.scanPaste(p.Content)
	}
	return nil
}

// scanPaste takes a pasted list (or a scanner sending one paste): every
// line is a code; what follows the last line break stays in the input.
func (k *kit) scanPaste(content string) {
	sc := k.scan
	text := strings.ReplaceAll(sc.input.Value()+content, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	parts := strings.Split(text, "\n")
	for _, code := range parts[:len(parts)-1] {
		if code = strings.TrimSpace(code); code != "" {
			k.scanOne(code)
		} else {
			sc.empty++
		}
	}
	sc.input.SetValue(parts[len(parts)-1])
	sc.input.CursorEnd()
}

// scanOne counts one code, the scanner's prefix and suffix taken off.
func (k *kit) scanOne(code string) {
	sc := k.scan
	if sc.prefix != "" {
		code = strings.TrimPrefix(code, sc.prefix)
	}
	if sc.suffix != "" {
		code = strings.TrimSuffix(code, sc.suffix)
	}
	code = strings.TrimSpace(code)
	if code == "" {
		sc.empty++
		return
	}
	msg, v := sc.spec.scan(code)
	sc.log = append(sc.log, scanEntry{code: Clean(code), verdict: v, msg: msg})
	k.recheck()
}

func (k *kit) scanOn() tea.Cmd {
	sc := k.scan
	sc.on = true
	k.pending, k.note = "", ""
	sc.input = textinput.New()
	sc.input.Prompt = "scan> "
	sc.input.CharLimit = 64
	sc.input.SetWidth(max(k.width-8, 10))
	k.recheck()
	return sc.input.Focus()
}

// scanOff goes back to the fields, which hold the counts.
func (k *kit) scanOff() tea.Cmd {
	k.scan.on = false
	k.buildEdit()
	k.recheck()
	return k.form.Init()
}

func (k *kit) scanView() string {
	sc := k.scan
	var b strings.Builder
	b.WriteString(wrapWords(titleStyle.Render("SCAN MODE")+" — scan or type an article number (or EAN), then enter: one unit of its line.", k.width) + "\n")
	b.WriteString(sc.input.View() + "\n")
	lines := sc.spec.scanLines()
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	// Every scan with its verdict, newest last; as many as fit, the
	// older ones summed up above them.
	room := max(k.height-lipgloss.Height(k.chrome())-len(lines)-6, 3)
	if len(sc.log) == 0 {
		b.WriteString(mutedStyle.Render("Nothing scanned yet.") + "\n")
	} else {
		unknown, over := 0, 0
		for _, e := range sc.log {
			switch e.verdict {
			case verdictUnknown:
				unknown++
			case verdictOver:
				over++
			}
		}
		b.WriteString(fmt.Sprintf("Scans: %d · counted %d · unknown code %d · over the quantity %d\n", len(sc.log), sc.counted(), unknown, over))
		from := max(len(sc.log)-room, 0)
		if from > 0 {
			b.WriteString(mutedStyle.Render(fmt.Sprintf("  … %d earlier scan(s)", from)) + "\n")
		}
		for i := from; i < len(sc.log); i++ {
			e := sc.log[i]
			mark := "✓"
			if e.verdict != verdictCounted {
				mark = "✗"
			}
			line := ansi.Wrap(fmt.Sprintf("%3d %s %-17s %s", i+1, mark, e.verdict, e.msg), max(k.width, 20), " ")
			if e.verdict != verdictCounted {
				line = errStyle.Render(line)
			}
			b.WriteString(line + "\n")
		}
	}
	help := fmt.Sprintf("empty lines are ignored (%d) · %s or esc: back to the fields (they keep the counts)", sc.empty, scanToggle)
	b.WriteString(mutedStyle.Render(wrapWords(help, k.width)))
	return b.String()
}
