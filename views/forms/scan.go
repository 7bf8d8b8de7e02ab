package forms

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// scanToggle switches a form's scan mode on and off.
const scanToggle = "ctrl+s"

// scanner is a spec that counts scanned codes: the capture form, where
// each article number (or EAN) followed by enter is one unit of its line.
type scanner interface {
	// scanStart is called the first time scan mode opens: counting starts
	// from zero.
	scanStart()
	// scan counts one unit for code and says what happened; ok is false
	// when nothing was counted (an unknown code, a line already complete).
	scan(code string) (msg string, ok bool)
	// scanLines are the lines with their counts, and the running total.
	scanLines() []string
}

// scanState is the scan mode of a form: an input a barcode scanner (a
// keyboard that types fast and ends with enter) writes into.
type scanState struct {
	spec    scanner
	on      bool
	started bool
	input   textinput.Model
	last    string
	lastOK  bool
	count   int // codes read, counted or not
}

// scanKey handles a key or a paste in scan mode (and the toggle from the
// fields). Every code is taken inside this Update, so a scanner's burst of
// keys is read in order whatever its speed.
func (k *kit) scanKey(msg tea.Msg) tea.Cmd {
	sc := k.scan
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch km.String() {
		case scanToggle, "esc":
			if !sc.on {
				return k.scanOn()
			}
			return k.scanOff()
		case "enter":
			code := strings.TrimSpace(sc.input.Value())
			sc.input.SetValue("")
			if code == "" {
				return k.scanOff() // an empty enter: back to the fields
			}
			k.scanOne(code)
			return nil
		}
		var cmd tea.Cmd
		sc.input, cmd = sc.input.Update(msg)
		return cmd
	}
	if p, ok := msg.(tea.PasteMsg); ok {
		// A pasted list (or a scanner sending one paste): every line is a
		// code; what follows the last line break stays in the input.
		text := strings.ReplaceAll(sc.input.Value()+p.Content, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
		parts := strings.Split(text, "\n")
		for _, code := range parts[:len(parts)-1] {
			if code = strings.TrimSpace(code); code != "" {
				k.scanOne(code)
			}
		}
		sc.input.SetValue(parts[len(parts)-1])
		sc.input.CursorEnd()
	}
	return nil
}

func (k *kit) scanOne(code string) {
	sc := k.scan
	sc.last, sc.lastOK = sc.spec.scan(code)
	sc.count++
	k.recheck()
}

func (k *kit) scanOn() tea.Cmd {
	sc := k.scan
	if !sc.started {
		sc.spec.scanStart()
		sc.started = true
	}
	sc.on = true
	sc.input = textinput.New()
	sc.input.Prompt = "scan> "
	sc.input.CharLimit = 64
	sc.input.SetWidth(max(k.width-8, 10))
	k.recheck()
	return sc.input.Focus()
}

// scanOff goes back to the fields, which now hold the counts.
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
	switch {
	case sc.last == "":
		b.WriteString(mutedStyle.Render("Counting from 0. Nothing scanned yet.") + "\n")
	case sc.lastOK:
		b.WriteString(wrapWords("✓ "+sc.last, k.width) + "\n")
	default:
		b.WriteString(errStyle.Render(wrapWords("✗ "+sc.last, k.width)) + "\n")
	}
	for _, l := range sc.spec.scanLines() {
		b.WriteString(l + "\n")
	}
	b.WriteString(mutedStyle.Render(wrapWords(fmt.Sprintf("%d code(s) read · enter on an empty line, %s or esc: back to the fields (they keep the counts)", sc.count, scanToggle), k.width)))
	return b.String()
}
