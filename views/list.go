package views

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/ui/keys"
	"paydesk/ui/theme"
)

// asyncRows is the row count from which sorting and filtering run in a
// command instead of inside Update, so typing never waits for them.
const asyncRows = 5000

// rowSpec is what a list needs to know about its row type.
type rowSpec[R any] struct {
	key      func(R) string
	haystack func(R) string // lower-case text the filter searches
	// appendHay, when set, appends the haystack to dst without building a
	// string (laying out 100,000 rows' text in one block).
	appendHay func(dst []byte, r R, f *fold.Folder) []byte
	// compare orders two rows by column col (ascending).
	compare func(a, b R, col int) int
	// intKey, when it knows column col, gives a number that orders rows
	// like compare (ties broken by position): sorting by it touches no row
	// after the keys are read.
	intKey func(r R, col int) (int64, bool)
	// sortable lists the columns s cycles through.
	sortable []int
	// keep, when set, returns a further filter (push type and status) for
	// the current settings; it is called in Update, the filter it returns
	// runs in a command.
	keep func() func(R) bool
	// where, when set, makes the typed filter the filter language's
	// (internal/query, the command line's --filter) checked against
	// filter: where keeps a row the parsed query keeps, words included,
	// and haystack is not used for the filter.
	filter query.List
	where  func(R, *query.Query) bool
}

// listView is one computed state of a list: all rows, the rows in sort
// order, and the sorted rows that pass the filter. It is immutable once made,
// so a command may compute the next one while the screen draws this one.
type listView[R any] struct {
	rows     []R
	sorted   []int32
	idx      []int32
	sortCol  int
	sortDesc bool
	query    string
	keepGen  uint64
	hay      *hayIndex // the rows' search text in one block, built on the first big filter
}

// listDoneMsg carries a computed listView back to its list.
type listDoneMsg[R any] struct {
	list *list[R]
	gen  uint64
	view *listView[R]
}

// listTab is what the list tabs (reservations, transactions, pushes)
// share: their list, the screen size and the last error reading rows.
type listTab[R any] struct {
	ctx    *Context
	list   *list[R]
	width  int
	height int
	err    error
}

// SetSize sets the screen size.
func (s *listTab[R]) SetSize(w, h int) {
	s.width, s.height = w, h
	s.list.table.SetSize(w, h-1)
}

// Capturing is true while the filter prompt is open.
func (s *listTab[R]) Capturing() bool { return s.list.prompt }

// keyLeft gives msg to the list (moving, filtering, sorting, the wheel)
// and returns the key press it left for the tab, if any.
func (s *listTab[R]) keyLeft(msg tea.Msg) (tea.KeyPressMsg, tea.Cmd, bool) {
	cmd, done := s.list.update(msg)
	if done {
		return tea.KeyPressMsg{}, cmd, false
	}
	key, ok := msg.(tea.KeyPressMsg)
	return key, nil, ok
}

// page is the tab's screen: the info line over body, padded to the height.
func (s *listTab[R]) page(info, body string) string {
	return info + "\n" + padLines(body, s.height-1)
}

// readError is the body shown when the rows could not be read.
func (s *listTab[R]) readError() string {
	return s.ctx.Theme.Failed.Render(loadErrorText(s.err))
}

// list is the engine of every list screen: the rows, the sort and filter
// state, the filter prompt and the table.
type list[R any] struct {
	ctx   *Context
	spec  rowSpec[R]
	table *Table

	rows     []R // latest data; the view may lag behind while a job runs
	view     *listView[R]
	keepGen  uint64 // bumped when spec.keep changes meaning
	whereErr error  // the typed filter, refused by the language (spec.where): no rows, the error shown
	listControls

	gen      uint64
	busy     bool
	loaded   bool
	onCursor string // key of the row under the cursor, kept across recomputes
}

func newList[R any](ctx *Context, cols []Column, spec rowSpec[R], sortCol int, desc bool) *list[R] {
	l := &list[R]{ctx: ctx, spec: spec, table: NewTable(ctx.Theme, cols), listControls: listControls{sortCol: sortCol, sortDesc: desc}}
	l.view = &listView[R]{sortCol: sortCol, sortDesc: desc}
	l.table.SetSort(sortCol, desc)
	return l
}

// setRows replaces the data and recomputes.
// takeRows applies a load: an error is kept for the screen to show; rows
// replace the list (full) or update it in place (live changes).
func (l *list[R]) takeRows(full bool, rows []R, err error, errp *error) tea.Cmd {
	*errp = err
	if err != nil {
		return nil
	}
	if full {
		return l.setRows(rows)
	}
	return l.upsert(rows)
}

func (l *list[R]) setRows(rows []R) tea.Cmd {
	l.rows = rows
	l.loaded = true
	return l.recompute()
}

// upsert replaces rows with the same key and adds new ones.
func (l *list[R]) upsert(rows []R) tea.Cmd {
	if len(rows) == 0 {
		return nil
	}
	pos := make(map[string]int, len(rows))
	for i, r := range rows {
		pos[l.spec.key(r)] = i
	}
	next := make([]R, len(l.rows), len(l.rows)+len(rows))
	copy(next, l.rows)
	for i, r := range next {
		if j, ok := pos[l.spec.key(r)]; ok {
			next[i] = rows[j]
			delete(pos, l.spec.key(r))
		}
	}
	for _, r := range rows {
		if _, ok := pos[l.spec.key(r)]; ok {
			next = append(next, r)
		}
	}
	return l.setRows(next)
}

// selected returns the row under the cursor.
func (l *list[R]) selected() (R, bool) {
	var zero R
	if l.view == nil || len(l.view.idx) == 0 {
		return zero, false
	}
	return l.view.rows[l.view.idx[l.table.Cursor()]], true
}

// visible returns the filtered rows in order (a snapshot for export).
func (l *list[R]) visible() []R {
	out := make([]R, len(l.view.idx))
	for i, j := range l.view.idx {
		out[i] = l.view.rows[j]
	}
	return out
}

// len is the number of rows that pass the filter.
func (l *list[R]) len() int { return len(l.view.idx) }

// at returns the i-th visible row.
func (l *list[R]) at(i int) R { return l.view.rows[l.view.idx[i]] }

// recompute starts computing the view for the current rows, sort and
// filter: at once for small lists, in a command for big ones.
func (l *list[R]) recompute() tea.Cmd {
	// The cursor stays on its row across a recompute, except at the top: a
	// cursor on the first row follows the newest rows in (like tail -f).
	l.onCursor = ""
	if r, ok := l.selected(); ok && l.table.Cursor() > 0 {
		l.onCursor = l.spec.key(r)
	}
	l.gen++
	gen, prev := l.gen, l.view
	rows, col, desc, q, kg := l.rows, l.sortCol, l.sortDesc, l.query, l.keepGen
	var keep func(R) bool
	if l.spec.keep != nil {
		keep = l.spec.keep()
	}
	if l.spec.where != nil {
		keep, q = l.whereKeep(keep, q)
	}
	spec := l.spec
	job := func() *listView[R] { return computeView(spec, keep, prev, rows, col, desc, q, kg) }
	if len(rows) < asyncRows {
		return l.apply(job())
	}
	l.busy = true
	return func() tea.Msg { return listDoneMsg[R]{list: l, gen: gen, view: job()} }
}

// whereKeep turns the typed filter q into a row filter in the filter
// language, with keep: the words are the language's, so no text is left
// for the haystack. A query that does not parse keeps nothing and is
// shown (whereErr). Typing may widen a query ("amount:<1" to
// "amount:<10"), so each one filters the whole list.
func (l *list[R]) whereKeep(keep func(R) bool, q string) (func(R) bool, string) {
	l.whereErr = nil
	if q == "" {
		return keep, ""
	}
	w, err := l.ctx.ParseFilter(q, l.spec.filter)
	if err != nil {
		l.whereErr = err
		return func(R) bool { return false }, ""
	}
	where := l.spec.where
	return func(r R) bool { return (keep == nil || keep(r)) && where(r, &w) }, ""
}

// hayMsg carries the search text block of a rows snapshot, prepared in
// the background after the first frame so the first keystroke only scans.
type hayMsg[R any] struct {
	list *list[R]
	rows []R
	hay  *hayIndex
}

func sameSlice[R any](a, b []R) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// prepareHay builds the search text of big lists in the background.
func (l *list[R]) prepareHay(v *listView[R]) tea.Cmd {
	if v.hay != nil || len(v.rows) < asyncRows || l.spec.where != nil {
		return nil // a list in the filter language never searches the block
	}
	rows, spec := v.rows, l.spec
	return func() tea.Msg { return hayMsg[R]{list: l, rows: rows, hay: buildHay(rows, spec)} }
}

func (l *list[R]) apply(v *listView[R]) tea.Cmd {
	defer l.keepCursor(v)
	l.view = v
	l.busy = false
	l.table.SetSort(v.sortCol, v.sortDesc)
	l.table.SetLen(len(v.idx))
	return l.prepareHay(v)
}

func (l *list[R]) keepCursor(v *listView[R]) {
	if l.onCursor != "" {
		for i, j := range v.idx {
			if l.spec.key(v.rows[j]) == l.onCursor {
				l.table.SetCursor(i)
				return
			}
		}
	}
}

// computeView sorts and filters, reusing what prev already did: the same
// rows and sort keep the sort order; a query that extends prev's filters
// prev's result only (typing narrows, it never rescans).
func computeView[R any](spec rowSpec[R], keep func(R) bool, prev *listView[R], rows []R, col int, desc bool, q string, keepGen uint64) *listView[R] {
	v := &listView[R]{rows: rows, sortCol: col, sortDesc: desc, query: q, keepGen: keepGen}
	sameRows := prev != nil && sameSlice(prev.rows, rows)
	if sameRows && prev.sortCol == col && prev.sortDesc == desc && prev.sorted != nil {
		v.sorted = prev.sorted
	} else {
		v.sorted = sortRows(spec, rows, col, desc)
	}
	if sameRows {
		v.hay = prev.hay
	}
	from := v.sorted
	if sameRows && prev.sortCol == col && prev.sortDesc == desc && prev.keepGen == keepGen &&
		prev.idx != nil && prev.query != "" && strings.HasPrefix(q, prev.query) {
		from = prev.idx
	}
	words := strings.Fields(fold.String(q))
	if len(words) > 0 && len(rows) >= asyncRows {
		if v.hay == nil { // typed before the background block was ready
			v.hay = buildHay(rows, spec)
		}
		v.idx = hayFilter(v.hay, words, keep, rows, from)
		return v
	}
	v.idx = filterRows(spec.haystack, keep, rows, from, q)
	return v
}

func sortRows[R any](spec rowSpec[R], rows []R, col int, desc bool) []int32 {
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	if col < 0 || spec.compare == nil || len(rows) == 0 {
		return idx
	}
	sign := 1
	if desc {
		sign = -1
	}
	if spec.intKey != nil {
		if _, ok := spec.intKey(rows[0], col); ok {
			type kv struct {
				k int64
				i int32
			}
			kvs := make([]kv, len(rows))
			for i, r := range rows {
				k, _ := spec.intKey(r, col)
				kvs[i] = kv{k, int32(i)}
			}
			slices.SortFunc(kvs, func(a, b kv) int {
				if c := cmp.Compare(a.k, b.k); c != 0 {
					return sign * c
				}
				return cmp.Compare(a.i, b.i)
			})
			for i, x := range kvs {
				idx[i] = x.i
			}
			return idx
		}
	}
	slices.SortFunc(idx, func(a, b int32) int {
		if c := spec.compare(rows[a], rows[b], col); c != 0 {
			return sign * c
		}
		return cmp.Compare(a, b)
	})
	return idx
}

// hayIndex is every row's search text in one block of memory, so a filter
// scans it at memory speed instead of visiting 100,000 rows one by one.
type hayIndex struct {
	buf    []byte
	starts []int32 // starts[i] is where row i's text begins; one extra at the end
}

func buildHay[R any](rows []R, spec rowSpec[R]) *hayIndex {
	h := &hayIndex{buf: make([]byte, 0, 128*len(rows)), starts: make([]int32, len(rows)+1)}
	var f fold.Folder
	for i, r := range rows {
		h.starts[i] = int32(len(h.buf))
		if spec.appendHay != nil {
			h.buf = spec.appendHay(h.buf, r, &f)
		} else {
			h.buf = append(h.buf, spec.haystack(r)...)
		}
		h.buf = append(h.buf, '\n') // never in a query: rows cannot run into each other
	}
	h.starts[len(rows)] = int32(len(h.buf))
	return h
}

// hayFilter keeps the rows of from (in from's order) whose text holds
// every word and that keep accepts.
func hayFilter[R any](h *hayIndex, words []string, keep func(R) bool, rows []R, from []int32) []int32 {
	if len(from) < len(rows)/8 {
		// Few candidates (the filter narrows what the last keystroke found):
		// look at theirs only.
		needles := make([][]byte, len(words))
		for i, w := range words {
			needles[i] = []byte(w)
		}
		out := make([]int32, 0, len(from)/2+16)
	next:
		for _, i := range from {
			text := h.buf[h.starts[i]:h.starts[i+1]]
			for _, n := range needles {
				if !bytes.Contains(text, n) {
					continue next
				}
			}
			if keep == nil || keep(rows[i]) {
				out = append(out, i)
			}
		}
		return out
	}
	hits := make([]uint64, (len(rows)+63)/64)
	cur := hits
	for wi, w := range words {
		if wi == 1 {
			cur = make([]uint64, len(hits))
		} else if wi > 1 {
			clear(cur)
		}
		needle := []byte(w)
		row, off := 0, 0
		for off < len(h.buf) {
			j := bytes.Index(h.buf[off:], needle)
			if j < 0 {
				break
			}
			pos := int32(off + j)
			for h.starts[row+1] <= pos {
				row++
			}
			cur[row>>6] |= 1 << (row & 63)
			off = int(h.starts[row+1]) // the rest of this row cannot add anything
		}
		if wi > 0 {
			for i := range hits {
				hits[i] &= cur[i]
			}
		}
	}
	out := make([]int32, 0, len(from)/4+16)
	for _, i := range from {
		if hits[i>>6]&(1<<(i&63)) != 0 && (keep == nil || keep(rows[i])) {
			out = append(out, i)
		}
	}
	return out
}

// filterRows keeps the rows of from whose haystack holds every word of q.
func filterRows[R any](haystack func(R) string, keep func(R) bool, rows []R, from []int32, q string) []int32 {
	words := strings.Fields(fold.String(q))
	if len(words) == 0 && keep == nil {
		return from
	}
	out := make([]int32, 0, len(from)/4+16)
next:
	for _, i := range from {
		r := rows[i]
		if keep != nil && !keep(r) {
			continue
		}
		if len(words) > 0 {
			h := haystack(r)
			for _, w := range words {
				if !strings.Contains(h, w) {
					continue next
				}
			}
		}
		out = append(out, i)
	}
	return out
}

// update handles what every list does: the filter prompt, navigation,
// sorting, the wheel, and its own computed views.
func (l *list[R]) update(msg tea.Msg) (tea.Cmd, bool) {
	k := l.ctx.Keys
	switch msg := msg.(type) {
	case listDoneMsg[R]:
		if msg.list != l {
			return nil, false
		}
		if msg.gen == l.gen {
			return l.apply(msg.view), true
		}
		return nil, true
	case hayMsg[R]:
		if msg.list != l {
			return nil, false
		}
		if sameSlice(msg.rows, l.view.rows) && l.view.hay == nil {
			v := *l.view
			v.hay = msg.hay
			l.view = &v
		}
		return nil, true
	case tea.MouseWheelMsg:
		return nil, l.table.HandleMouse(msg)
	case tea.PasteMsg:
		if l.paste(msg) {
			return l.recompute(), true
		}
	case tea.KeyPressMsg:
		if l.prompt {
			return ifChanged(l.promptKey(msg), l.recompute), true
		}
		if l.table.HandleKey(msg, keyMapNav{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}) {
			return nil, true
		}
		if handled, changed := l.controlKey(msg, k, l.spec.sortable); handled {
			return ifChanged(changed, l.recompute), true
		}
	}
	return nil, false
}

// infoLine is the line above the table: the filter prompt, the count and
// the sort.
func (l *list[R]) infoLine(width int, noun string, sortName string, extra string) string {
	t := l.ctx.Theme
	left := promptLine(t, l.prompt, l.query)
	total := len(l.rows)
	right := countText(len(l.view.idx), total, noun)
	if l.busy {
		right = "… " + right
	}
	if sortName != "" {
		dir := "▲"
		if l.sortDesc {
			dir = "▼"
		}
		right += " · by " + sortName + " " + dir
	}
	if extra != "" {
		right = extra + " · " + right
	}
	return spread(left, t.Muted.Render(right), width)
}

// listControls is what the two list engines (list, pagedList) share of
// the keyboard: the filter prompt, the filter, the sort column and
// direction. Its methods say whether the list must be computed or read
// again; each engine does that its own way.
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
