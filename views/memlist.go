package views

import (
	tea "charm.land/bubbletea/v2"

	"paydesk/internal/query"
	"paydesk/store"
)

// MemList is the list component (pagedList) over rows held in memory, for
// the tabs of other packages (views/logs: the audit and gateway logs). It
// keeps the rows in the order they are handed over and answers in Update:
// the keys, the filter prompt, the filter language, the cursor and the
// count are those of every other list.
type MemList[R any] struct {
	l    *pagedList[R]
	spec *memSpec[R]
}

// NewMemList makes a list over rows of R: key names a row (the cursor
// stays on it), filter is what "/" takes and where keeps the rows a
// parsed filter keeps.
func NewMemList[R any](ctx *Context, cols []Column, key func(*R) string, filter query.List, where func(*R, *query.Query) bool) *MemList[R] {
	spec := pagedSpec[R]{
		key:    key,
		pos:    func(r *R) []byte { return []byte(key(r)) },
		sortOf: func(int) store.SortBy { return 0 }, // the order handed over
		filter: filter,
	}
	return &MemList[R]{l: newPagedList(ctx, cols, spec, -1), spec: &memSpec[R]{key: key, where: where}}
}

// SetRows replaces the rows. They are read in Update (a log holds what
// the console loaded), so nothing is left to run.
func (m *MemList[R]) SetRows(rows []R) {
	settleSync(m.l, m.l.setSource(newMemRows(m.spec, rows), true))
}

// settleSync runs what a list answered in memory asks next: with a source
// in memory nothing waits, so nothing is left for the program.
func settleSync[R any](l *pagedList[R], cmd tea.Cmd) {
	for cmd != nil {
		msg := cmd()
		if b, ok := msg.(tea.BatchMsg); ok {
			for _, c := range b {
				settleSync(l, c)
			}
			return
		}
		cmd, _ = l.update(msg)
	}
}

// Update takes a key, a paste or the wheel: true when the list used it.
func (m *MemList[R]) Update(msg tea.Msg) (tea.Cmd, bool) { return m.l.update(msg) }

// Table is the list's table (its size, its cursor, its drawing).
func (m *MemList[R]) Table() *Table { return m.l.table }

// At is visible row i.
func (m *MemList[R]) At(i int) (*R, bool) { return m.l.at(i) }

// Selected is the row under the cursor.
func (m *MemList[R]) Selected() (*R, bool) { return m.l.selected() }

// Len is the number of rows that pass the filter; All the rows held.
func (m *MemList[R]) Len() int { return m.l.len() }

// All is the number of rows held.
func (m *MemList[R]) All() int { return m.l.all }

// Query is the typed filter; Prompt says the filter prompt is open.
func (m *MemList[R]) Query() string { return m.l.query }

// Prompt says the filter prompt has the keyboard.
func (m *MemList[R]) Prompt() bool { return m.l.prompt }

// Err is the filter the language refused (FilterErrorText words it).
func (m *MemList[R]) Err() error { return m.l.err }

// Visible is every row that passes the filter, in the list's order (an
// export); a filter the language refused exports nothing and says why.
func (m *MemList[R]) Visible() ([]R, error) {
	q, err := m.l.wholeQuestion()
	if err != nil {
		return nil, err
	}
	if m.l.src == nil {
		return nil, nil
	}
	return everything(m.l.src, m.l.spec.pos, q)
}
