package views

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/ui/keys"
	"paydesk/ui/theme"
)

// asyncRows is the row count from which a list held in memory is read in
// commands instead of inside Update, so typing never waits for it.
const asyncRows = 5000

// listControls is the keyboard of a list (pagedList): the filter prompt,
// the filter, the sort column and direction. Its methods say whether the
// list must be read again.
type listControls struct {
	sortCol  int
	sortDesc bool
	query    string
	prompt   bool // the filter prompt has the keyboard
}

// controlKey applies a list key (filter, sort, reverse, clear) outside the
// prompt: handled says the key was one of them, changed that the question
// changed.
func (c *listControls) controlKey(msg tea.KeyPressMsg, k *keys.KeyMap, sortable []int) (handled, changed bool) {
	switch {
	case key.Matches(msg, k.Filter):
		c.prompt = true
		return true, false
	case key.Matches(msg, k.Sort) && len(sortable) > 0:
		i := slices.Index(sortable, c.sortCol)
		c.sortCol = sortable[(i+1)%len(sortable)]
		return true, true
	case key.Matches(msg, k.Reverse) && len(sortable) > 0:
		c.sortDesc = !c.sortDesc
		return true, true
	case key.Matches(msg, k.Back) && c.query != "":
		c.query = ""
		return true, true
	}
	return false, false
}

// promptKey applies a key typed in the open prompt; true when the filter
// changed.
func (c *listControls) promptKey(msg tea.KeyPressMsg) bool {
	q, closed, changed := promptEdit(c.query, msg)
	c.query = q
	if closed {
		c.prompt = false
	}
	return changed
}

// paste adds pasted text to the filter while the prompt is open; true when
// it did.
func (c *listControls) paste(msg tea.PasteMsg) bool {
	if !c.prompt {
		return false
	}
	c.query += clean(msg.Content)
	return true
}

// ifChanged runs again (recompute, restart) when the question changed.
func ifChanged(changed bool, again func() tea.Cmd) tea.Cmd {
	if !changed {
		return nil
	}
	return again()
}

// promptEdit applies a key typed in a list's filter prompt to query: the
// query after it, whether the prompt closes, whether the query changed.
func promptEdit(query string, msg tea.KeyPressMsg) (q string, closed, changed bool) {
	switch msg.String() {
	case "enter", "down", "up", "tab":
		return query, true, false
	case "esc":
		return "", true, query != ""
	case "backspace", "ctrl+h":
		if query == "" {
			// Stays in the filter: leaving here would hand the next letters
			// to the list, where they are commands (a search that opened a
			// form and wrote exports).
			return query, false, false
		}
		r := []rune(query)
		return string(r[:len(r)-1]), false, true
	case "ctrl+u":
		return "", false, query != ""
	case "ctrl+w":
		q := strings.TrimRight(query, " ")
		if i := strings.LastIndex(q, " "); i >= 0 {
			return q[:i+1], false, true
		}
		return "", false, true
	}
	if t := msg.Text; t != "" && msg.Mod&^tea.ModShift == 0 {
		return query + clean(t), false, true
	}
	return query, false, false
}

// promptLine is the left of a list's info line: the open prompt, the
// filter in force, or how to start one.
func promptLine(t *theme.Theme, prompt bool, query string) string {
	switch {
	case prompt:
		return t.Accent.Render("/") + " " + query + t.Accent.Render("▏")
	case query != "":
		return t.Muted.Render("filter: ") + query + t.Muted.Render("  (esc clears)")
	}
	return t.Muted.Render("/ to filter")
}
