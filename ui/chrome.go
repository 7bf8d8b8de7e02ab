package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/internal/ops"
	"paydesk/internal/textsafe"
	"paydesk/views"
)

// fitBlock cuts or pads s to h lines and cuts lines wider than w.
func fitBlock(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "…")
		}
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// modeBadge is the gateway badge: live is inverse red and shouted.
func (a *App) modeBadge() string {
	t := a.vctx.Theme
	switch a.cfg.Mode {
	case ops.ModeLive:
		if a.width < 100 {
			return t.ModeLive.Render(" ● LIVE ")
		}
		return t.ModeLive.Render(" ● LIVE GATEWAY ")
	case ops.ModeTest:
		return t.ModeTest.Render(" TEST ")
	}
	return t.ModeSandbox.Render(" SANDBOX ")
}

func (a *App) drawTabBar() string {
	t := a.vctx.Theme
	badge := a.modeBadge()
	if a.cfg.ReadOnly {
		badge = t.Warning.Render("READ-ONLY") + " " + badge
	}
	tabs := a.tabLabels(false)
	left := t.Accent.Render("paydesk") + "  " + tabs
	if ansi.StringWidth(left)+ansi.StringWidth(badge)+1 > a.width {
		left = tabs
	}
	if ansi.StringWidth(left)+ansi.StringWidth(badge)+1 > a.width {
		left = a.tabLabels(true)
	}
	return spread(left, badge, a.width)
}

// tabLabels are the tabs in their order; compact shortens the long names
// so every tab keeps its number on a narrow terminal.
func (a *App) tabLabels(compact bool) string {
	t := a.vctx.Theme
	var parts []string
	for _, i := range a.tabOrder() {
		title := a.tabs[i].Title()
		if compact && i == TabGateway {
			title = "Gateway"
		}
		label := fmt.Sprintf("%d %s", i+1, title)
		if i > TabAttention {
			label = fmt.Sprintf("%d %s", i, title) // a saved view: 6…9
		}
		if i == TabAttention {
			label = fmt.Sprintf("0 Attention (%s)", a.attention().CountText())
			if compact {
				label = "0 Attn " + a.attention().CountText()
			}
		}
		if i == a.active {
			parts = append(parts, t.TabActive.Render(label))
		} else {
			parts = append(parts, t.TabInactive.Render(label))
		}
	}
	return strings.Join(parts, "  ")
}

func (a *App) drawStatusBar() string {
	line := a.statusLine(false, false)
	if ansi.StringWidth(line) > a.width {
		line = a.statusLine(true, false)
	}
	if ansi.StringWidth(line) > a.width {
		// Still too wide: the listener's address goes before the counts
		// that need a person (attention, unknown outcomes).
		line = a.statusLine(true, true)
	}
	t := a.vctx.Theme
	if w := ansi.StringWidth(line); w < a.width {
		line += t.Bar.Render(strings.Repeat(" ", a.width-w))
	} else if w > a.width {
		line = ansi.Truncate(line, a.width, "…")
	}
	return line
}

// statusLine is the status bar's text: gateway, listener, push counter
// (with the pushes that arrived while the console runs), rejected pushes and
// operations whose outcome is unknown. compact shortens the labels.
func (a *App) statusLine(compact, noListener bool) string {
	t := a.vctx.Theme
	label := func(full, short string) string {
		if compact {
			return t.BarKey.Render(short)
		}
		return t.BarKey.Render(full)
	}
	var segs []string
	gw := a.cfg.GatewayURL
	if gw == "" {
		gw = "none"
	}
	if compact {
		gw = strings.TrimPrefix(strings.TrimPrefix(gw, "http://"), "https://")
	}
	segs = append(segs, label("gateway ", "gw ")+t.Bar.Render(textsafe.Clean(gw)))
	if a.cfg.ListenAddr != "" && !noListener {
		segs = append(segs, label("listener ", "in ")+t.Bar.Render(textsafe.Clean(a.cfg.ListenAddr)))
	}
	pushes := fmt.Sprintf("%d", a.counts.Pushes)
	if a.sessionPushes > 0 {
		if compact {
			pushes += fmt.Sprintf(" (+%d)", a.sessionPushes)
		} else {
			pushes += fmt.Sprintf(" (+%d live)", a.sessionPushes)
		}
	}
	segs = append(segs, label("pushes ", "pushes ")+t.Bar.Render(pushes))
	if a.counts.Rejected > 0 {
		segs = append(segs, label("rejected ", "rej ")+t.Bar.Inherit(t.Failed).Render(fmt.Sprint(a.counts.Rejected)))
	}
	if n := a.pushWatch.late(a.cfg.Now()); n > 0 {
		segs = append(segs, label("no push ", "no push ")+t.Bar.Inherit(t.Warning).Render(fmt.Sprintf("⚠ %d", n)))
	}
	if a.attention().Count() > 0 {
		segs = append(segs, label("attention ", "attn ")+t.Bar.Inherit(t.Warning).Render("⚑ "+a.attention().CountText()))
	}
	unknown := t.Bar.Render("0")
	if a.counts.OutcomeUnknown > 0 {
		unknown = t.Bar.Inherit(t.Warning).Render(fmt.Sprintf("⚠ %d", a.counts.OutcomeUnknown))
	}
	segs = append(segs, label("outcome unknown ", "unknown ")+unknown)
	return t.Bar.Render(" ") + strings.Join(segs, t.BarKey.Render(" · "))
}

// footer is the status message, or the short help of what can be done now.
func (a *App) footer() string {
	t := a.vctx.Theme
	if a.status.Text != "" {
		style := t.Text
		switch a.status.Level {
		case views.LevelOK:
			style = t.OK
		case views.LevelWarn:
			style = t.Warning
		case views.LevelError:
			style = t.Failed
		}
		return ansi.Truncate(style.Render(textsafe.Clean(a.status.Text)), a.width, "…")
	}
	return ansi.Truncate(a.helpModel.ShortHelpView(a.shortHelp()), a.width, "…")
}

// shortHelp is the footer's keys: the screen's first actions, then help,
// commands and quit.
func (a *App) shortHelp() []key.Binding {
	k := a.keys
	out := []key.Binding{k.Help, k.Palette}
	for _, act := range a.actions() {
		if act.Changes && (a.cfg.ReadOnly || !a.keyAllowed(act.Key)) {
			continue
		}
		out = append(out, act.Key)
	}
	if len(a.stacks[a.active]) > 0 && !containsBinding(out, k.Back) {
		out = append(out[:2:2], append([]key.Binding{k.Back}, out[2:]...)...)
	}
	return append(out, k.NextTab, k.Quit)
}

func containsBinding(bs []key.Binding, b key.Binding) bool {
	for _, x := range bs {
		if x.Help() == b.Help() {
			return true
		}
	}
	return false
}

// actions are the keys of the screen on top, with the export the shell
// adds to the log tabs.
func (a *App) actions() []views.Action {
	acts := a.top().Actions()
	if len(a.stacks[a.active]) == 0 && (a.active == TabAudit || a.active == TabGateway) {
		acts = append(acts, views.Action{Key: a.keys.ExportCSV}, views.Action{Key: a.keys.ExportJSON})
	}
	return acts
}

// helpGroups are the help overlay's sections, all from the one keymap.
func (a *App) helpGroups() ([]string, [][]key.Binding) {
	k := a.keys
	var screen []key.Binding
	for _, act := range a.actions() {
		if act.Changes && (a.cfg.ReadOnly || !a.keyAllowed(act.Key)) {
			continue
		}
		screen = append(screen, act.Key)
	}
	titles := []string{a.top().Title(), "Moving", "Console"}
	groups := [][]key.Binding{
		screen,
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End, k.Wheel, k.Back},
		{k.Tabs, k.Tab0, k.NextTab, k.PrevTab, k.Money, k.Palette, k.Refresh, k.Help, k.Quit},
	}
	if !a.cfg.ReadOnly && a.keyAllowed(k.Batch) {
		// B opens the batch page from every tab.
		groups[2] = append(groups[2][:7:7], append([]key.Binding{k.Batch}, groups[2][7:]...)...)
	}
	if a.approvalsOn() {
		groups[2] = append(groups[2][:len(groups[2])-3:len(groups[2])-3], append([]key.Binding{k.Approvals}, groups[2][len(groups[2])-3:]...)...)
	}
	if a.cfg.Forwarding {
		groups[2] = append(groups[2][:len(groups[2])-3:len(groups[2])-3], append([]key.Binding{k.Deliveries}, groups[2][len(groups[2])-3:]...)...)
	}
	return titles, groups
}

// helpView is the help overlay: the groups packed into as many columns as
// the width allows.
func (a *App) helpView() string {
	t := a.vctx.Theme
	titles, groups := a.helpGroups()
	var blocks []string
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		blocks = append(blocks, t.Accent.Render(titles[i])+"\n"+a.helpModel.FullHelpView([][]key.Binding{g}))
	}
	inner := max(a.width-4, 20)
	var rows []string
	var row []string
	rowW := 0
	for _, b := range blocks {
		w := lipgloss.Width(b)
		if len(row) > 0 && rowW+3+w > inner {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			row = append(row, "   ")
			rowW += 3
		}
		row = append(row, b)
		rowW += w
	}
	if len(row) > 0 {
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	}
	note := t.Muted.Render("Any key closes this help. : or ctrl+p lists every action by name.")
	if a.cfg.ReadOnly {
		note = t.Warning.Render("Read-only: capture, cancel, update, refund, gift card, resend and resolve are off.") + "\n" + note
	} else if rn := a.roleNote(); rn != "" {
		note = t.Warning.Render(rn) + "\n" + note
	}
	content := t.Accent.Render("Keys") + "\n\n" + strings.Join(rows, "\n\n") + "\n\n" + note
	box := t.Box.Render(content)
	return lipgloss.Place(a.width, a.bodyHeight(), lipgloss.Center, lipgloss.Center, box)
}

// spread puts left and right on one line of width w.
func spread(left, right string, w int) string {
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+1 > w {
		left = ansi.Truncate(left, max(w-rw-1, 0), "…")
		lw = ansi.StringWidth(left)
	}
	return left + strings.Repeat(" ", max(w-lw-rw, 1)) + right
}
