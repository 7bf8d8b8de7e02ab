package views

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"paydesk/internal/query"
	"paydesk/store"
	"paydesk/store/domain"
)

// Source answers a list's questions (pagedList): one page of rows past a
// cursor, in an order, filtered by the filter language, and how many rows
// pass. The store answers it for the reservations and the transactions
// and the push log (in its indexes or list tables); rows held in memory
// answer it for the lists the store does not page (memRows: the audit,
// gateway and approvals logs) and for rows handed over whole. Every tab's
// list is the same component over one of them, so its keys and states do
// not depend on where the rows live.
type Source[R any] interface {
	// ctx is the list's question's: a new question (a key typed into
	// the filter) cancels the reads of the one before.
	Page(ctx context.Context, q Query[R]) (pageOf[R], error)
	Count(ctx context.Context, q Query[R]) (int, error)
}

// Query is what a list asks its source: the store's question (sort,
// cursor, filter, state, limit) and, for a source in memory, a narrowing
// of its own that the filter language has no word for.
type Query[R any] struct {
	store.PageQuery
	// Keep, when set, keeps only the rows it accepts. Only a source in
	// memory can apply it; a store source refuses it (errKeepInStore)
	// rather than show rows it did not narrow.
	Keep func(*R) bool
}

// narrowed reports whether the query keeps fewer rows than the whole list
// (the list then counts the whole list apart).
func (q *Query[R]) narrowed() bool { return !q.Where.Empty() || q.State != "" || q.Keep != nil }

// errKeepInStore is a Query.Keep asked of a store source: a tab's spec
// that sets keep must page in memory.
type errKeepInStore struct{ list string }

func (e errKeepInStore) Error() string {
	return e.list + " list: a filter kept in memory (Keep) cannot be asked of the store"
}

// memRows is a Source over rows held in memory. It is a snapshot: new rows
// make a new one (SetRows), so a read running in a command never sees rows
// change under it. The rows' order per column is computed once per
// snapshot and kept.
type memRows[R any] struct {
	rows []R
	at   map[string]int32 // a row's key → its index in rows
	spec *memSpec[R]

	mu     sync.Mutex
	sorted map[memSort][]int32
}

type memSort struct {
	col  int
	desc bool
}

// memSpec is what a source in memory knows of its rows.
type memSpec[R any] struct {
	key func(*R) string
	// compare orders two rows by column col (ascending); ties keep the
	// rows' order of arrival.
	compare func(a, b *R, col int) int
	// where keeps the rows the parsed filter keeps (the filter language,
	// checked against the list's query.List by the list).
	where func(*R, *query.Query) bool
	// state, when set, keeps the rows in a state (the reservations' s key).
	state func(*R, store.State) bool
}

func newMemRows[R any](spec *memSpec[R], rows []R) *memRows[R] {
	m := &memRows[R]{rows: rows, spec: spec, at: make(map[string]int32, len(rows)), sorted: map[memSort][]int32{}}
	for i := range rows {
		m.at[spec.key(&rows[i])] = int32(i)
	}
	return m
}

// order is the rows' indexes in the order of col, ties by arrival.
func (m *memRows[R]) order(col int, desc bool) []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memSort{col, desc}
	if idx, ok := m.sorted[k]; ok {
		return idx
	}
	idx := make([]int32, len(m.rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, m.before(col, desc))
	m.sorted[k] = idx
	return idx
}

// before is the list's order as a comparison of row indexes.
func (m *memRows[R]) before(col int, desc bool) func(a, b int32) int {
	sign := 1
	if desc {
		sign = -1
	}
	return func(a, b int32) int {
		if m.spec.compare != nil {
			if c := m.spec.compare(&m.rows[a], &m.rows[b], col); c != 0 {
				return sign * c
			}
		}
		return cmp.Compare(a, b)
	}
}

// keep is q's filter, state and Keep over row i.
func (m *memRows[R]) keep(q *Query[R]) func(i int32) bool {
	if !q.narrowed() {
		return nil
	}
	return func(i int32) bool {
		r := &m.rows[i]
		return (q.Keep == nil || q.Keep(r)) &&
			(q.State == "" || m.spec.state == nil || m.spec.state(r, q.State)) &&
			(q.Where.Empty() || m.spec.where == nil || m.spec.where(r, &q.Where))
	}
}

// passing is the rows that pass q, in its order.
func (m *memRows[R]) passing(q *Query[R]) []int32 {
	all := m.order(int(q.Sort), q.Desc)
	keep := m.keep(q)
	if keep == nil {
		return all
	}
	out := make([]int32, 0, len(all)/4+16)
	for _, i := range all {
		if keep(i) {
			out = append(out, i)
		}
	}
	return out
}

// Page answers q: the window after, from or before a row (its key is its
// position), or the first or last rows.
func (m *memRows[R]) Page(_ context.Context, q Query[R]) (pageOf[R], error) {
	idx := m.passing(&q)
	n := len(idx)
	before := m.before(int(q.Sort), q.Desc)
	// first is where the row of position c would stand (at: itself
	// included): found by the order, so a row that no longer passes the
	// filter still says where its window was.
	first := func(c []byte, at bool) int {
		j, ok := m.at[string(c)]
		if !ok {
			return 0
		}
		i, found := slices.BinarySearchFunc(idx, j, before)
		if found && !at {
			i++
		}
		return i
	}
	from, to := domain.WindowAt(n, &q.PageQuery, first)
	p := pageOf[R]{total: n, less: from > 0, more: to < n, rows: make([]R, 0, to-from)}
	for _, i := range idx[from:to] {
		p.rows = append(p.rows, m.rows[i])
	}
	return p, nil
}

// Count counts the rows that pass q, up to q.Limit when one is given.
func (m *memRows[R]) Count(_ context.Context, q Query[R]) (int, error) {
	upTo := q.Limit
	n := len(m.rows)
	if q.narrowed() {
		n = len(m.passing(&q))
	}
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n, nil
}
