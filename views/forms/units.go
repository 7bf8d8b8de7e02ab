package forms

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// A units field (the units a capture ships) takes a small number and
// nothing else. A barcode scanner is a keyboard: its code, typed into a
// units field, would make "3SOCK-3P" of the 3 there. So a units field
// refuses what is no number of units — a letter, or more digits than its
// maximum could ever have plus one — and holds it aside: an enter that
// ends it hands it to scan mode as one scan (a form without scan mode
// refuses it loudly); any other key refuses it loudly. The field keeps its
// value either way.

// filler is a spec with "all that remains" on one key (the capture).
type filler interface {
	// fillAll chooses everything that remains; it returns the units.
	fillAll() int
	// chosen is the number of units chosen now.
	chosen() int
}

// fillKey chooses all that remains in a form that has it.
const fillKey = "a"

func (k *kit) focused() *field {
	if k.focus < 0 || k.focus >= len(k.fields) {
		return nil
	}
	return k.fields[k.focus]
}

// setField writes v into f and into its huh input.
func setField(f *field, v string) {
	*f.value = v
	if f.input != nil {
		f.input.Value(f.value)
	}
}

// unitsKey handles a key in the edit stage when a units field has the
// focus; done is false when the key goes on as usual.
func (k *kit) unitsKey(km tea.KeyPressMsg) (cmd tea.Cmd, done bool) {
	f := k.focused()
	if f == nil || !f.units {
		return nil, false
	}
	s := km.String()
	if k.pending != "" {
		switch {
		case lineEnd(s):
			code := k.pending
			k.pending = ""
			if k.scan != nil {
				// A burst that ends like a scan is a scan.
				cmd := k.scanOn()
				k.scanOne(code)
				return cmd, true
			}
			k.note = fmt.Sprintf("✗ %q is not a number of units: refused, %s keeps %s", code, f.title, *f.value)
			return nil, true
		case s == "backspace":
			_, n := utf8.DecodeLastRuneInString(k.pending)
			k.pending = k.pending[:len(k.pending)-n]
			return nil, true
		case km.Text != "":
			k.pending += km.Text
			return nil, true
		}
		k.note = fmt.Sprintf("✗ %q is not a number of units: refused, %s keeps %s", k.pending, f.title, *f.value)
		k.pending = ""
		return nil, true
	}
	if s == "ctrl+j" {
		return nil, true // the LF of a CR+LF: the enter before it moved on already
	}
	if km.Text == "" || s == "space" {
		k.run = ""
		return nil, false
	}
	if fl, ok := k.spec.(filler); ok && s == fillKey {
		n := fl.fillAll()
		for _, g := range k.fields {
			if g.input != nil {
				g.input.Value(g.value)
			}
		}
		k.run, k.note = "", fmt.Sprintf("All that remains is chosen: %d unit(s).", n)
		k.recheck()
		return nil, true
	}
	if k.run == "" {
		k.runFrom = *f.value
	}
	run := k.run + km.Text
	if !isDigits(run) || len(run) > len(strconv.Itoa(f.maxUnits))+1 {
		// No number of units: the field goes back to what it held
		// before this run of keys, the run waits for what ends it.
		setField(f, k.runFrom)
		k.pending, k.run = run, ""
		k.note = ""
		k.recheck()
		return nil, true
	}
	if k.run == "" && strings.TrimLeft(*f.value, "0") == "" && *f.value != "" {
		setField(f, "") // a typed digit replaces the 0 the field opened with
	}
	k.run = run
	k.note = ""
	return nil, false
}

// unitsPaste takes a paste into a units field: a small number goes in,
// anything else is a list of scans (scan mode) or refused.
func (k *kit) unitsPaste(p tea.PasteMsg) (tea.Cmd, bool) {
	f := k.focused()
	if f == nil || !f.units {
		return nil, false
	}
	v := strings.TrimSpace(p.Content)
	if isDigits(v) && len(v) <= len(strconv.Itoa(f.maxUnits))+1 {
		return nil, false
	}
	if k.scan != nil {
		cmd := k.scanOn()
		k.scanPaste(p.Content)
		return cmd, true
	}
	k.note = fmt.Sprintf("✗ %q is not a number of units: refused, %s keeps %s", trunc(Clean(v), 40), f.title, *f.value)
	return nil, true
}

// discardKey answers "discard N units?": y closes, anything else keeps
// the form.
func (k *kit) discardKey(km tea.KeyPressMsg) tea.Cmd {
	k.discarding = 0
	if km.String() == "y" || km.String() == "Y" {
		return k.closeCmd()
	}
	k.note = "Kept: nothing was discarded."
	return nil
}

// discardQuestion is asked before esc closes a form with units counted.
func (k *kit) discardQuestion() string {
	what := "chosen"
	if k.scan != nil && k.scan.counted() > 0 {
		what = "scanned"
	}
	return fmt.Sprintf("Discard %d %s unit(s)? y/n (y closes the form; n, or any other key, keeps them)", k.discarding, what)
}
