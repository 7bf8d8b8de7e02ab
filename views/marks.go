package views

import (
	"slices"

	"charm.land/bubbles/v2/key"

	tea "charm.land/bubbletea/v2"
)

// Marks on a paged list: rows the operator picked for a bulk action. They
// are held by the row's key (with the row as last read), so paging, a
// refresh or another filter keeps them; only esc clears them. A mark is not
// money: clearing asks nothing.
type marks[R any] struct {
	set   map[string]R
	order []string // marking order: the bulk actions go in it
	// anchor is the key of the last row marked or unmarked by space: V
	// marks from it to the cursor.
	anchor string
}

// pagedMarkAllMsg carries every row that passes the filter, read to mark
// them all.
type pagedMarkAllMsg[R any] struct {
	l    *pagedList[R]
	rows []R
	err  error
}

func (m *marks[R]) count() int { return len(m.order) }

func (m *marks[R]) has(key string) bool { _, ok := m.set[key]; return ok }

func (m *marks[R]) add(key string, r R) {
	if m.set == nil {
		m.set = map[string]R{}
	}
	if _, ok := m.set[key]; !ok {
		m.order = append(m.order, key)
	}
	m.set[key] = r
}

func (m *marks[R]) remove(key string) {
	if _, ok := m.set[key]; !ok {
		return
	}
	delete(m.set, key)
	m.order = slices.DeleteFunc(m.order, func(k string) bool { return k == key })
}

func (m *marks[R]) clear() { m.set, m.order, m.anchor = nil, nil, "" }

// rowsMarked are the marked rows in marking order.
func (m *marks[R]) rowsMarked() []R {
	out := make([]R, 0, len(m.order))
	for _, k := range m.order {
		out = append(out, m.set[k])
	}
	return out
}

// markKey handles the mark keys: space (the row under the cursor), V (from
// the last row marked to the cursor), * (every row that passes the filter)
// and esc (clear, when there are marks).
func (l *pagedList[R]) markKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := l.ctx.Keys
	switch {
	case key.Matches(msg, k.Mark) || msg.String() == " ":
		r, ok := l.selected()
		if !ok {
			return nil, true
		}
		k := l.spec.key(r)
		if l.marks.has(k) {
			l.marks.remove(k)
		} else {
			l.marks.add(k, *r)
		}
		l.marks.anchor = k
		return nil, true
	case key.Matches(msg, k.MarkRange):
		l.markRange()
		return nil, true
	case key.Matches(msg, k.MarkAll):
		return l.markAll(), true
	case key.Matches(msg, k.Back):
		if l.marks.count() == 0 || l.query != "" {
			return nil, false // esc clears the filter first
		}
		l.marks.clear()
		return nil, true
	}
	return nil, false
}

// markRange marks the rows from the anchor to the cursor (both ends
// included), as far as the window holds them; without an anchor in the
// window it marks the row under the cursor.
func (l *pagedList[R]) markRange() {
	cur := l.table.Cursor() - l.base
	if cur < 0 || cur >= len(l.rows) {
		return
	}
	from := cur
	for i := range l.rows {
		if l.marks.anchor != "" && l.spec.key(&l.rows[i]) == l.marks.anchor {
			from = i
			break
		}
	}
	lo, hi := min(from, cur), max(from, cur)
	for i := lo; i <= hi; i++ {
		l.marks.add(l.spec.key(&l.rows[i]), l.rows[i])
	}
	l.marks.anchor = l.spec.key(&l.rows[cur])
}

// markAll marks every row that passes the filter; a source in the store is
// read in a command (a big list takes a while).
func (l *pagedList[R]) markAll() tea.Cmd {
	if l.src == nil {
		return nil
	}
	q, err := l.wholeQuestion()
	if err != nil {
		return Status(LevelWarn, "nothing marked: "+FilterErrorText(err))
	}
	src, pos := l.src, l.spec.pos
	run := func() tea.Msg {
		rows, err := everything(src, pos, q)
		return pagedMarkAllMsg[R]{l: l, rows: rows, err: err}
	}
	if l.sync {
		l.applyMarkAll(run().(pagedMarkAllMsg[R]))
		return nil
	}
	return run
}

func (l *pagedList[R]) applyMarkAll(m pagedMarkAllMsg[R]) {
	if m.err != nil {
		l.err = m.err
		return
	}
	for i := range m.rows {
		l.marks.add(l.spec.key(&m.rows[i]), m.rows[i])
	}
}

// marked tells whether row i is marked.
func (l *pagedList[R]) marked(i int) bool {
	r, ok := l.at(i)
	return ok && l.marks.has(l.spec.key(r))
}

// marksText is the count for the info line ("12 marked"), "" without marks.
func (l *pagedList[R]) marksText() string {
	if n := l.marks.count(); n > 0 {
		return thousands(n) + " marked"
	}
	return ""
}
