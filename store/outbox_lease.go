package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// outboxLockKey is the session advisory lock of the outbox worker on a
// team's database (the migrations' lock is 7305482190, the applier's
// 7305482191, the conversions' 7305482192 and 7305482193).
const outboxLockKey = 7305482194

// HoldOutbox waits until this process's outbox worker may send, and
// returns a context that ends when it may no longer — ctx ended, or the
// lease was lost — and release, which gives the lease back.
//
// Every process that owns a store with shop endpoints runs a worker
// (listen, serve, the console). On a file the cache's lock already makes
// the process the only one. On a team's database several do, and two
// workers reading the same due deliveries would both send them: the
// worker that holds a session advisory lock on a connection of its own
// sends, the others wait for it. When its process ends, PostgreSQL ends
// the session and the lock with it, and another worker takes over from
// the store (the worker keeps no state). A connection lost while an
// attempt is in flight may see that push sent again by the next worker:
// at least once, as after a kill.
func (db *DB) HoldOutbox(ctx context.Context) (held context.Context, release func(), err error) {
	if db.inbox == nil {
		held, cancel := context.WithCancel(ctx)
		return held, cancel, nil
	}
	conn, err := pgx.Connect(ctx, db.inbox.dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("database %s: the outbox's lease: %w", db.path, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(outboxLockKey)); err != nil {
		_ = conn.Close(context.Background())
		return nil, nil, fmt.Errorf("database %s: the outbox's lease: %w", db.path, err)
	}
	held, cancel := context.WithCancel(ctx)
	lost := make(chan struct{})
	go func() {
		defer close(lost)
		defer cancel()
		// The connection only waits from now on: its end is the
		// session's (and the lock's), or the release.
		for {
			if _, err := conn.WaitForNotification(held); err != nil {
				return
			}
		}
	}()
	return held, func() {
		cancel()
		<-lost
		_ = conn.Close(context.Background())
	}, nil
}
