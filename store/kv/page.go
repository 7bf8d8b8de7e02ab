package kv

import (
	"sync"

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

// storeList is one list as the bucket engine pages it: its bbolt indexes,
// its PostgreSQL table, its filter cache and how its rows are made.
type storeList[R, T any] struct {
	name  string
	sorts SortBy
	bolt  *boltList
	pg    *pgList
	cache func(db *DB) *pageCache
	dec   func([]byte) (T, error) // a record of the kv PostgreSQL's list table
	// boltDec reads a row's record on bbolt, under its key.
	boltDec func(key, v []byte) (T, error)
	row     func(T, []byte) R
}

// listPage is a page of a storeList.
type listPage[R any] struct {
	rows       []R
	total      int
	more, less bool
}

// whole sets the total of a page that is the whole list: nothing to count.
func (p listPage[R]) whole() listPage[R] {
	if p.total < 0 && !p.more && !p.less {
		p.total = len(p.rows)
	}
	return p
}

// resList is the reservation list.
var resList = &storeList[PageRow, Summary]{
	name: "reservation", sorts: SortCount, bolt: resBolt, pg: pgSummaries,
	cache:   func(db *DB) *pageCache { return &db.pages },
	dec:     kvlayout.DecodeSummary,
	boltDec: func(key, v []byte) (Summary, error) { return kvlayout.SummaryOf(string(key), v) },
	row:     func(s Summary, pos []byte) PageRow { return PageRow{Summary: s, Pos: pos} },
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
