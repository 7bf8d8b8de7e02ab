package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"paydesk/internal/fold"
	"paydesk/internal/textsafe"
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
func (db *DB) ReservationPage(q PageQuery) (Page, error) {
	if err := q.Where.Check(ReservationFilter); err != nil {
		return Page{}, fmt.Errorf("reservation list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.ReservationPage(context.Background(), q)
	}
	p, err := resList.memPage(db, q)
	return Page{Rows: p.rows, Total: p.total, More: p.more, Less: p.less}, err
}

// ReservationCount counts the rows that pass the query's filter and state
// (its cursor does not matter), for a Page whose Total is -1. A Limit > 0
// lets it stop counting there: the answer is then at most Limit (on
// PostgreSQL a filter that most rows pass is counted in a blink up to
// ten thousand, in seconds up to a million). Without a limit a count that
// takes too long is the planner's estimate.
func (db *DB) ReservationCount(q PageQuery) (int, error) {
	if err := q.Where.Check(ReservationFilter); err != nil {
		return 0, fmt.Errorf("reservation list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.ReservationCount(context.Background(), q)
	}
	return resList.memCount(db, q)
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
	mem   func(db *DB, q PageQuery) (listPage[R], error)
}

// listPage is a page of a storeList.
type listPage[R any] struct {
	rows       []R
	total      int
	more, less bool
}

// memPage pages the list in memory, for an engine that does not page it
// itself (Capabilities.Lists).
func (l *storeList[R, T]) memPage(db *DB, q PageQuery) (listPage[R], error) {
	if err := q.Check(l.sorts); err != nil {
		return listPage[R]{}, err
	}
	p, err := l.mem(db, q)
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
func (l *storeList[R, T]) memCount(db *DB, q PageQuery) (int, error) {
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last, q.Limit = nil, nil, nil, false, 1
	p, err := l.mem(db, q)
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
	dec:   decodeSummary,
	row:   func(s Summary, pos []byte) PageRow { return PageRow{Summary: s, Pos: pos} },
	mem: func(db *DB, q PageQuery) (listPage[PageRow], error) {
		all, err := db.LoadReservationSummaries()
		p := PageSummaries(all, q)
		return listPage[PageRow]{rows: p.Rows, total: p.Total, more: p.More, less: p.Less}, err
	},
}

// posKey is a row's position in the order of column col, as bytes that
// sort like the rows: the column's value, the creation time and the key.
// The bbolt indexes are keyed by it and the cursors are made of it.
func posKey(dst []byte, col SortBy, s *Summary) []byte {
	switch col {
	case SortInvoice:
		dst = appendSortString(dst, s.Invoice)
	case SortCustomer:
		dst = appendSortString(dst, strings.ToLower(s.Customer))
	case SortAmount:
		dst = appendInt64(dst, amountCents(s))
	case SortState:
		dst = append(dst, stateRank(s.State))
	}
	dst = appendInt64(dst, s.Created.UnixNano())
	return append(dst, s.Key...)
}

// appendSortString writes s ended by 0x00, which sorts before every other
// byte: "A" comes before "AB". A 0x00 inside s (never in real data) is
// written as 0x01 so it cannot end the value early.
func appendSortString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0 {
			c = 1
		}
		dst = append(dst, c)
	}
	return append(dst, 0)
}

// appendInt64 writes v so that the bytes sort like the numbers.
func appendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

func readInt64(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

// amountCents is the reserved amount in cents, the amount column's order.
func amountCents(s *Summary) int64 { return s.Amount.Shift(2).IntPart() }

// stateRanks is the state column's order: the life cycle.
var stateRanks = map[State]byte{
	StateAwaitingCustomer: 0, StateReserved: 1, StatePartlyCaptured: 2,
	StateCaptured: 3, StateClosed: 4, StateCancelled: 5, StateDeclined: 6,
}

func stateRank(s State) byte {
	if r, ok := stateRanks[s]; ok {
		return r
	}
	return 7
}

// colKind is how a sort column's value is written in a position key.
type colKind uint8

const (
	colNone   colKind = iota // the creation order: no value before the time
	colString                // appendSortString
	colInt64                 // appendInt64
	colByte                  // one byte (the state's rank)
)

// resCols are the reservation list's sort columns' kinds.
var resCols = []colKind{SortCreated: colNone, SortInvoice: colString, SortCustomer: colString, SortAmount: colInt64, SortState: colByte}

// posParts splits a position key into the column's value (without its
// terminator), the creation time and the key: what a PostgreSQL cursor
// compares with.
func posParts(kind colKind, pos []byte) (val []byte, created int64, key string, err error) {
	switch kind {
	case colString:
		i := bytes.IndexByte(pos, 0)
		if i < 0 {
			return nil, 0, "", errBadCursor
		}
		val, pos = pos[:i], pos[i+1:]
	case colInt64:
		if len(pos) < 8 {
			return nil, 0, "", errBadCursor
		}
		val, pos = pos[:8], pos[8:]
	case colByte:
		if len(pos) < 1 {
			return nil, 0, "", errBadCursor
		}
		val, pos = pos[:1], pos[1:]
	}
	if len(pos) < 8 {
		return nil, 0, "", errBadCursor
	}
	return val, readInt64(pos), string(pos[8:]), nil
}

var errBadCursor = fmt.Errorf("a list cursor that no list made")

// maxSearchText bounds one row's search text (a reservation of a thousand
// article lines is still found by its first ones).
const maxSearchText = 1000

// AppendSearchText appends the row's search text: invoice, customer,
// reservation number, key, e-mail, the provider's invoice numbers and the
// articles (last: a thousand lines are what maxSearchText cuts), cleaned
// and folded (case and accents: "muller" finds "Müller"; a field with
// umlauts also transliterated: "mueller" finds it too, fold.Version 2),
// each field ended by 0x00 so that a word cannot span two fields.
func AppendSearchText(dst []byte, s *Summary, f *fold.Folder) []byte {
	return appendSearchFields(dst, f, s.Invoice, s.Customer, s.ReservationNumber, s.Key, s.Email, s.InvoiceNumbers, s.Articles)
}

// appendSearchFields appends a row's search text made of fields, cut at
// maxSearchText.
func appendSearchFields(dst []byte, f *fold.Folder, fields ...string) []byte {
	start := len(dst)
	for _, field := range fields {
		dst = appendSearch(dst, field, f)
	}
	if len(dst)-start > maxSearchText {
		cut := start + maxSearchText
		for cut > start && !utf8.RuneStart(dst[cut]) {
			cut--
		}
		dst = dst[:cut]
	}
	return dst
}

// appendSearch appends s cleaned and folded, with a separator. ASCII text
// without control characters (nearly all of it) is lower-cased in place;
// anything else goes through textsafe and the Unicode fold.
func appendSearch(dst []byte, s string, f *fold.Folder) []byte {
	mark := len(dst)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || (c < 0x20 && c != '\n') || c == 0x7f {
			clean := textsafe.Clean(strings.ReplaceAll(s, "\n", " "))
			dst = f.Append(dst[:mark], clean)
			// Both folds in the field: "muller" and "mueller" find it.
			if g, ok := f.AppendGerman(append(dst, ' '), clean); ok {
				dst = g
			}
			return append(dst, 0)
		}
		if c == '\n' { // the article lines of a summary
			c = ' '
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return append(dst, 0)
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
		rows = append(rows, row{posKey(nil, q.Sort, s), i})
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
