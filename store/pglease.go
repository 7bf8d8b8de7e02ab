package store

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// On a file, an operation still "pending" when the cache is opened was
// left by a process that ended mid-request (the file lock proves nobody
// else has it open), so it becomes "outcome unknown". On a team's database
// other processes are sending right now; what proves that the one which
// journaled an operation is gone is a lease: every paydesk process holds a
// session advisory lock on its own connection for as long as it runs, and
// writes that lock's number into the operations it journals. PostgreSQL
// releases the lock when the session ends (process killed, machine gone,
// connection lost), so a lock that can be taken belongs to nobody alive.
//
// The lock is keyed on the session's backend pid, unique among live
// sessions. A pid reused by a later session is held again by that session
// (every paydesk takes the lock on its own pid), so a reused number keeps
// an old operation pending — the safe direction — and never marks a live
// one unknown.

// leaseClass is the first key of the two-key advisory locks paydesk holds
// as leases (the migration lock uses a one-key lock of its own).
const leaseClass = 7305482

// lease is this process's liveness lock on a connection of its own.
type lease struct {
	mu   sync.Mutex
	conn *pgx.Conn
	id   int64
}

// openLease takes, on a connection of its own (d), the lock that says
// this process is alive.
func openLease(ctx context.Context, d *dialing, what string) (*lease, error) {
	conn, err := d.take()
	if err != nil {
		return nil, fmt.Errorf("database %s: lease: %w", what, err)
	}
	var pid int32
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("database %s: lease: %w", what, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2)`, int32(leaseClass), pid); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("database %s: lease: %w", what, err)
	}
	return &lease{conn: conn, id: int64(pid)}, nil
}

// abandoned reports whether no live session holds lease id: the lock is
// taken and given back at once.
func (l *lease) abandoned(ctx context.Context, id int64) (bool, error) {
	if id == l.id {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var got bool
	if err := l.conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, int32(leaseClass), int32(id)).Scan(&got); err != nil {
		return false, err
	}
	if got {
		if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, int32(leaseClass), int32(id)); err != nil {
			return false, err
		}
	}
	return got, nil
}

func (l *lease) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.conn.Close(context.Background())
}

// recoverAbandoned turns the pending operations of processes that are gone
// into "outcome unknown", as opening a file does with its own: their
// request may or may not have reached the gateway, and nobody will hear its
// answer. Operations journaled before leases existed (no lease) stay as
// they are.
func (db *DB) recoverAbandoned(ctx context.Context) error {
	if db.lease == nil {
		return nil
	}
	type cand struct {
		id    uint64
		lease int64
	}
	var cands []cand
	err := db.read(ctx, func(tx RepoTx) error {
		open, err := tx.OpenOps()
		if err != nil {
			return err
		}
		for _, o := range open {
			op, err := getOp(tx, o.ID)
			if err != nil {
				return err
			}
			if op.State == OpPending && op.Lease != 0 && op.Lease != db.lease.id {
				cands = append(cands, cand{op.ID, op.Lease})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pending operations: %w", err)
	}
	for _, c := range cands {
		gone, err := db.lease.abandoned(ctx, c.lease)
		if err != nil {
			return fmt.Errorf("operation %d: is its process alive: %w", c.id, err)
		}
		if !gone {
			continue
		}
		err = db.update(ctx, func(tx RepoTx, ch *Change) error {
			op, err := getOp(tx, c.id)
			if err != nil {
				return err
			}
			if op.State != OpPending || op.Lease != c.lease {
				return nil // answered meanwhile
			}
			op.State = OpOutcomeUnknown
			op.Error = "the paydesk that sent it ended while the request was on its way"
			op.Updated = db.now()
			return db.putOp(tx, op, ch)
		})
		if err != nil {
			return fmt.Errorf("operation %d: %w", c.id, err)
		}
	}
	return nil
}

// dialing is a connection being made on a goroutine of its own: Open
// dials the lease's and the change bus's connections while the pool's
// first one migrates, instead of one after the other (each is a new
// server process, 15-25 ms on the 2-core VM; a store opened in 100 ms
// spent 35 of them waiting for these two).
type dialing struct {
	done chan struct{}
	conn *pgx.Conn
	err  error
}

func dial(ctx context.Context, dsn string) *dialing {
	d := &dialing{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.conn, d.err = pgx.Connect(ctx, dsn)
	}()
	return d
}

// take waits for the connection and hands it over.
func (d *dialing) take() (*pgx.Conn, error) {
	<-d.done
	c, err := d.conn, d.err
	d.conn, d.err = nil, errors.New("connection already taken")
	return c, err
}

// discard closes the connection unless it was taken.
func (d *dialing) discard() {
	<-d.done
	if d.conn != nil {
		_ = d.conn.Close(context.Background())
		d.conn = nil
	}
}
