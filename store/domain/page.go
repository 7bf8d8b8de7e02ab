package domain

import (
	"fmt"
	"strings"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/internal/textsafe"
)

// SortBy is a sortable column of the reservation list.
type SortBy uint8

// The reservation list's sort orders. Ties are broken by the creation time
// and then the key, so every order is total and a cursor is exact.
const (
	SortCreated SortBy = iota
	SortInvoice
	SortCustomer // case-insensitive
	SortAmount   // in cents
	SortState    // the life cycle's order: customer step … declined
	SortCount
)

// StateOutcomeUnknown as PageQuery.State keeps the reservations with an
// operation whose outcome is unknown.
const StateOutcomeUnknown State = "unknown"

// StateOrderMissing as PageQuery.State keeps what lacks its order or its
// push: an order's placeholder, and an open reservation seen only in a
// push (the attention tab's order mismatches).
const StateOrderMissing State = "order missing"

// OrderMissing reports whether a summary is an order mismatch
// (StateOrderMissing).
func OrderMissing(s *Summary) bool {
	if strings.HasPrefix(s.Key, PlaceholderPrefix) {
		return true
	}
	return s.LinesUnknown && (s.State == StateReserved || s.State == StatePartlyCaptured)
}

// PageQuery asks for one window of the reservation list.
type PageQuery struct {
	Sort SortBy
	Desc bool
	// Filter is what the operator typed: every word must occur in a row's
	// search text (case and accents folded: "muller" finds "Müller").
	Filter string
	// State keeps only rows in this state ("" all; StateOutcomeUnknown).
	State State
	// Where is a parsed filter (internal/query), applied with Filter and
	// State: store/pagewhere.go says what each field means.
	Where query.Query
	// After and Before are keyset cursors (a PageRow's Pos): the rows that
	// come strictly after (or before) that position in the list's order.
	// At most one is set; with Before the rows still come in list order,
	// the ones just before the cursor.
	After, Before []byte
	// From is a cursor too: the rows at or after that position (a window
	// read again in place after a change).
	From []byte
	// Last asks for the end of the list (the last Limit rows), for End.
	Last bool
	// Limit is the number of rows (default 100, at most 10,000).
	Limit int
}

// PageRow is one row and its position in the query's order, a cursor for
// the next query.
type PageRow struct {
	Summary Summary
	Pos     []byte
}

// Page is one window of the list.
type Page struct {
	Rows []PageRow
	// Total is the number of rows that pass the filter, -1 when counting
	// them would keep the page waiting (ReservationCount says).
	Total int
	// More: rows follow the last one; Less: rows precede the first one.
	More, Less bool
}

const (
	defaultPageLimit = 100
	MaxPageLimit     = 10_000
)

// PageSize is the number of rows a page of q has: Limit, or the default
// when none is set, at most MaxPageLimit.
func (q *PageQuery) PageSize() int {
	switch {
	case q.Limit <= 0:
		return defaultPageLimit
	case q.Limit > MaxPageLimit:
		return MaxPageLimit
	}
	return q.Limit
}

// Check refuses a query a list cannot answer: a sort order beyond sorts
// (the list's number of them) or more than one cursor.
func (q *PageQuery) Check(sorts SortBy) error {
	if q.Sort >= sorts {
		return fmt.Errorf("sort order %d: %w", q.Sort, ErrNotFound)
	}
	n := 0
	for _, c := range [][]byte{q.After, q.Before, q.From} {
		if c != nil {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("a page is after a row, before one or from one, not more")
	}
	return nil
}

// filterWords are the query's words, folded like the search text.
func filterWords(q string) []string { return strings.Fields(fold.String(textsafe.Clean(q))) }

// FoldValue folds a value of the query like the search text.
func FoldValue(s string) string { return fold.String(textsafe.Clean(s)) }

// SearchWords are the query's words folded like the search text: Filter's, split
// at spaces, and Where's words and phrases.
func (q *PageQuery) SearchWords() []string {
	w := filterWords(q.Filter)
	for _, p := range q.Where.Words {
		if f := strings.Join(strings.Fields(FoldValue(p)), " "); f != "" {
			w = append(w, f)
		}
	}
	return w
}

// HasWhere reports whether Where has conditions beyond its words.
func (q *PageQuery) HasWhere() bool {
	w := q.Where
	return w.State != "" || w.Amount != nil || w.Created != nil || len(w.Customer) > 0 || len(w.Email) > 0 ||
		len(w.Service) > 0 || len(w.Operator) > 0
}

// HasCond: a state or Where's conditions, what a row's record is checked
// for (the words are the search text's).
func (q *PageQuery) HasCond() bool { return q.State != "" || q.HasWhere() }

// CondKey names the conditions, for the cache of their rows.
func (q *PageQuery) CondKey() string {
	if !q.HasWhere() {
		return string(q.State)
	}
	w := q.Where
	w.Words = nil
	return string(q.State) + "\x00" + w.Key()
}

// The transaction list's sort orders (PageQuery.Sort of TransactionPage).
// Ties are broken by the creation time and then the key.
const (
	TxSortCreated SortBy = iota
	TxSortKind
	TxSortInvoice
	TxSortCustomer // case-insensitive
	TxSortAmount   // in cents
	TxSortStatus   // the status code
	TxSortCount
)

// TxPageRow is one transaction of a page and its position, a cursor.
type TxPageRow struct {
	Tx  *Transaction
	Pos []byte
}

// TxPage is one window of the transaction list (see Page).
type TxPage struct {
	Rows       []TxPageRow
	Total      int
	More, Less bool
}
