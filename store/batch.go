package store

import (
	"context"
	"sync"
)

// A writeFn changes the cache inside tx and notes what it changed in c. It
// may run more than once (a batch that fails is re-run one job at a time),
// so it must derive everything from tx and its own arguments.
type writeFn func(tx RepoTx, c *Change) error

type job struct {
	fn   writeFn
	done chan error
}

// batcher is the group commit: one goroutine takes every job that queued up
// while the previous commit was being fsync'd and commits them together, so
// a burst of pushes costs one fsync instead of one each. A job's caller is
// answered only after its batch is on disk.
type batcher struct {
	db    *DB
	queue chan *job

	mu     sync.RWMutex
	closed bool
	wg     sync.WaitGroup
}

// maxBatch bounds how many jobs share one transaction, so a commit stays
// short and the latency of the first job in a batch stays bounded.
const maxBatch = 512

// maxSharedBatch is maxBatch on PostgreSQL.
const maxSharedBatch = 32

func newBatcher(db *DB) *batcher {
	b := &batcher{db: db, queue: make(chan *job, 4*maxBatch)}
	b.wg.Add(1)
	go b.run()
	return b
}

// do queues fn and waits until it is committed (or failed). When ctx ends
// first the job may still be committed later.
func (b *batcher) do(ctx context.Context, fn writeFn) error {
	// A context done before the job is queued writes nothing (select
	// below would pick the queue half of the time).
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &job{fn: fn, done: make(chan error, 1)}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return ErrClosed
	}
	select {
	case b.queue <- j:
		b.mu.RUnlock()
	case <-ctx.Done():
		b.mu.RUnlock()
		return ctx.Err()
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *batcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.queue)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *batcher) run() {
	defer b.wg.Done()
	// On a shared database a batch's transaction races the other
	// listeners' and PostgreSQL's conflict tracking coarsens as a
	// transaction reads more: smaller batches lose fewer races.
	limit := maxBatch
	if b.db.repo.Capabilities().Shared {
		limit = maxSharedBatch
	}
	jobs := make([]*job, 0, limit)
	for j := range b.queue {
		jobs = append(jobs[:0], j)
	drain:
		for len(jobs) < limit {
			select {
			case j, ok := <-b.queue:
				if !ok {
					break drain
				}
				jobs = append(jobs, j)
			default:
				break drain
			}
		}
		b.commit(jobs)
	}
}

func (b *batcher) commit(jobs []*job) {
	var c Change
	err := b.db.repo.Update(context.Background(), func(tx RepoTx) error {
		c = Change{keys: b.db.audit} // a transaction that lost a race runs again from the start
		for _, j := range jobs {
			if err := j.fn(tx, &c); err != nil {
				return err
			}
		}
		return c.writeCounts(tx)
	})
	if err == nil {
		b.db.notify(c)
		for _, j := range jobs {
			j.done <- nil
		}
		return
	}
	if len(jobs) == 1 {
		jobs[0].done <- err
		return
	}
	// One job broke the batch: commit each on its own so the others still
	// land and only the broken one reports its error.
	for _, j := range jobs {
		// The jobs were taken: their callers' contexts bound only
		// their wait, so the rerun is not cut short by one of them.
		j.done <- b.db.update(context.Background(), j.fn)
	}
}

// update runs fn in its own transaction (one fsync) and notifies
// subscribers after the commit. A ctx done before it begins writes
// nothing; once begun the transaction commits whole or not at all.
func (db *DB) update(ctx context.Context, fn writeFn) error {
	var c Change
	err := db.repo.Update(ctx, func(tx RepoTx) error {
		c = Change{keys: db.audit}
		if err := fn(tx, &c); err != nil {
			return err
		}
		return c.writeCounts(tx)
	})
	if err != nil {
		return err
	}
	db.notify(c)
	return nil
}

// read runs fn in a read transaction of the engine; the engine stops a
// long read when ctx is done (kvRepo.View, the PostgreSQL queries).
func (db *DB) read(ctx context.Context, fn func(tx RepoTx) error) error {
	return db.repo.View(ctx, fn)
}
