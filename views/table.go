package views

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"paydesk/ui/theme"
)

// Column describes one table column.
type Column struct {
	Title string
	// Width is the column's width in cells; for a Flex column its minimum.
	Width int
	// Flex columns share what is left of the width.
	Flex bool
	// Right aligns the text right (amounts, counts).
	Right bool
	// Drop > 0 lets a narrow terminal hide the column; the highest Drop goes
	// first.
	Drop int
}

// Cell is one cell's text and the theme paint it is drawn with.
type Cell struct {
	Text  string
	Paint string
}

// Table draws a window of rows that live elsewhere: it knows the number of
// rows, the cursor and the scroll offset, and asks for the cells of only the
// rows it shows. It never renders a row outside the window, so 100,000 rows
// cost what 30 do.
type Table struct {
	theme  *theme.Theme
	cols   []Column
	shown  []int
	widths []int
	width  int
	height int // rows shown, the header excluded
	n      int
	cursor int
	offset int

	static bool // no cursor: a fixed table inside a page

	fitW []int // per column: the width its content needs (FitColumn), 0 when unset

	sortCol  int // index into cols, -1 for none
	sortDesc bool

	cells []Cell
	buf   strings.Builder
	// rows are the rows of the last frame, drawn (rowcache.go).
	rows rowCache
}

// NewTable makes a table of the given columns.
func NewTable(t *theme.Theme, cols []Column) *Table {
	return &Table{theme: t, cols: cols, sortCol: -1}
}

// staticTable renders n rows of cols at full length, without a cursor:
// the tables inside detail pages.
func staticTable(th *theme.Theme, cols []Column, width, n int, cells func(i int, out []Cell)) []string {
	t := NewTable(th, cols)
	t.static = true
	t.SetSize(width, n+1)
	t.SetLen(n)
	return strings.Split(t.View(cells), "\n")
}

// FitColumn widens column col to w cells when its content needs it: an
// identifier shown whole. Flex columns give way first; a column that can be
// dropped goes before an identifier is cut.
func (t *Table) FitColumn(col, w int) {
	if t.fitW == nil {
		t.fitW = make([]int, len(t.cols))
	}
	t.fitW[col] = w
	t.layout()
	t.clamp()
}

func (t *Table) colWidth(i int) int {
	if t.fitW != nil && t.fitW[i] > t.cols[i].Width {
		return t.fitW[i]
	}
	return t.cols[i].Width
}

// SetTheme swaps the theme (light/dark change).
func (t *Table) SetTheme(th *theme.Theme) {
	t.theme = th
	t.rows.forget()
}

// SetSize sets the width and the height including the header line.
func (t *Table) SetSize(width, height int) {
	t.width, t.height = width, max(height-1, 1)
	t.layout()
	t.clamp()
}

// SetLen tells the table how many rows there are now.
func (t *Table) SetLen(n int) {
	t.n = n
	t.clamp()
}

// Len is the number of rows.
func (t *Table) Len() int { return t.n }

// Cursor is the index of the selected row (0 when there is none).
func (t *Table) Cursor() int { return t.cursor }

// SetCursor moves the cursor to row i and scrolls it into view.
func (t *Table) SetCursor(i int) {
	t.cursor = i
	t.clamp()
}

// SetSort marks the sorted column for the header.
func (t *Table) SetSort(col int, desc bool) { t.sortCol, t.sortDesc = col, desc }

// Move moves the cursor by delta rows.
func (t *Table) Move(delta int) { t.SetCursor(t.cursor + delta) }

// Scroll moves the window by delta rows, dragging the cursor along when it
// would fall out of view (mouse wheel).
func (t *Table) Scroll(delta int) {
	maxOff := max(t.n-t.height, 0)
	t.offset = min(max(t.offset+delta, 0), maxOff)
	if t.cursor < t.offset {
		t.cursor = t.offset
	}
	if t.cursor >= t.offset+t.height {
		t.cursor = t.offset + t.height - 1
	}
	t.clamp()
}

// HandleKey moves the cursor for the navigation keys; it reports whether
// the key was one of them.
func (t *Table) HandleKey(msg tea.KeyPressMsg, k keyMapNav) bool {
	switch {
	case key.Matches(msg, k.Up):
		t.Move(-1)
	case key.Matches(msg, k.Down):
		t.Move(1)
	case key.Matches(msg, k.PageUp):
		t.Move(-t.height)
	case key.Matches(msg, k.PageDown):
		t.Move(t.height)
	case key.Matches(msg, k.Home):
		t.SetCursor(0)
	case key.Matches(msg, k.End):
		t.SetCursor(t.n - 1)
	default:
		return false
	}
	return true
}

// HandleMouse scrolls on the wheel; it reports whether it did.
func (t *Table) HandleMouse(msg tea.MouseWheelMsg) bool {
	switch msg.Button {
	case tea.MouseWheelUp:
		t.Scroll(-3)
	case tea.MouseWheelDown:
		t.Scroll(3)
	default:
		return false
	}
	return true
}

// keyMapNav is the part of the keymap a table reacts to.
type keyMapNav struct {
	Up, Down, PageUp, PageDown, Home, End key.Binding
}

func (t *Table) clamp() {
	if t.n == 0 {
		t.cursor, t.offset = 0, 0
		return
	}
	t.cursor = min(max(t.cursor, 0), t.n-1)
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+t.height {
		t.offset = t.cursor - t.height + 1
	}
	t.offset = min(max(t.offset, 0), max(t.n-t.height, 0))
}

// layout decides which columns fit and how wide each is.
func (t *Table) layout() {
	shown := make([]int, 0, len(t.cols))
	for i := range t.cols {
		shown = append(shown, i)
	}
	need := func() int {
		w := 0
		for _, i := range shown {
			w += t.colWidth(i)
		}
		return w + max(len(shown)-1, 0)
	}
	for need() > t.width {
		drop, worst := -1, 0
		for j, i := range shown {
			if t.cols[i].Drop > worst {
				drop, worst = j, t.cols[i].Drop
			}
		}
		if drop < 0 {
			break
		}
		shown = append(shown[:drop], shown[drop+1:]...)
	}
	widths := make([]int, len(shown))
	flex := 0
	for j, i := range shown {
		widths[j] = t.colWidth(i)
		if t.cols[i].Flex {
			flex++
		}
	}
	if over := need() - t.width; over > 0 {
		// Still too wide with every droppable column gone (identifiers
		// grown to their content): the flex columns (names, titles) give
		// up their minimum, down to a few cells.
		for j, i := range shown {
			if t.cols[i].Flex && over > 0 {
				take := min(over, max(widths[j]-4, 0))
				widths[j] -= take
				over -= take
			}
		}
	}
	if spare := t.width - need(); spare > 0 && flex > 0 {
		each, rest := spare/flex, spare%flex
		for j, i := range shown {
			if t.cols[i].Flex {
				widths[j] += each
				if rest > 0 {
					widths[j]++
					rest--
				}
			}
		}
	}
	t.shown, t.widths = shown, widths
	t.rows.forget()
}

// Shown reports whether column col is on screen at this width.
func (t *Table) Shown(col int) bool {
	for _, i := range t.shown {
		if i == col {
			return true
		}
	}
	return false
}

// View draws the header and the visible rows; cells fills the cells of
// row i (all columns, in column order) into out.
func (t *Table) View(cells func(i int, out []Cell)) string {
	b := &t.buf
	b.Reset()
	b.Grow((t.width + 32) * (t.height + 1))
	t.header(b)
	if cap(t.cells) < len(t.cols) {
		t.cells = make([]Cell, len(t.cols))
	}
	out := t.cells[:len(t.cols)]
	end := min(t.offset+t.height, t.n)
	if !t.static {
		t.rows.begin(t.theme.IsDark)
		defer t.rows.end()
	}
	for i := t.offset; i < end; i++ {
		for c := range out {
			out[c] = Cell{}
		}
		cells(i, out)
		b.WriteByte('\n')
		selected := i == t.cursor && !t.static
		if t.static {
			t.row(b, out, selected)
			continue
		}
		key := t.rows.keyOf(out, t.shown, selected)
		if row, ok := t.rows.get(key); ok {
			b.WriteString(row)
			continue
		}
		// The row is kept as a slice of the frame, the key as made: a
		// builder never changes what it has written.
		start := b.Len()
		t.row(b, out, selected)
		t.rows.put(key, b.String()[start:])
	}
	return b.String()
}

func (t *Table) header(b *strings.Builder) {
	var line strings.Builder
	for j, i := range t.shown {
		if j > 0 {
			line.WriteByte(' ')
		}
		title := t.cols[i].Title
		if i == t.sortCol {
			if t.sortDesc {
				title += "▼"
			} else {
				title += "▲"
			}
		}
		line.WriteString(fit(title, t.widths[j], t.cols[i].Right))
	}
	b.WriteString(t.theme.Paint(theme.PaintHeader).Apply(line.String()))
}

func (t *Table) row(b *strings.Builder, cells []Cell, selected bool) {
	if selected {
		var line strings.Builder
		for j, i := range t.shown {
			if j > 0 {
				line.WriteByte(' ')
			}
			line.WriteString(fit(cells[i].Text, t.widths[j], t.cols[i].Right))
		}
		b.WriteString(t.theme.Paint(theme.PaintSelected).Apply(line.String()))
		return
	}
	for j, i := range t.shown {
		if j > 0 {
			b.WriteByte(' ')
		}
		s := fit(cells[i].Text, t.widths[j], t.cols[i].Right)
		if cells[i].Paint != "" {
			s = t.theme.Paint(cells[i].Paint).Apply(s)
		}
		b.WriteString(s)
	}
}

// fit truncates or pads s to exactly w cells.
func fit(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	sw := width(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = width(s)
	}
	if sw == w {
		return s
	}
	pad := strings.Repeat(" ", w-sw)
	if right {
		return pad + s
	}
	return s + pad
}

// width is the display width of plain text, fast for ASCII.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}
