package views

import (
	"context"
	"slices"

	"paydesk/store"
)

// ReservationSource answers the reservation list's queries: the store,
// which sorts and filters in its indexes (bbolt) or its list table
// (PostgreSQL), or summaries held in memory (rows handed over whole).
type ReservationSource interface {
	ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error)
	ReservationCount(ctx context.Context, q store.PageQuery) (int, error)
}

// ReservationSourceMsg gives the reservations tab its source: from then on
// it reads pages from it.
type ReservationSourceMsg struct{ Source ReservationSource }

// memSource is a source over summaries held in memory. Its answers are
// immediate, so the list asks it inside Update.
type memSource struct{ all []store.Summary }

func (m *memSource) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	return store.PageSummaries(m.all, q), nil
}

func (m *memSource) ReservationCount(ctx context.Context, q store.PageQuery) (int, error) {
	return memCount(q, func(q store.PageQuery) int { return store.PageSummaries(m.all, q).Total }), nil
}

// memCount counts for a source in memory: the whole list's Total, up to
// q.Limit when one is given.
func memCount(q store.PageQuery, total func(store.PageQuery) int) int {
	upTo := q.Limit
	q.Limit = 1
	n := total(q)
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n
}

// upsert and remove apply a live change to the summaries.
func (m *memSource) upsert(rows []*ReservationRow, removed []string) {
	fresh := make([]store.Summary, len(rows))
	for i, r := range rows {
		fresh[i] = r.Summary
	}
	m.all = upsertBy(m.all, fresh, func(s store.Summary) string { return s.Key })
	if len(removed) > 0 {
		m.all = slices.DeleteFunc(m.all, func(s store.Summary) bool { return slices.Contains(removed, s.Key) })
	}
}

// upsertBy replaces the rows of all with the key of a fresh one, and adds
// the fresh ones that are new.
func upsertBy[T any](all, fresh []T, key func(T) string) []T {
	pos := make(map[string]int, len(all))
	for i, r := range all {
		pos[key(r)] = i
	}
	for _, r := range fresh {
		if i, ok := pos[key(r)]; ok {
			all[i] = r
			continue
		}
		pos[key(r)] = len(all)
		all = append(all, r)
	}
	return all
}

// resPages is a ReservationSource as a paged list's source.
type resPages struct{ src ReservationSource }

func (r resPages) Page(ctx context.Context, q Query[store.PageRow]) (pageOf[store.PageRow], error) {
	if q.Keep != nil {
		return pageOf[store.PageRow]{}, errKeepInStore{"reservation"}
	}
	p, err := r.src.ReservationPage(ctx, q.PageQuery)
	return pageOf[store.PageRow]{rows: p.Rows, total: p.Total, more: p.More, less: p.Less}, err
}

func (r resPages) Count(ctx context.Context, q Query[store.PageRow]) (int, error) {
	if q.Keep != nil {
		return 0, errKeepInStore{"reservation"}
	}
	return r.src.ReservationCount(ctx, q.PageQuery)
}

func pageRowPos(r *store.PageRow) []byte { return r.Pos }

// resSpec is the reservation list's rows for a paged list.
var resSpec = pagedSpec[store.PageRow]{
	key:      func(r *store.PageRow) string { return r.Summary.Key },
	pos:      pageRowPos,
	sortOf:   sortOf,
	sortable: reservationSortable,
	filter:   store.ReservationFilter,
	markable: true,
}

// resList is the reservation list.
type resList = pagedList[store.PageRow]

func newResList(ctx *Context) *resList { return newPagedList(ctx, reservationColumns, resSpec, rcAge) }

// sortOf maps a column to the store's order.
func sortOf(col int) store.SortBy {
	switch col {
	case rcInvoice:
		return store.SortInvoice
	case rcCustomer:
		return store.SortCustomer
	case rcAmount:
		return store.SortAmount
	case rcState:
		return store.SortState
	}
	return store.SortCreated
}
