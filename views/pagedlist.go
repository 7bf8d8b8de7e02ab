package views

import (
	"context"
	"errors"
	"time"

	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/query"
	"paydesk/store"
)

const (
	// pageRows is what one read brings; the window keeps up to windowMax
	// rows around the screen.
	pageRows  = 200
	windowMax = 1000
	// pageMargin: a read starts when the screen comes this close to the
	// window's edge, so scrolling rarely shows a row not yet read.
	pageMargin = 100
)

type fetchKind uint8

const (
	fetchTop fetchKind = iota
	fetchEnd
	fetchAfter
	fetchBefore
	fetchRefresh // the window again, in place (a change)
)

// pagedPageMsg is a read's answer; gen tells whether the list still asks
// the same question.
type pagedPageMsg[R any] struct {
	l    *pagedList[R]
	gen  uint64
	seq  uint64
	kind fetchKind
	page pageOf[R]
	all  int // the rows of the list without filter
	err  error
}

type pagedCountMsg[R any] struct {
	l      *pagedList[R]
	gen    uint64
	n      int
	capped bool // counted up to countFirst only: there may be more
	err    error
}

// countFirst is where the first count stops: "10,000+" comes at once on
// PostgreSQL, the whole count follows.
const countFirst = 10_000

// wholeCountPause is how long the filter must stay as it is before the
// whole count of a common word is asked (60–200 ms of the disk or the
// database at a million rows): while the operator types, each key's rows
// and first count come at once, and no key waits for the whole count of
// the one before.
const wholeCountPause = 250 * time.Millisecond

// restAfterFirstFrame is how long the rest of the window waits after the
// list's first answer. That answer is a screenful; the frame with its rows
// is written at the renderer's next tick, and the terminal must then get
// the CPU to draw it. Read at once, the rest of the window (on a million
// reservations 300 rows, 66 ms and 36 MB of file pages mapped) took a core
// meanwhile, and tmux showed the frame 48–76 ms after it was drawn,
// against 34–56 ms with the wait (five starts each, alternating). A key
// that moves the screen meanwhile reads at once (ensure).
const restAfterFirstFrame = 100 * time.Millisecond

// pagedLaterMsg is a read the list put off (the rest of the window after
// its first answer, restAfterFirstFrame; the whole count once the filter
// has stayed, wholeCountPause): read runs it when the question is still
// gen's, else the new question's own reads run.
type pagedLaterMsg[R any] struct {
	l    *pagedList[R]
	gen  uint64
	read func() tea.Cmd
}

// later runs read after d, if the question has not changed by then.
func (l *pagedList[R]) later(d time.Duration, read func() tea.Cmd) tea.Cmd {
	gen := l.gen
	return l.ctx.After(d, func(time.Time) tea.Msg { return pagedLaterMsg[R]{l: l, gen: gen, read: read} })
}

// pagedList is a list paged in its source (the reservations, the
// transactions): it holds the rows of a window near the screen (at most windowMax) and asks its source for more as the cursor
// moves, and for the first page again when the sort or the filter changes.
// At most one read runs at a time; what the operator types meanwhile is
// asked next, the latest only (typing fast costs one read, not one per key).
type pagedList[R any] struct {
	ctx   *Context
	table *Table

	spec pagedSpec[R]
	src  Source[R]
	sync bool // src answers at once (few rows held in memory): no commands

	listControls
	state store.State
	// viewFilter is a saved view's filter, kept before what is typed.
	viewFilter string

	gen  uint64 // bumped when the question changes (sort, filter, state)
	base int    // the list index of rows[0]
	rows []R
	more bool // rows follow the window
	less bool // rows precede it

	total int // rows that pass the filter; -1 while counted
	all   int // rows without the filter
	// atLeast: total is a first count that stopped at countFirst.
	atLeast bool

	loaded   bool
	inflight bool
	reading  uint64 // the read whose answer the list waits for
	again    bool   // another read is wanted once this one is back
	stale    bool   // a change arrived: read the window again
	counting bool
	// readCtx is the context of the question's reads; restart cancels
	// it, so the source stops a read or count nobody waits for (on
	// PostgreSQL the server stops the query) instead of running it to
	// its end beside the reads of the new question.
	readCtx     context.Context
	cancelReads context.CancelFunc
	err         error
	// onCursor is the key of the row under the cursor, kept across reads.
	onCursor string
	marks    marks[R]
}

// pagedSpec is what a paged list knows of its rows.
type pagedSpec[R any] struct {
	key      func(*R) string            // the row's key: the cursor stays on it
	pos      func(*R) []byte            // its position, a cursor for the source
	sortOf   func(col int) store.SortBy // a column's order in the store
	sortable []int                      // the columns s cycles through
	// filter is what the list's "/" takes (the fields of the filter
	// language that apply).
	filter   query.List
	markable bool // rows can be marked for a bulk action (marks.go)
	// keep, when set, gives the tab's own narrowing for the next question
	// (Query.Keep: the push log's type and status); it is called in
	// Update, the filter it returns runs in the source.
	keep func() func(*R) bool
}

// pageOf is one page of a source.
type pageOf[R any] struct {
	rows       []R
	total      int
	more, less bool
}

func newPagedList[R any](ctx *Context, cols []Column, spec pagedSpec[R], sortCol int) *pagedList[R] {
	l := &pagedList[R]{ctx: ctx, table: NewTable(ctx.Theme, cols), spec: spec, listControls: listControls{sortCol: sortCol, sortDesc: true}, total: -1}
	l.table.SetSort(l.sortCol, l.sortDesc)
	return l
}

// question is what the list asks its source. The filter is the typed
// text in the filter language (internal/query), the command line's
// --filter; a text that does not parse asks nothing (where says why).
func (l *pagedList[R]) question() Query[R] {
	w, _ := l.where()
	q := Query[R]{PageQuery: store.PageQuery{Sort: l.spec.sortOf(l.sortCol), Desc: l.sortDesc, Where: w, State: l.state, Limit: pageRows}}
	if l.spec.keep != nil {
		q.Keep = l.spec.keep()
	}
	return q
}

// wholeQuestion is the question for every row that passes the filter (an
// export, marking all): a filter the language refused asks nothing —
// its query would ask for every row while the screen shows none.
func (l *pagedList[R]) wholeQuestion() (Query[R], error) {
	if _, err := l.where(); err != nil {
		return Query[R]{}, err
	}
	return l.question(), nil
}

// where parses the typed filter; relative times ("created:<7d") count
// from the console's clock, dates are days where it shows times.
func (l *pagedList[R]) where() (query.Query, error) {
	text := l.query
	if l.viewFilter != "" {
		text = l.viewFilter + " " + l.query
	}
	w, err := query.Parse(text, l.ctx.Now().In(l.ctx.loc()))
	if err == nil && len(l.spec.filter.Fields) > 0 {
		err = w.Check(l.spec.filter)
	}
	if err != nil {
		return w, filterError{err}
	}
	return w, nil
}

// filterError is a typed filter the language refuses: the operator's to
// mend, not a cache that cannot be read.
type filterError struct{ err error }

func (e filterError) Error() string { return e.err.Error() }
func (e filterError) Unwrap() error { return e.err }

// loadErrorText words why a list shows no rows.
func loadErrorText(err error) string {
	var fe filterError
	if errors.As(err, &fe) {
		return "Filter: " + clean(fe.err.Error())
	}
	return "Could not read the cache: " + clean(err.Error())
}

// setSource starts reading from src.
func (l *pagedList[R]) setSource(src Source[R], sync bool) tea.Cmd {
	l.src, l.sync = src, sync
	return l.restart()
}

// restart asks the new question from the top.
func (l *pagedList[R]) restart() tea.Cmd {
	if l.cancelReads != nil {
		l.cancelReads()
	}
	l.readCtx, l.cancelReads = nil, nil
	l.gen++
	l.total, l.atLeast = -1, false
	l.counting = false
	l.stale = false
	l.table.SetSort(l.sortCol, l.sortDesc)
	l.onCursor = ""
	if r, ok := l.selected(); ok && l.table.Cursor() > 0 {
		// The row under the cursor stays under it when it is among the
		// first windowMax rows of the new order (past them its place is
		// not known without counting the rows before it).
		l.onCursor = l.spec.key(r)
		return l.fetch(fetchTop, windowMax)
	}
	return l.fetch(fetchTop, 0)
}

// reads is the context of the current question's reads.
func (l *pagedList[R]) reads() context.Context {
	if l.readCtx == nil {
		l.readCtx, l.cancelReads = context.WithCancel(context.Background())
	}
	return l.readCtx
}

// fetch starts a read (or queues it behind the one running).
func (l *pagedList[R]) fetch(kind fetchKind, limit int) tea.Cmd {
	if l.src == nil {
		return nil
	}
	if l.inflight {
		l.again = true
		return nil
	}
	q := l.question()
	if limit > 0 {
		q.Limit = min(limit, 10_000)
	}
	if kind == fetchTop && limit == 0 {
		// A question's first read asks what the screen shows, not
		// pageRows. The list's very first read asks a screenful: on a
		// large cache each row is a record read from a file not yet mapped,
		// and the first frame waits for them all (a million reservations,
		// load average 10: 15–42 ms for 40 rows, 73–269 ms for 200); the
		// rest of the window follows (restAfterFirstFrame).
		// A later question (a key typed into the filter, a sort) asks the
		// screen and its margin, so that no read follows until the screen
		// scrolls: on PostgreSQL a page of a search word is looked for among
		// the first rows in order, and a second read at once (a screenful,
		// then the rest) made the next key wait for it to be cancelled.
		q.Limit = max(l.table.height, 1)
		if l.loaded {
			q.Limit += pageMargin
		}
	}
	switch kind {
	case fetchEnd:
		q.Last = true
	case fetchAfter:
		q.After = l.spec.pos(&l.rows[len(l.rows)-1])
	case fetchBefore:
		q.Before = l.spec.pos(&l.rows[0])
	case fetchRefresh:
		if l.base > 0 && len(l.rows) > 0 {
			q.From = l.spec.pos(&l.rows[0])
		}
		q.Limit = max(len(l.rows), pageRows)
	}
	l.inflight = true
	l.reading++
	src, gen, seq, ctx := l.src, l.gen, l.reading, l.reads()
	_, werr := l.where()
	run := func() tea.Msg {
		m := pagedPageMsg[R]{l: l, gen: gen, seq: seq, kind: kind}
		if werr != nil {
			// A filter typed half ("amount:>"): the rows of the last one
			// stay, and the error names the field and the rule.
			m.err, m.all = werr, -1
			return m
		}
		m.page, m.err = src.Page(ctx, q)
		m.all = m.page.total
		if m.err == nil && q.narrowed() {
			m.all, m.err = src.Count(ctx, Query[R]{})
		}
		return m
	}
	if l.sync {
		return l.apply(run().(pagedPageMsg[R]))
	}
	return run
}

func (l *pagedList[R]) countCmd(upTo int) tea.Cmd {
	if l.counting || l.src == nil {
		return nil
	}
	l.counting = true
	src, gen, q, ctx := l.src, l.gen, l.question(), l.reads()
	q.Limit = upTo
	if upTo > 0 {
		upTo++ // one more tells "more than countFirst"
		q.Limit = upTo
	}
	run := func() tea.Msg {
		n, err := src.Count(ctx, q)
		return pagedCountMsg[R]{l: l, gen: gen, n: n, err: err, capped: upTo > 0 && n == upTo}
	}
	if l.sync {
		return l.applyCount(run().(pagedCountMsg[R]))
	}
	return run
}

// apply takes a read's answer into the window.
func (l *pagedList[R]) apply(m pagedPageMsg[R]) tea.Cmd {
	if m.seq != l.reading {
		return nil // a read that a jump (Home, End) replaced
	}
	l.inflight = false
	if m.gen != l.gen {
		// The question changed while this read ran: ask the new one.
		l.again = false
		return l.fetch(fetchTop, 0)
	}
	if m.err != nil {
		l.err = m.err
		l.again = false
		return nil
	}
	l.err = nil
	p := m.page
	if m.all >= 0 {
		l.all = m.all
	}
	first := false // the list's first answer
	switch m.kind {
	case fetchTop:
		first = !l.loaded
		l.base, l.rows, l.less, l.more = 0, p.rows, false, p.more
		l.loaded = true
	case fetchEnd:
		l.rows, l.less, l.more = p.rows, p.less, false
		if p.total >= 0 {
			l.base = max(p.total-len(p.rows), 0)
		} else {
			l.base = max(l.table.Cursor()-len(p.rows)+1, 0)
		}
	case fetchAfter:
		l.rows = append(l.rows, p.rows...)
		l.more = p.more && len(p.rows) > 0
	case fetchBefore:
		l.rows = append(slices.Clip(p.rows), l.rows...)
		l.base -= len(p.rows)
		l.less = p.less && len(p.rows) > 0
		if l.base < 0 || !l.less {
			// The window is the top after all (rows went away above it):
			// the indexes move with it.
			l.shift(-l.base)
		}
	case fetchRefresh:
		l.rows, l.more = p.rows, p.more
		l.less = l.base > 0 && p.less
		if !l.less && l.base > 0 {
			l.shift(-l.base)
		}
	}
	recount := false
	switch {
	case p.total >= 0:
		l.total = p.total
	case m.kind == fetchRefresh:
		// A change: count again, one count at a time, showing the last
		// count meanwhile (a burst of pushes does not start a count each).
		recount = true
	}
	if !l.more && !l.less {
		l.total = len(l.rows)
	} else if !l.more && p.total < 0 && m.kind != fetchEnd {
		l.total = l.base + len(l.rows)
	}
	l.trim()
	l.syncTable(m.kind)
	var cmds []tea.Cmd
	switch {
	case l.total < 0:
		cmds = append(cmds, l.countCmd(countFirst))
	case recount:
		cmds = append(cmds, l.countCmd(0))
	}
	l.again = false
	if first && l.more && !l.sync {
		cmds = append(cmds, l.later(restAfterFirstFrame, l.ensure))
	} else {
		cmds = append(cmds, l.ensure())
	}
	return tea.Batch(cmds...)
}

func (l *pagedList[R]) applyCount(m pagedCountMsg[R]) tea.Cmd {
	if m.gen != l.gen {
		return nil
	}
	l.counting = false
	if m.err != nil {
		return nil
	}
	l.atLeast = m.capped
	if m.capped {
		m.n = countFirst
	}
	l.total = max(m.n, l.base+len(l.rows))
	if !l.more && l.base+len(l.rows) != l.total {
		l.base = max(l.total-len(l.rows), 0) // the window is the end
	}
	l.syncTable(fetchRefresh)
	if m.capped {
		return tea.Batch(l.ensure(), l.wholeCount()) // and all of them, once the typing pauses
	}
	return l.ensure()
}

// wholeCount asks for the whole count after wholeCountPause, if the filter
// is still the same then.
func (l *pagedList[R]) wholeCount() tea.Cmd {
	if l.sync {
		return l.countCmd(0)
	}
	return l.later(wholeCountPause, func() tea.Cmd { return l.countCmd(0) })
}

// shift moves the window's list indexes (and the cursor with them) by d.
func (l *pagedList[R]) shift(d int) {
	l.base += d
	l.table.SetLen(max(l.length(), l.table.cursor+d+1))
	l.table.offset += d
	l.table.SetCursor(l.table.cursor + d)
}

// trim keeps the window at most windowMax rows around the cursor.
func (l *pagedList[R]) trim() {
	if len(l.rows) <= windowMax {
		return
	}
	cur := l.table.Cursor() - l.base
	if d := min(cur-windowMax/2, len(l.rows)-windowMax); d > 0 {
		l.rows = slices.Clone(l.rows[d:])
		l.base += d
		l.less = true
	}
	if len(l.rows) > windowMax {
		l.rows = slices.Clone(l.rows[:windowMax])
		l.more = true
	}
}

// length is the table's row count: the count when known, else what the
// window reaches (and a row more while rows follow).
func (l *pagedList[R]) length() int {
	n := l.base + len(l.rows)
	if l.more {
		n++
	}
	if l.total >= 0 {
		n = max(n, l.total)
		if !l.more {
			n = l.base + len(l.rows)
		}
	}
	return n
}

// syncTable tells the table the length and puts the cursor back on its
// row: the row it was on (by key), or the top for a cursor on the first
// row (it follows the newest rows in, like tail -f).
func (l *pagedList[R]) syncTable(kind fetchKind) {
	l.table.SetLen(l.length())
	switch kind {
	case fetchEnd:
		l.table.SetCursor(l.length() - 1)
		return
	case fetchTop, fetchRefresh:
	default:
		return
	}
	if l.onCursor != "" {
		for i := range l.rows {
			if l.spec.key(&l.rows[i]) == l.onCursor {
				l.table.SetCursor(l.base + i)
				l.onCursor = ""
				return
			}
		}
	}
	if kind == fetchTop {
		l.table.SetCursor(0)
	}
	l.onCursor = ""
}

// ensure reads what the screen is about to show and the window lacks.
func (l *pagedList[R]) ensure() tea.Cmd {
	if l.src == nil || l.inflight {
		return nil
	}
	if l.stale {
		l.stale = false
		l.keepCursor()
		return l.fetch(fetchRefresh, 0)
	}
	if len(l.rows) == 0 {
		return nil
	}
	t := l.table
	lo := max(t.offset-pageMargin, 0)
	hi := t.offset + t.height + pageMargin
	wlo, whi := l.base, l.base+len(l.rows)
	switch {
	case hi > whi && l.more:
		gap := hi - whi
		if l.total >= 0 && t.cursor >= l.total-pageRows && gap > windowMax {
			return l.fetch(fetchEnd, pageRows)
		}
		return l.fetch(fetchAfter, gap+pageRows)
	case lo < wlo && l.less:
		gap := wlo - lo
		if t.cursor < pageRows && gap > windowMax {
			return l.fetch(fetchTop, 0)
		}
		return l.fetch(fetchBefore, gap+pageRows)
	}
	return nil
}

// keepCursor remembers the row under the cursor for the next read.
func (l *pagedList[R]) keepCursor() {
	l.onCursor = ""
	if r, ok := l.selected(); ok && l.table.Cursor() > 0 {
		l.onCursor = l.spec.key(r)
	}
}

// changed takes live changes: rows on screen show them at once (fresh
// updates a row in place), and the window is read again for the order,
// the filter and the count.
func (l *pagedList[R]) changed(fresh func(r *R)) tea.Cmd {
	for i := range l.rows {
		fresh(&l.rows[i])
	}
	l.stale = true
	if l.inflight {
		return nil // read again when this one is back
	}
	return l.ensure()
}

// at returns row i when it is in the window.
func (l *pagedList[R]) at(i int) (*R, bool) {
	j := i - l.base
	if j < 0 || j >= len(l.rows) {
		return nil, false
	}
	return &l.rows[j], true
}

// selected returns the row under the cursor.
func (l *pagedList[R]) selected() (*R, bool) { return l.at(l.table.Cursor()) }

// len is the number of rows that pass the filter, as far as known.
func (l *pagedList[R]) len() int { return l.length() }

// update handles the filter prompt, navigation, sorting, the wheel and the
// list's own reads.
func (l *pagedList[R]) update(msg tea.Msg) (tea.Cmd, bool) {
	k := l.ctx.Keys
	switch msg := msg.(type) {
	case pagedPageMsg[R]:
		if msg.l != l {
			return nil, false
		}
		return l.apply(msg), true
	case pagedCountMsg[R]:
		if msg.l != l {
			return nil, false
		}
		return l.applyCount(msg), true
	case pagedLaterMsg[R]:
		if msg.l != l {
			return nil, false
		}
		if msg.gen != l.gen {
			return nil, true // the question changed meanwhile: its own reads run
		}
		return msg.read(), true
	case pagedMarkAllMsg[R]:
		if msg.l != l {
			return nil, false
		}
		l.applyMarkAll(msg)
		return nil, true
	case tea.MouseWheelMsg:
		if !l.table.HandleMouse(msg) {
			return nil, false
		}
		return l.ensure(), true
	case tea.PasteMsg:
		if l.paste(msg) {
			return l.restart(), true
		}
	case tea.KeyPressMsg:
		if l.prompt {
			return ifChanged(l.promptKey(msg), l.restart), true
		}
		// Home and End on a list not read that far read the top or the end
		// at once; a read still running is dropped when it comes (its seq).
		if key.Matches(msg, k.End) && l.more {
			l.rows, l.more, l.less = nil, false, true
			l.inflight = false
			return l.fetch(fetchEnd, pageRows), true
		}
		if key.Matches(msg, k.Home) && l.base > 0 {
			l.table.SetCursor(0)
			l.inflight = false
			return l.fetch(fetchTop, 0), true
		}
		if l.table.HandleKey(msg, keyMapNav{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}) {
			return l.ensure(), true
		}
		if l.spec.markable {
			if cmd, ok := l.markKey(msg); ok {
				return cmd, true
			}
		}
		if handled, changed := l.controlKey(msg, k, l.spec.sortable); handled {
			return ifChanged(changed, l.restart), true
		}
	}
	return nil, false
}

// infoLine is the line above the table: the filter prompt, the count and
// the sort.
func (l *pagedList[R]) infoLine(width int, noun string, sortName string, extra string) string {
	t := l.ctx.Theme
	left := promptLine(t, l.prompt, l.query)
	if l.viewFilter != "" {
		// A saved view says what it keeps; "/" narrows it.
		left = t.Muted.Render("view: ") + l.viewFilter + t.Muted.Render(" · ") + left
	}
	var right string
	switch {
	case l.total >= 0 && l.atLeast:
		right = thousands(l.total) + "+ of " + thousands(l.all) + " " + noun
	case l.total >= 0:
		right = countText(l.total, max(l.all, l.total), noun)
	case l.query == "" && l.state == "" && l.viewFilter == "":
		// The whole list while its first page is read again (a sort, a
		// filter cleared): its count is the list's, not "0 of".
		right = countText(l.all, l.all, noun)
	default:
		right = "… of " + thousands(l.all) + " " + noun
	}
	if l.inflight {
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

// everything reads every row that passes q, in order (an export); it
// runs in a command, so it is given what it reads. A question typed
// meanwhile does not stop it: its context is its own.
func everything[R any](src Source[R], pos func(*R) []byte, q Query[R]) ([]R, error) {
	var out []R
	q.Limit = 10_000
	for {
		p, err := src.Page(context.Background(), q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.rows...)
		if !p.more || len(p.rows) == 0 {
			return out, nil
		}
		q.After = pos(&p.rows[len(p.rows)-1])
	}
}
