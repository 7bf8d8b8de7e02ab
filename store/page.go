package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"paydesk/internal/fold"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// A list of a million reservations is never loaded whole: the console asks
// the store for the window on screen (ReservationPage), in a sort order,
// past a keyset cursor, with the filter applied in the store. The order
// and the filter are defined once here — a row's position key (posKey) and
// its search text (AppendSearchText) — and the three implementations (the
// bbolt indexes in pagebolt.go, the PostgreSQL table in pagepg.go, and the
// in-memory one below, for small lists and as the tests' reference) all
// follow them.

// ReservationPage returns one window of the reservation list: sorted and
// filtered in the store, by the engine (its indexes, its list table:
// Capabilities.Lists) or else in memory.
func (db *DB) ReservationPage(ctx context.Context, q PageQuery) (Page, error) {
	if err := q.Where.Check(ReservationFilter); err != nil {
		return Page{}, fmt.Errorf("reservation list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.ReservationPage(ctx, q)
	}
	p, err := resList.memPage(ctx, db, q)
	return Page{Rows: p.rows, Total: p.total, More: p.more, Less: p.less}, err
}

// ReservationCount counts the rows that pass the query's filter and state
// (its cursor does not matter), for a Page whose Total is -1. A Limit > 0
// lets it stop counting there: the answer is then at most Limit (on
// PostgreSQL a filter that most rows pass is counted in a blink up to
// ten thousand, in seconds up to a million). Without a limit a count that
// takes too long is the planner's estimate.
func (db *DB) ReservationCount(ctx context.Context, q PageQuery) (int, error) {
	if err := q.Where.Check(ReservationFilter); err != nil {
		return 0, fmt.Errorf("reservation list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.ReservationCount(ctx, q)
	}
	return resList.memCount(ctx, db, q)
}

// storeList is one list as the store pages it: its bbolt indexes, its
// PostgreSQL table, its filter cache, how its rows are made, and the
// in-memory answer of a store that has neither.
type storeList[R, T any] struct {
	name  string
	sorts SortBy
	bolt  *boltList
	pg    *pgList
	cache func(db *DB) *pageCache
	dec   func([]byte) (T, error)
	row   func(T, []byte) R
	mem   func(ctx context.Context, db *DB, q PageQuery) (listPage[R], error)
}

// listPage is a page of a storeList.
type listPage[R any] struct {
	rows       []R
	total      int
	more, less bool
}

// memPage pages the list in memory, for an engine that does not page it
// itself (Capabilities.Lists).
func (l *storeList[R, T]) memPage(ctx context.Context, db *DB, q PageQuery) (listPage[R], error) {
	if err := q.Check(l.sorts); err != nil {
		return listPage[R]{}, err
	}
	p, err := l.mem(ctx, db, q)
	if err != nil {
		return listPage[R]{}, fmt.Errorf("%s list: %w", l.name, err)
	}
	return p.whole(), nil
}

// whole sets the total of a page that is the whole list: nothing to count.
func (p listPage[R]) whole() listPage[R] {
	if p.total < 0 && !p.more && !p.less {
		p.total = len(p.rows)
	}
	return p
}

// memCount is memPage's count.
func (l *storeList[R, T]) memCount(ctx context.Context, db *DB, q PageQuery) (int, error) {
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last, q.Limit = nil, nil, nil, false, 1
	p, err := l.mem(ctx, db, q)
	if err != nil {
		return 0, fmt.Errorf("%s count: %w", l.name, err)
	}
	n := p.total
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n, nil
}

// resList is the reservation list.
var resList = &storeList[PageRow, Summary]{
	name: "reservation", sorts: SortCount, bolt: resBolt, pg: pgSummaries,
	cache: func(db *DB) *pageCache { return &db.pages },
	dec:   kvlayout.DecodeSummary,
	row:   func(s Summary, pos []byte) PageRow { return PageRow{Summary: s, Pos: pos} },
	mem: func(ctx context.Context, db *DB, q PageQuery) (listPage[PageRow], error) {
		all, err := db.LoadReservationSummaries(ctx)
		p := PageSummaries(all, q)
		return listPage[PageRow]{rows: p.Rows, total: p.Total, more: p.More, less: p.Less}, err
	},
}

func containsAll(text []byte, words [][]byte) bool {
	for _, w := range words {
		if !bytes.Contains(text, w) {
			return false
		}
	}
	return true
}

func wordBytes(words []string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i] = []byte(w)
	}
	return out
}

func keepState(s *Summary, st State) bool {
	switch st {
	case "":
		return true
	case StateOutcomeUnknown:
		return s.OutcomeUnknown
	case StateOrderMissing:
		return OrderMissing(s)
	}
	return s.State == st
}

// PageSummaries answers q over summaries held in memory: a store without
// indexes, a test's fake, and the reference the stores' tests compare with.
func PageSummaries(all []Summary, q PageQuery) Page {
	words := wordBytes(q.SearchWords())
	type row struct {
		pos []byte
		i   int
	}
	var f fold.Folder
	var text []byte
	rows := make([]row, 0, len(all))
	for i := range all {
		s := &all[i]
		if !keepSummary(s, &q, &f) {
			continue
		}
		if len(words) > 0 {
			text = AppendSearchText(text[:0], s, &f)
			if !containsAll(text, words) {
				continue
			}
		}
		rows = append(rows, row{domain.PosKey(nil, q.Sort, s), i})
	}
	slices.SortFunc(rows, func(a, b row) int { return bytes.Compare(a.pos, b.pos) })
	if q.Desc {
		slices.Reverse(rows)
	}
	from, to := window(len(rows), func(i int) []byte { return rows[i].pos }, &q)
	p := Page{Total: len(rows), Less: from > 0, More: to < len(rows)}
	for _, r := range rows[from:to] {
		p.Rows = append(p.Rows, PageRow{Summary: all[r.i], Pos: r.pos})
	}
	return p
}

// window places the query's window (cursor and limit) in n rows in the
// list's order, whose positions pos(i) ascend (descend with q.Desc): the
// rows from..to. The in-memory lists and a few sorted rows of the bbolt
// lists share it.
func window(n int, pos func(i int) []byte, q *PageQuery) (from, to int) {
	// after reports whether position p comes after c in the list's order.
	after := func(p, c []byte) bool {
		if q.Desc {
			return bytes.Compare(p, c) < 0
		}
		return bytes.Compare(p, c) > 0
	}
	// first is the first row after c (or at it, with at).
	first := func(c []byte, at bool) int {
		return sort.Search(n, func(i int) bool {
			p := pos(i)
			return after(p, c) || at && bytes.Equal(p, c)
		})
	}
	lim := q.PageSize()
	switch {
	case q.After != nil:
		from = first(q.After, false)
		to = min(from+lim, n)
	case q.From != nil:
		from = first(q.From, true)
		to = min(from+lim, n)
	case q.Before != nil:
		to = first(q.Before, true)
		from = max(to-lim, 0)
	case q.Last:
		to = n
		from = max(to-lim, 0)
	default:
		to = min(lim, n)
	}
	return from, to
}

// pageCache keeps what the last filter found, so that a page turn and the
// next keystroke (which narrows the last query) do not search again. It is
// valid for one committed state of the file (bbolt's transaction ID).
type pageCache struct {
	mu    sync.Mutex
	txid  int
	words string // the query's folded words, joined by 0x00 (a phrase keeps its spaces)
	bits  []uint64
	n     int
	// state caches a state filter's rows likewise.
	stateTx  int
	state    State
	stateSet []uint64
	// where caches a Where's rows likewise (its condKey).
	whereTx  int
	where    string
	whereSet []uint64

	// scanBlocks, small and walk, when set, replace maxScanBlocks, smallSet
	// and walkBudget
	// (the tests take every path on a small file).
	scanBlocks, small, walk int
}
