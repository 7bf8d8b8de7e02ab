package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"paydesk/internal/textsafe"
)

// paletteItem is one action in the command palette.
type paletteItem struct {
	binding  key.Binding
	group    string
	disabled string // why it cannot run now ("" when it can)
}

// palette lists every action of the current screen and the console by
// name; typing narrows it, enter runs the action as if its key was pressed.
type palette struct {
	items  []paletteItem
	query  string
	cursor int
}

func newPalette(a *App) *palette {
	p := &palette{}
	seen := map[string]bool{}
	add := func(group string, b key.Binding, changes bool) {
		h := b.Help()
		if h.Desc == "" || seen[h.Desc] {
			return
		}
		seen[h.Desc] = true
		it := paletteItem{binding: b, group: group}
		if changes && a.cfg.ReadOnly {
			it.disabled = "read-only"
		} else if changes && !a.keyAllowed(b) {
			// Greyed, not hidden: the palette is where one looks up an
			// action by name, and learns it is another role's.
			it.disabled = "not for role " + string(a.cfg.Ops.Principal(a.opsCtx()).Role)
		}
		p.items = append(p.items, it)
	}
	top := a.top()
	for _, act := range a.actions() {
		add(top.Title(), act.Key, act.Changes)
	}
	k := a.keys
	if len(a.stacks[a.active]) > 0 {
		add("Moving", k.Back, false)
	}
	for _, b := range []key.Binding{k.Tab0, k.Tab1, k.Tab2, k.Tab3, k.Tab4, k.Tab5, k.NextTab, k.PrevTab} {
		add("Tabs", b, false)
	}
	add("Console", k.Batch, true)
	add("Console", k.Money, false)
	if a.approvalsOn() {
		add("Console", k.Approvals, false)
	}
	if a.cfg.Forwarding {
		add("Console", k.Deliveries, false)
	}
	for _, b := range []key.Binding{k.Refresh, k.Help, k.Quit} {
		add("Console", b, false)
	}
	return p
}

func (p *palette) matches() []paletteItem {
	q := strings.ToLower(strings.TrimSpace(p.query))
	if q == "" {
		return p.items
	}
	var out []paletteItem
	for _, it := range p.items {
		h := it.binding.Help()
		if strings.Contains(strings.ToLower(h.Desc+" "+h.Key+" "+it.group), q) {
			out = append(out, it)
		}
	}
	return out
}

func (p *palette) paste(s string) { p.query += textsafe.Clean(s) }

func (a *App) paletteKey(msg tea.KeyPressMsg) tea.Cmd {
	p := a.palette
	items := p.matches()
	switch msg.String() {
	case "esc", "ctrl+p":
		a.palette = nil
		return nil
	case "up", "ctrl+k":
		p.cursor = max(p.cursor-1, 0)
		return nil
	case "down", "ctrl+j", "tab":
		p.cursor = min(p.cursor+1, max(len(items)-1, 0))
		return nil
	case "backspace":
		if r := []rune(p.query); len(r) > 0 {
			p.query = string(r[:len(r)-1])
			p.cursor = 0
		}
		return nil
	case "enter":
		a.palette = nil
		if len(items) == 0 {
			return nil
		}
		it := items[min(p.cursor, len(items)-1)]
		if it.disabled != "" {
			a.status.Text = it.binding.Help().Desc + ": off (" + it.disabled + ")"
			return nil
		}
		keys := it.binding.Keys()
		if len(keys) == 0 {
			return nil
		}
		press := keyPress(keys[0])
		return func() tea.Msg { return press }
	}
	if msg.Text != "" {
		p.query += textsafe.Clean(msg.Text)
		p.cursor = 0
	}
	return nil
}

// keyPress makes the key event a binding's key name stands for.
func keyPress(name string) tea.KeyPressMsg {
	named := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "backspace": tea.KeyBackspace, "space": tea.KeySpace,
	}
	var mod tea.KeyMod
	for {
		switch {
		case strings.HasPrefix(name, "ctrl+"):
			mod |= tea.ModCtrl
			name = name[5:]
			continue
		case strings.HasPrefix(name, "shift+"):
			mod |= tea.ModShift
			name = name[6:]
			continue
		case strings.HasPrefix(name, "alt+"):
			mod |= tea.ModAlt
			name = name[4:]
			continue
		}
		break
	}
	if r, ok := named[name]; ok {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	r := []rune(name)
	if len(r) != 1 {
		return tea.KeyPressMsg{}
	}
	if mod != 0 {
		return tea.KeyPressMsg{Code: r[0], Mod: mod}
	}
	return tea.KeyPressMsg{Code: r[0], Text: name}
}

func (a *App) paletteView() string {
	t := a.vctx.Theme
	p := a.palette
	items := p.matches()
	w := min(max(a.width-8, 30), 70)
	rows := max(a.bodyHeight()-6, 3)
	var b strings.Builder
	b.WriteString(t.Accent.Render(": ") + p.query + t.Accent.Render("▏") + "\n")
	b.WriteString(t.Muted.Render(strings.Repeat("─", w)) + "\n")
	start := 0
	if p.cursor >= rows {
		start = p.cursor - rows + 1
	}
	if len(items) == 0 {
		b.WriteString(t.Muted.Render("no action matches"))
	}
	for i := start; i < len(items) && i < start+rows; i++ {
		it := items[i]
		h := it.binding.Help()
		right := it.group
		if it.disabled != "" {
			right = it.disabled
		}
		line := spread(h.Desc, right+"  "+h.Key, w)
		switch {
		case i == p.cursor:
			line = t.Selected.Render(line)
		case it.disabled != "":
			line = t.Muted.Render(line)
		}
		b.WriteString(line)
		if i < len(items)-1 && i < start+rows-1 {
			b.WriteByte('\n')
		}
	}
	box := t.Box.Render(t.Accent.Render("Commands") + "  " + t.Muted.Render("type to narrow · enter runs · esc closes") + "\n" + b.String())
	return lipgloss.Place(a.width, a.bodyHeight(), lipgloss.Center, lipgloss.Top, box)
}
