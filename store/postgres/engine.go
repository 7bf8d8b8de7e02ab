package postgres

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Engine is the native PostgreSQL engine: the store's records are
// typed rows of relations people can read with SQL (the ledger,
// migrations/0009 and ledger.go; the logs, the journal, orders
// and batches, 0010 and logs.go), and the database does what it is
// good at — look-ups by index, uniqueness, insert-only tables — instead of
// keeping buckets of bytes (package store's pgengine.go).
//
// Write transactions are SERIALIZABLE and run again when they lost a race,
// as the kv engine's are (store's pgEngine): several paydesk processes run the same rules on one
// database, and a check made inside a transaction (one open operation per
// target, what remains to capture) holds across all of them.
type Engine struct {
	pool *pgxpool.Pool
	url  string // redacted: for messages
	// migrated are the schema steps the open applied.
	migrated []string
	// scanFirst overrides the package's scanFirst (page.go), for tests.
	scanFirst int
}

// Close closes the engine's connections.
func (e *Engine) Close() error { e.pool.Close(); return nil }

// Tx is one transaction of the native engine. The typed reads and
// writes of the rules (ledger.go, logs.go) are its methods.
// A method that cannot return an error keeps the first database error in
// err; the transaction then fails with it.
type Tx struct {
	ctx   context.Context
	tx    pgx.Tx
	e     *Engine
	write bool
	err   error
	// pre is what the push inbox's applier read ahead (prefetch.go).
	pre *prefetch
	// queued are writes whose answers the rules know without asking
	// (prefetch.go): they go to the server together, before the next
	// statement or the commit.
	queued []queuedWrite
	// forwardTo is the store's forward endpoints as this transaction read
	// them (outbox.go): the inbox applies many pushes in one, and each
	// records its deliveries.
	forwardTo     []string
	forwardToRead bool
}

// fail keeps the first error of the transaction.
func (t *Tx) fail(err error) error {
	if t.err == nil && err != nil {
		t.err = err
	}
	return err
}

// queue adds a write to the ones sent before the next statement; what
// names it in an error.
func (t *Tx) queue(what, sql string, args ...any) {
	t.queued = append(t.queued, queuedWrite{what: what, sql: sql, args: args})
}

// flush sends the queued writes in one round trip, rows of the same table
// together (queue.go); the first that fails fails the transaction.
func (t *Tx) flush() error {
	if t.err != nil {
		return t.err
	}
	if len(t.queued) == 0 {
		return nil
	}
	rows, what, rest := pushCopy(t.queued)
	stmts := coalesce(rest)
	t.queued = t.queued[:0]
	if len(rows) > 0 {
		if err := t.copyPushes(rows, what); err != nil {
			return err
		}
	}
	if len(stmts) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, st := range stmts {
		b.Queue(st.sql, st.args...)
	}
	br := t.tx.SendBatch(t.ctx, b)
	for _, st := range stmts {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return t.fail(fmt.Errorf("%s: %w", st.what, withDetail(err)))
		}
	}
	return t.fail(br.Close())
}

// exec runs a statement in the transaction.
func (t *Tx) exec(sql string, args ...any) error {
	if err := t.flush(); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx, sql, args...)
	t.wrote(sql)
	return t.fail(err)
}

// queryRow is tx.QueryRow; Scan's error other than ErrNoRows fails the
// transaction (see scanRow).
func (t *Tx) queryRow(sql string, args ...any) pgx.Row {
	if err := t.flush(); err != nil {
		return errRow{err}
	}
	return t.tx.QueryRow(t.ctx, sql, args...)
}

// scanRow scans a one-row query into dest and reports whether there was a
// row; a database error fails the transaction.
func (t *Tx) scanRow(sql string, args []any, dest ...any) (bool, error) {
	err := t.queryRow(sql, args...).Scan(dest...)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, t.fail(err)
	}
	return true, nil
}

// query runs a query; rows is nil when it failed.
func (t *Tx) query(sql string, args ...any) (pgx.Rows, error) {
	if err := t.flush(); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, t.fail(err)
	}
	return rows, nil
}

// rowsOf reads every row of a query with scan (pgx.CollectRows); the
// first error fails the transaction. No rows is nil, as the bucket engine
// returns it.
func rowsOf[T any](t *Tx, scan pgx.RowToFunc[T], sql string, args ...any) ([]T, error) {
	rows, err := t.query(sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, t.fail(err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// errRow is a row whose Scan returns the transaction's earlier error.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// UpdateTx runs fn in a SERIALIZABLE write transaction and commits it,
// running it again (after a short random pause) when it lost a race with
// another transaction; fn may therefore run more than once.
func (e *Engine) UpdateTx(ctx context.Context, fn func(*Tx) error) error {
	var err error
	for try := 0; try < MaxTries; try++ {
		if err = e.run(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable}, true, fn); !Retryable(err) {
			if DeniedWrite(err) {
				return &readOnlyError{url: e.url, err: err}
			}
			return err
		}
		step := time.Duration(min(try+1, 10)) * 2 * time.Millisecond
		t := time.NewTimer(step/2 + time.Duration(mathrand.Int64N(int64(step))))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("database %s: %w (after %d conflicting tries: %w)", e.url, ctx.Err(), try+1, err)
		case <-t.C:
		}
	}
	return fmt.Errorf("database %s: gave up after %d conflicting tries: %w", e.url, MaxTries, err)
}

// ViewTx runs fn in a read-only transaction over one snapshot.
func (e *Engine) ViewTx(ctx context.Context, fn func(*Tx) error) error {
	return e.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, false, fn)
}

func (e *Engine) run(ctx context.Context, opts pgx.TxOptions, write bool, fn func(*Tx) error) error {
	ptx, err := e.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("database %s: %w", e.url, err)
	}
	// Whatever happens in fn — an error, a panic — the connection goes back
	// to the pool (a rollback after a commit does nothing).
	defer func() { _ = ptx.Rollback(context.WithoutCancel(ctx)) }()
	t := &Tx{ctx: ctx, tx: ptx, e: e, write: write}
	err = fn(t)
	if err == nil {
		err = t.flush()
	}
	if err != nil {
		if t.err != nil && !errors.Is(err, t.err) {
			// What the database said (a lost race, so that update runs fn
			// again) is more than what the rules made of it.
			return t.err
		}
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return err // Retryable (40001 at commit) or what the database said
		}
		return fmt.Errorf("database %s: commit: %w", e.url, err)
	}
	return nil
}

// QueryRow runs a one-row query in the transaction: for a reader that
// looks at the tables themselves (a test of what a method wrote).
func (t *Tx) QueryRow(sql string, args ...any) pgx.Row { return t.queryRow(sql, args...) }
