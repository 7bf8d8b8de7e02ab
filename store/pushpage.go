package store

import (
	"context"
	"fmt"

	"paydesk/store/domain"
)

// The push log is paged like the other lists: the engine walks its own
// index or table (Capabilities.Pushes: bPushTime on bbolt, SQL over
// paydesk_pushes and paydesk_rejected on PostgreSQL), and a store without
// one pages the pushes in memory with PagePushes, the reference every
// engine is tested against (store/domain/pushpage.go).

type (
	// PushQuery asks for one window of the push log.
	PushQuery = domain.PushQuery
	// PushPage is one window of the push log.
	PushPage = domain.PushPage
	// PushPageRow is a push and its position, a cursor.
	PushPageRow = domain.PushPageRow
)

// PushStatuses are the values of PushQuery.Status.
var PushStatuses = domain.PushStatuses

// PushPos is a push's position in the log, the cursor of its row.
func PushPos(dst []byte, p *PushRecord) []byte { return domain.PushPos(dst, p) }

// PagePushes answers q over pushes held in memory.
func PagePushes(all []*PushRecord, q PushQuery) PushPage { return domain.PagePushes(all, q) }

// PushPage returns one window of the push log (stored and rejected
// pushes, in the order they were received), filtered in the store.
func (db *DB) PushPage(ctx context.Context, q PushQuery) (PushPage, error) {
	if err := q.Check(); err != nil {
		return PushPage{}, err
	}
	if pl := db.repo.Capabilities().Pushes; pl != nil {
		return pl.PushPage(ctx, q)
	}
	all, err := db.allPushes(ctx)
	if err != nil {
		return PushPage{}, err
	}
	return PagePushes(all, q), nil
}

// PushCount counts the pushes q keeps (its cursor does not matter), up to
// q.Limit when it is > 0: for a PushPage whose Total is -1.
func (db *DB) PushCount(ctx context.Context, q PushQuery) (int, error) {
	if err := q.Check(); err != nil {
		return 0, err
	}
	if pl := db.repo.Capabilities().Pushes; pl != nil {
		return pl.PushCount(ctx, q)
	}
	all, err := db.allPushes(ctx)
	if err != nil {
		return 0, err
	}
	upTo := q.Limit
	q.After, q.Before, q.From, q.Last, q.Limit = nil, nil, nil, false, 1
	n := PagePushes(all, q).Total
	if upTo > 0 {
		n = min(n, upTo)
	}
	return n, nil
}

// allPushes reads the whole push log and rejected log, for an engine
// without a paged push query.
func (db *DB) allPushes(ctx context.Context) ([]*PushRecord, error) {
	stored, err := db.Pushes(ctx, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("push log: %w", err)
	}
	rejected, err := db.RejectedPushes(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("push log: %w", err)
	}
	for _, p := range rejected {
		p.Rejected = true
	}
	return append(stored, rejected...), nil
}
