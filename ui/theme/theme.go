package theme

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
)

// Theme holds every style the console draws with. Screens take styles from
// here and never pick raw colours, so light and dark terminals both read well.
type Theme struct {
	IsDark bool

	Text     lipgloss.Style // body text, no colour
	Muted    lipgloss.Style // secondary text, hints, separators
	Accent   lipgloss.Style // headings, keys in the help
	OK       lipgloss.Style // success: captured, 190, valid signature
	Pending  lipgloss.Style // waiting: awaiting customer, 79x
	Failed   lipgloss.Style // failure: declined, rejected, 4xx/690
	Warning  lipgloss.Style // needs attention: near the 14-day limit, outcome unknown
	Selected lipgloss.Style // the cursor row
	Header   lipgloss.Style // table column titles

	TabActive   lipgloss.Style
	TabInactive lipgloss.Style
	Bar         lipgloss.Style // the status bar background
	BarKey      lipgloss.Style // a label inside the status bar

	ModeSandbox lipgloss.Style
	ModeTest    lipgloss.Style
	// ModeLive is the badge of a live gateway: inverse red and bold, so real
	// money is unmistakable on any terminal.
	ModeLive lipgloss.Style

	Box      lipgloss.Style // overlays: help, palette
	HelpKey  lipgloss.Style
	HelpDesc lipgloss.Style

	paints map[string]Paint
}

// New builds the theme for a dark or a light background.
func New(isDark bool) *Theme {
	ld := lipgloss.LightDark(isDark)
	c := func(light, dark string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dark)) }

	green := c("#1A7F37", "#57D17A")
	yellow := c("#9A6700", "#E3B341")
	red := c("#CF222E", "#FF6B6B")
	orange := c("#BC4C00", "#FFA657")
	blue := c("#0550AE", "#79C0FF")
	grey := c("#6E7781", "#8B949E")
	selBg := c("#D0E4FF", "#264F78")
	selFg := c("#000000", "#FFFFFF")
	barBg := c("#E6E8EB", "#262A31")
	barFg := c("#24292F", "#D0D7DE")

	t := &Theme{IsDark: isDark}
	t.Text = lipgloss.NewStyle()
	t.Muted = lipgloss.NewStyle().Foreground(grey)
	t.Accent = lipgloss.NewStyle().Foreground(blue).Bold(true)
	t.OK = lipgloss.NewStyle().Foreground(green)
	t.Pending = lipgloss.NewStyle().Foreground(yellow)
	t.Failed = lipgloss.NewStyle().Foreground(red)
	t.Warning = lipgloss.NewStyle().Foreground(orange).Bold(true)
	t.Selected = lipgloss.NewStyle().Foreground(selFg).Background(selBg).Bold(true)
	t.Header = lipgloss.NewStyle().Foreground(grey).Bold(true).Underline(true)
	t.TabActive = lipgloss.NewStyle().Foreground(blue).Bold(true).Underline(true)
	t.TabInactive = lipgloss.NewStyle().Foreground(grey)
	t.Bar = lipgloss.NewStyle().Foreground(barFg).Background(barBg)
	t.BarKey = lipgloss.NewStyle().Foreground(grey).Background(barBg)
	t.ModeSandbox = lipgloss.NewStyle().Foreground(c("#FFFFFF", "#0D1117")).Background(green).Bold(true)
	t.ModeTest = lipgloss.NewStyle().Foreground(c("#FFFFFF", "#0D1117")).Background(blue).Bold(true)
	t.ModeLive = lipgloss.NewStyle().Foreground(lipgloss.Color("#FFFFFF")).Background(lipgloss.Color("#D00000")).Bold(true).Reverse(false).Blink(false)
	t.Box = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(blue).Padding(0, 1)
	t.HelpKey = lipgloss.NewStyle().Foreground(blue).Bold(true)
	t.HelpDesc = lipgloss.NewStyle()

	t.paints = map[string]Paint{}
	for name, s := range map[string]lipgloss.Style{
		"text": t.Text, "muted": t.Muted, "accent": t.Accent, "ok": t.OK, "pending": t.Pending,
		"failed": t.Failed, "warning": t.Warning, "selected": t.Selected, "header": t.Header,
	} {
		t.paints[name] = paintOf(s)
	}
	return t
}

// Paint is a style reduced to the escape sequences around its text: a fast
// way to colour thousands of table cells (lipgloss renders are slow per
// cell). It only suits styles without padding, borders or width.
type Paint struct{ pre, post string }

// Apply wraps s in the paint.
func (p Paint) Apply(s string) string {
	if p.pre == "" || s == "" {
		return s
	}
	return p.pre + s + p.post
}

// paintOf renders a marker to learn the escape sequences a style puts
// around text.
func paintOf(s lipgloss.Style) Paint {
	const marker = "\x00"
	r := s.Render(marker)
	i := strings.Index(r, marker)
	if i < 0 {
		return Paint{}
	}
	return Paint{pre: r[:i], post: r[i+len(marker):]}
}

// Semantic names of the paints a table cell can ask for.
const (
	PaintText     = "text"
	PaintMuted    = "muted"
	PaintAccent   = "accent"
	PaintOK       = "ok"
	PaintPending  = "pending"
	PaintFailed   = "failed"
	PaintWarning  = "warning"
	PaintSelected = "selected"
	PaintHeader   = "header"
)

// Paint returns the named paint; an unknown name paints nothing.
func (t *Theme) Paint(name string) Paint { return t.paints[name] }
