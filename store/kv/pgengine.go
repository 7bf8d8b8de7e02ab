package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"paydesk/store/postgres"
)

// pgEngine keeps the store's buckets in PostgreSQL: one row per key in
// paydesk_kv, the buckets and their sequences in paydesk_bucket. Write
// transactions are SERIALIZABLE: several paydesk processes (listeners,
// consoles, commands on other machines) run the same rules on one database,
// and a transaction that lost a race is run again, so a check made inside
// a transaction (one open operation per target, what remains to capture)
// holds across all of them.
type pgEngine struct {
	pool *pgxpool.Pool
	url  string
	// migrated are the schema steps this open applied (none when the
	// schema was current).
	migrated []string
}

func (e *pgEngine) Close() error { e.pool.Close(); return nil }

func (e *pgEngine) Update(fn func(Tx) error) error {
	ctx := context.Background()
	var err error
	for try := 0; try < postgres.MaxTries; try++ {
		if err = e.run(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable}, fn); !postgres.Retryable(err) {
			if postgres.DeniedWrite(err) {
				return postgres.ReadOnly(e.url, err)
			}
			return err
		}
		// Back off by a random share of a growing step, so two writers that
		// collided do not collide again in lockstep.
		step := time.Duration(min(try+1, 10)) * 2 * time.Millisecond
		time.Sleep(step/2 + time.Duration(mathrand.Int64N(int64(step))))
	}
	return fmt.Errorf("database %s: gave up after %d conflicting tries: %w", e.url, postgres.MaxTries, err)
}

func (e *pgEngine) View(fn func(Tx) error) error {
	return e.run(context.Background(), pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

func (e *pgEngine) run(ctx context.Context, opts pgx.TxOptions, fn func(Tx) error) error {
	ptx, err := e.pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("database %s: %w", e.url, err)
	}
	// Whatever happens in fn — an error, a panic — the connection goes back
	// to the pool (a rollback after a commit does nothing).
	defer func() { _ = ptx.Rollback(context.WithoutCancel(ctx)) }()
	t := &pgTx{ctx: ctx, tx: ptx, buckets: map[string]*pgBucket{}}
	err = fn(t)
	if err == nil {
		err = t.flush()
	}
	if err != nil {
		_ = ptx.Rollback(ctx)
		if t.err != nil && !postgres.Retryable(err) {
			return t.err // what the database said is more than what the rules made of it
		}
		return err
	}
	if t.err != nil {
		_ = ptx.Rollback(ctx)
		return t.err
	}
	return ptx.Commit(ctx)
}

// pgTx is one transaction. Bucket methods that cannot return an error
// (Get, the cursor) keep the first database error in err; the transaction
// then fails with it.
type pgTx struct {
	ctx     context.Context
	tx      pgx.Tx
	buckets map[string]*pgBucket
	err     error
	// pending are the writes not yet sent: they go in one round trip
	// (a pgx.Batch) before a cursor reads and at commit, instead of one
	// round trip each. Reads of a written key come from the bucket's cache.
	pending []pendingWrite
}

type pendingWrite struct {
	bucket, k, v []byte
	del          bool
}

// flush sends the pending writes in one round trip: one upsert of all the
// keys written and one delete of all the keys removed, each over arrays
// (unnest), instead of a statement per key — an apply transaction of the
// push inbox writes thousands of keys, and a statement each cost
// PostgreSQL more CPU than the rows themselves. Only the last write of a
// key counts; the keys go in sorted order, so two transactions writing
// the same keys lock them in the same order.
func (t *pgTx) flush() error {
	if t.err != nil || len(t.pending) == 0 {
		return t.err
	}
	last := make(map[string]int, len(t.pending))
	for i, w := range t.pending {
		last[string(w.bucket)+"\x00"+string(w.k)] = i
	}
	final := make([]pendingWrite, 0, len(last))
	for i, w := range t.pending {
		if last[string(w.bucket)+"\x00"+string(w.k)] == i {
			final = append(final, w)
		}
	}
	slices.SortFunc(final, func(a, b pendingWrite) int {
		if c := bytes.Compare(a.bucket, b.bucket); c != 0 {
			return c
		}
		return bytes.Compare(a.k, b.k)
	})
	var putB, putK, putV, delB, delK [][]byte
	for _, w := range final {
		if w.del {
			delB, delK = append(delB, w.bucket), append(delK, w.k)
		} else {
			putB, putK, putV = append(putB, w.bucket), append(putK, w.k), append(putV, w.v)
		}
	}
	t.pending = t.pending[:0]
	var b pgx.Batch
	if len(delK) > 0 {
		b.Queue(`DELETE FROM paydesk_kv AS kv USING unnest($1::bytea[], $2::bytea[]) AS d(bucket, k) WHERE kv.bucket = d.bucket AND kv.k = d.k`, delB, delK)
	}
	if len(putK) > 0 {
		b.Queue(`INSERT INTO paydesk_kv (bucket, k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[])
			ON CONFLICT (bucket, k) DO UPDATE SET v = excluded.v`, putB, putK, putV)
	}
	queueListRows(&b, final) // the list tables (pagepg.go): the last write of each key
	if err := t.tx.SendBatch(t.ctx, &b).Close(); err != nil {
		t.fail(err)
		return err
	}
	return nil
}

func (t *pgTx) fail(err error) {
	if t.err == nil && err != nil {
		t.err = err
	}
}

func (t *pgTx) Bucket(name []byte) Bucket {
	if b, ok := t.buckets[string(name)]; ok {
		if b == nil {
			return nil
		}
		return b
	}
	if t.err != nil {
		return failedBucket{t} // the transaction failed already: it ends with that error
	}
	var one int
	err := t.tx.QueryRow(t.ctx, `SELECT 1 FROM paydesk_bucket WHERE name = $1`, name).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		t.buckets[string(name)] = nil
		return nil
	}
	if err != nil {
		// Not "no such bucket": the rules would take that for an empty
		// store. The transaction ends with err (run again when it lost a
		// race); meanwhile the bucket reads as empty and refuses writes.
		t.fail(err)
		return failedBucket{t}
	}
	b := &pgBucket{t: t, name: append([]byte(nil), name...), cache: map[string][]byte{}, seqName: pgLogSequences[string(name)]}
	t.buckets[string(name)] = b
	return b
}

func (t *pgTx) CreateBucketIfNotExists(name []byte) (Bucket, error) {
	if _, err := t.tx.Exec(t.ctx, `INSERT INTO paydesk_bucket (name) VALUES ($1) ON CONFLICT DO NOTHING`, name); err != nil {
		return nil, err
	}
	delete(t.buckets, string(name))
	b := t.Bucket(name)
	if b == nil {
		return nil, fmt.Errorf("bucket %s: %w", name, t.err)
	}
	return b, nil
}

// pgBucket remembers what this transaction read and wrote, so the rules'
// repeated reads of one record (a reservation, the counters in meta) go to
// the database once.
type pgBucket struct {
	t     *pgTx
	name  []byte
	cache map[string][]byte // nil value: known absent
	// seqName is the sequence that numbers a log bucket (see
	// postgres/migrations/0003); "" keeps the counter in paydesk_bucket.
	seqName string
	// ranges are the stretches of keys a prefetch read (pgprefetch.go);
	// reserved are numbers of seqName taken ahead, handed out first.
	ranges   []*knownRange
	reserved []uint64
}

// pgLogSequences are the log buckets numbered by a sequence of their own.
var pgLogSequences = map[string]string{
	string(bPush): "paydesk_seq_pushes", string(bRejected): "paydesk_seq_rejected", string(bExchange): "paydesk_seq_exchanges",
}

func (b *pgBucket) Get(k []byte) []byte {
	if v, ok := b.cache[string(k)]; ok {
		return v
	}
	if b.knownAbsent(k) {
		b.cache[string(k)] = nil
		return nil
	}
	var v []byte
	err := b.t.tx.QueryRow(b.t.ctx, `SELECT v FROM paydesk_kv WHERE bucket = $1 AND k = $2`, b.name, k).Scan(&v)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		v = nil
	case err != nil:
		b.t.fail(err)
		return nil
	case v == nil:
		v = []byte{} // an empty value, not an absent one
	}
	b.cache[string(k)] = v
	return v
}

func (b *pgBucket) Put(k, v []byte) error {
	if len(k) == 0 {
		return errors.New("put: empty key")
	}
	v = append([]byte{}, v...) // the caller may reuse its buffer
	k = append([]byte(nil), k...)
	b.t.pending = append(b.t.pending, pendingWrite{bucket: b.name, k: k, v: v})
	b.cache[string(k)] = v
	if b.ranges != nil {
		b.noteKey(k)
	}
	return nil
}

func (b *pgBucket) Delete(k []byte) error {
	k = append([]byte(nil), k...)
	b.t.pending = append(b.t.pending, pendingWrite{bucket: b.name, k: k, del: true})
	b.cache[string(k)] = nil
	if b.ranges != nil {
		b.noteKey(k)
	}
	return nil
}

func (b *pgBucket) ForEach(fn func(k, v []byte) error) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return b.t.err
}

func (b *pgBucket) NextSequence() (uint64, error) {
	var n int64
	if len(b.reserved) > 0 {
		v := b.reserved[0]
		b.reserved = b.reserved[1:]
		return v, nil
	}
	if b.seqName != "" {
		if err := b.t.tx.QueryRow(b.t.ctx, `SELECT nextval($1)`, b.seqName).Scan(&n); err != nil {
			b.t.fail(err)
			return 0, err
		}
		return uint64(n), nil
	}
	if err := b.t.tx.QueryRow(b.t.ctx, `UPDATE paydesk_bucket SET seq = seq + 1 WHERE name = $1 RETURNING seq`, b.name).Scan(&n); err != nil {
		b.t.fail(err)
		return 0, err
	}
	return uint64(n), nil
}

func (b *pgBucket) Sequence() uint64 {
	var n int64
	if b.seqName != "" {
		if err := b.t.tx.QueryRow(b.t.ctx, `SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM `+b.seqName).Scan(&n); err != nil {
			b.t.fail(err)
			return 0
		}
		return uint64(n)
	}
	if err := b.t.tx.QueryRow(b.t.ctx, `SELECT seq FROM paydesk_bucket WHERE name = $1`, b.name).Scan(&n); err != nil {
		b.t.fail(err)
		return 0
	}
	return uint64(n)
}

func (b *pgBucket) SetSequence(v uint64) error {
	if b.seqName != "" {
		if _, err := b.t.tx.Exec(b.t.ctx, `SELECT setval($1, $2, $3)`, b.seqName, int64(max(v, 1)), v > 0); err != nil {
			b.t.fail(err)
			return err
		}
		return nil
	}
	if _, err := b.t.tx.Exec(b.t.ctx, `UPDATE paydesk_bucket SET seq = $2 WHERE name = $1`, b.name, int64(v)); err != nil {
		b.t.fail(err)
		return err
	}
	return nil
}

func (b *pgBucket) Cursor() Cursor { return &pgCursor{b: b} }

// pgCursor reads a page of rows at a time in the direction it moves. Each
// move from the current key asks for the next page past it, so writes the
// transaction made meanwhile are seen.
type pgCursor struct {
	b       *pgBucket
	page    []kvRow
	i       int
	forward bool
	cur     []byte // the key the cursor is on; nil before the start or past the end
}

type kvRow struct{ k, v []byte }

func (c *pgCursor) load(query string, arg []byte, forward bool) ([]byte, []byte) {
	if c.b.t.flush() != nil { // the rows the transaction wrote are part of what it walks
		c.page, c.cur = nil, nil
		return nil, nil
	}
	args := []any{c.b.name}
	if arg != nil {
		args = append(args, arg)
	}
	rows, err := c.b.t.tx.Query(c.b.t.ctx, query, args...)
	if err != nil {
		c.b.t.fail(err)
		c.page, c.cur = nil, nil
		return nil, nil
	}
	page := c.page[:0]
	for rows.Next() {
		var r kvRow
		if err := rows.Scan(&r.k, &r.v); err != nil {
			c.b.t.fail(err)
			break
		}
		if r.v == nil {
			r.v = []byte{}
		}
		page = append(page, r)
	}
	rows.Close()
	c.b.t.fail(rows.Err())
	c.page, c.i, c.forward = page, 0, forward
	return c.at()
}

func (c *pgCursor) at() ([]byte, []byte) {
	if c.i >= len(c.page) {
		c.cur = nil
		return nil, nil
	}
	r := c.page[c.i]
	c.cur = r.k
	return r.k, r.v
}

const (
	qFirst  = `SELECT k, v FROM paydesk_kv WHERE bucket = $1 ORDER BY k LIMIT 128`
	qLast   = `SELECT k, v FROM paydesk_kv WHERE bucket = $1 ORDER BY k DESC LIMIT 128`
	qSeek   = `SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k >= $2 ORDER BY k LIMIT 128`
	qAfter  = `SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k > $2 ORDER BY k LIMIT 128`
	qBefore = `SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k < $2 ORDER BY k DESC LIMIT 128`
)

// known serves a forward move from what a prefetch read, when it can.
func (c *pgCursor) known(k []byte, after bool) ([]byte, []byte, bool) {
	if c.b.ranges == nil {
		return nil, nil, false
	}
	page, ok := c.b.knownPage(k, after)
	if !ok {
		return nil, nil, false
	}
	c.page, c.i, c.forward = page, 0, true
	k, v := c.at()
	return k, v, true
}

func (c *pgCursor) First() ([]byte, []byte) {
	if k, v, ok := c.known([]byte{}, false); ok {
		return k, v
	}
	return c.load(qFirst, nil, true)
}
func (c *pgCursor) Last() ([]byte, []byte) { return c.load(qLast, nil, false) }

func (c *pgCursor) Seek(k []byte) ([]byte, []byte) {
	if k == nil {
		k = []byte{}
	}
	if k2, v, ok := c.known(k, false); ok {
		return k2, v
	}
	return c.load(qSeek, k, true)
}

func (c *pgCursor) Next() ([]byte, []byte) {
	if c.cur == nil {
		return nil, nil
	}
	if c.forward && c.i+1 < len(c.page) {
		c.i++
		return c.at()
	}
	if k, v, ok := c.known(c.cur, true); ok {
		return k, v
	}
	return c.load(qAfter, c.cur, true)
}

func (c *pgCursor) Prev() ([]byte, []byte) {
	if c.cur == nil {
		return nil, nil
	}
	if !c.forward && c.i+1 < len(c.page) {
		c.i++
		return c.at()
	}
	return c.load(qBefore, c.cur, false)
}

// failedBucket stands in for a bucket after the transaction failed: reads
// find nothing, writes return the failure, and run returns it in the end.
type failedBucket struct{ t *pgTx }

func (b failedBucket) Get([]byte) []byte                     { return nil }
func (b failedBucket) Put(_, _ []byte) error                 { return b.t.err }
func (b failedBucket) Delete([]byte) error                   { return b.t.err }
func (b failedBucket) Cursor() Cursor                        { return failedCursor{} }
func (b failedBucket) ForEach(func(k, v []byte) error) error { return b.t.err }
func (b failedBucket) NextSequence() (uint64, error)         { return 0, b.t.err }
func (b failedBucket) Sequence() uint64                      { return 0 }
func (b failedBucket) SetSequence(uint64) error              { return b.t.err }

type failedCursor struct{}

func (failedCursor) First() ([]byte, []byte)      { return nil, nil }
func (failedCursor) Last() ([]byte, []byte)       { return nil, nil }
func (failedCursor) Seek([]byte) ([]byte, []byte) { return nil, nil }
func (failedCursor) Next() ([]byte, []byte)       { return nil, nil }
func (failedCursor) Prev() ([]byte, []byte)       { return nil, nil }

// kvOn is the kv engine over the native engine's connections: what a
// layout-7 database still holds in paydesk_kv, read for its conversion.
func kvOn(rel *postgres.Engine) *pgEngine {
	return &pgEngine{pool: rel.Pool(), url: rel.URL(), migrated: rel.Migrated()}
}
