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
	queue *jobQueue[*job]
	wg    sync.WaitGroup
}

// maxBatch bounds how many jobs share one transaction, so a commit stays
// short and the latency of the first job in a batch stays bounded.
const maxBatch = 512

// maxSharedBatch is maxBatch on PostgreSQL.
const maxSharedBatch = 32

func newBatcher(db *DB) *batcher {
	b := &batcher{db: db, queue: newJobQueue[*job](4 * maxBatch)}
	b.wg.Add(1)
	go b.run()
	return b
}

// do queues fn and waits until it is committed (or failed). When ctx ends
// first the job may still be committed later.
func (b *batcher) do(ctx context.Context, fn writeFn) error {
	// A context done before the job is queued writes nothing (the
	// queue's select would pick the queue half of the time).
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &job{fn: fn, done: make(chan error, 1)}
	if err := b.queue.send(ctx, j); err != nil {
		return err
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *batcher) close() {
	b.queue.close()
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
	for j := range b.queue.ch {
		jobs = gather(append(jobs[:0], j), b.queue.ch, limit)
		b.commit(jobs)
	}
}

// gather is a group commit's batch: jobs (the one that woke the loop)
// and every job queued up meanwhile, up to limit, without waiting for
// more — the next batch collects while this one commits.
func gather[J any](jobs []J, queue <-chan J, limit int) []J {
	for len(jobs) < limit {
		select {
		case j, ok := <-queue:
			if !ok {
				return jobs
			}
			jobs = append(jobs, j)
		default:
			return jobs
		}
	}
	return jobs
}

// jobQueue is a group commit's queue (the batcher's, and each push
// inbox's ingest): a channel that is closed once, after which a send is
// refused with ErrClosed instead of panicking.
type jobQueue[J any] struct {
	ch     chan J
	mu     sync.RWMutex
	closed bool
}

func newJobQueue[J any](size int) *jobQueue[J] { return &jobQueue[J]{ch: make(chan J, size)} }

// send queues j; it fails when the queue is closed or ctx ends first
// (then j was not queued).
func (q *jobQueue[J]) send(ctx context.Context, j J) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return ErrClosed
	}
	select {
	case q.ch <- j:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close ends the queue: the loop ranging over ch takes what is queued,
// then ends.
func (q *jobQueue[J]) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
	q.mu.Unlock()
}

// logSink is where a push inbox reports its trouble (the listener's
// error output): the file inbox's from Open (Options.Logf), either
// inbox's from StartApplier on; nil drops it.
type logSink struct {
	mu sync.Mutex
	f  func(format string, args ...any)
}

func (l *logSink) set(f func(format string, args ...any)) {
	l.mu.Lock()
	l.f = f
	l.mu.Unlock()
}

func (l *logSink) log(format string, args ...any) {
	l.mu.Lock()
	f := l.f
	l.mu.Unlock()
	if f != nil {
		f(format, args...)
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
