package views

import (
	"bytes"
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/internal/textsafe"
)

// pane is a scrollable page of prepared lines (the detail pages). Only the
// visible lines are joined for a frame.
type pane struct {
	ctx    *Context
	lines  []string
	offset int
	height int
	width  int
}

func (p *pane) setLines(lines []string) {
	p.lines = lines
	p.clamp()
}

func (p *pane) setHeight(h int) {
	p.height = max(h, 1)
	p.clamp()
}

func (p *pane) clamp() {
	p.offset = min(max(p.offset, 0), max(len(p.lines)-p.height, 0))
}

// update scrolls for the navigation keys and the wheel.
func (p *pane) update(msg tea.Msg) bool {
	k := p.ctx.Keys
	switch msg := msg.(type) {
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			p.offset -= 3
		case tea.MouseWheelDown:
			p.offset += 3
		default:
			return false
		}
	case tea.KeyPressMsg:
		switch {
		case keyIs(msg, k.Up):
			p.offset--
		case keyIs(msg, k.Down):
			p.offset++
		case keyIs(msg, k.PageUp):
			p.offset -= p.height
		case keyIs(msg, k.PageDown):
			p.offset += p.height
		case keyIs(msg, k.Home):
			p.offset = 0
		case keyIs(msg, k.End):
			p.offset = len(p.lines)
		default:
			return false
		}
	default:
		return false
	}
	p.clamp()
	return true
}

func (p *pane) view() string {
	end := min(p.offset+p.height, len(p.lines))
	var b strings.Builder
	for i := p.offset; i < end; i++ {
		if i > p.offset {
			b.WriteByte('\n')
		}
		l := p.lines[i]
		if p.width > 0 && ansi.StringWidth(l) > p.width {
			l = ansi.Truncate(l, p.width, "…")
		}
		b.WriteString(l)
	}
	for i := end - p.offset; i < p.height; i++ {
		b.WriteByte('\n')
	}
	return b.String()
}

// scrollHint says where in the page the window is.
func (p *pane) scrollHint() string {
	if len(p.lines) <= p.height {
		return ""
	}
	return itoa(p.offset+1) + "–" + itoa(min(p.offset+p.height, len(p.lines))) + " of " + itoa(len(p.lines)) + " lines"
}

// prettyBody indents a JSON body; a body that is not JSON comes back as it
// is. Either way every line is cleaned.
func prettyBody(body []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err == nil {
		return cleanLines(b.String())
	}
	return cleanLines(string(body))
}

// cleanLines cleans s and keeps its line breaks.
func cleanLines(s string) string { return textsafe.CleanLines(s) }
