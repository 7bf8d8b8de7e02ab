package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/api"
	"paydesk/internal/burst"
	"paydesk/store/kv"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// The push inbox on PostgreSQL (issue 17). On a team's database a listener
// does not run the push rules while the gateway waits: the rules read the
// store key by key, a round trip each, and two listeners' serializable
// transactions lose races to each other. Instead:
//
//   - IngestPush writes the push to paydesk_push_inbox, whose unique
//     (key, hash) is the push's identity, and returns once that row is
//     committed: "stored" means durable in the inbox. A listener's pushes
//     go in group commits — one INSERT … SELECT FROM unnest(…) ON CONFLICT
//     DO NOTHING RETURNING per batch, one transaction, one WAL flush — and
//     the next batch collects while the previous one commits. A push whose
//     identity is there already (a retry, the same push at the other
//     listener) is a duplicate: answered 200, stored once.
//   - The applier runs the store's rules (ApplyPush's) on the rows not yet
//     applied, oldest first, many per transaction, and marks them applied
//     (push_id, result) in that same transaction: a crash between the
//     inbox commit and the apply loses nothing, and nothing is applied
//     twice (the transaction is SERIALIZABLE: two appliers that took the
//     same row cannot both commit). One applier works at a time per
//     database — whoever holds a session advisory lock; when its process
//     dies the session ends and another listener's applier takes over. It
//     drains the backlog when it gets the lock, then wakes on NOTIFY
//     paydesk_inbox (sent by the ingesters, with how many pushes they
//     committed) or once a second. While pushes arrive in a burst it
//     applies a batch and then rests, so that the ingest the gateway
//     waits on gets the cores (pginbox_burst.go).
//   - Consoles hear of the applied pushes through the change bus, as of any
//     commit; a listener hears what became of the pushes it took (for its
//     output) from its own applier or, when another process applied them,
//     from the inbox row.

const (
	// inboxChannel wakes the applier after pushes were ingested.
	inboxChannel = "paydesk_inbox"
	// applierLockKey is the session advisory lock the applier holds.
	applierLockKey = 7305482191
	// maxIngestBatch bounds the pushes of one inbox INSERT.
	maxIngestBatch = 1024
	// applyBatchSize is how many inbox rows one apply transaction takes.
	applyBatchSize = 500
	// maxWaiters bounds the pushes a listener waits to hear the outcome of
	// (for its output); past it a push is reported as stored at once.
	maxWaiters = 50_000
	// ingestTimeout bounds one inbox INSERT (a database that stopped).
	ingestTimeout = 30 * time.Second
)

// Ingested says what IngestPush did with a push.
type Ingested struct {
	// Inbox is the push's row in the inbox; for a duplicate, the row of
	// the push it repeats.
	Inbox     uint64
	Duplicate bool
}

type ingestJob struct {
	key, hash, rec []byte
	receipt        PushReceipt // recorded against the push it repeats when it is a duplicate
	done           chan ingestAnswer
}

type ingestAnswer struct {
	id  uint64
	dup bool
	err error
}

// inbox is a DB's side of the push inbox: the ingest batcher, and the
// applier and the outcome reporter once started.
type inbox struct {
	db  *DB
	dsn string

	queue     *jobQueue[*ingestJob]
	ingestBuf []byte // the batcher's encoded arguments (pginbox_ingest.go)
	flushWG   sync.WaitGroup

	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	applierOnce  sync.Once
	holding      atomic.Bool   // this process's applier holds the lock
	applierWake  chan struct{} // cap 1
	notifierOnce sync.Once
	notifyWake   chan struct{} // cap 1: send NOTIFY paydesk_inbox
	notifyCount  atomic.Int64  // pushes committed since the last NOTIFY (its payload)
	notifyPace   func() bool   // waits between NOTIFYs (paceNotify; tests hold it)

	// burst counts the pushes arriving in the database (this process's
	// commits, the others' NOTIFY payloads): the applier yields to a burst
	// (pginbox_burst.go). clock is its time; sleep the applier's rest.
	burst burst.Meter
	clock func() time.Time
	sleep func(lost <-chan struct{}, d time.Duration) bool

	reporterOnce sync.Once
	reportWake   chan struct{} // cap 1
	wmu          sync.Mutex
	waiters      map[uint64][]func(ApplyResult)
	// heard holds the inbox rows another process said it applied, not yet
	// looked up (pginbox_report.go); lookAll asks the reporter to look for
	// every awaited push (a notification without them). Both under wmu.
	heard   []idRun
	lookAll bool
	// reportEvery is how often the reporter looks for every awaited push
	// (a lost notification); readApplied reads outcomes (tests count it).
	reportEvery time.Duration
	readApplied func(ids []int64) ([]appliedRow, error)

	// logs reports the applier's trouble (the listener's error output).
	logs logSink
}

func newInbox(db *DB, dsn string) *inbox {
	ctx, stop := context.WithCancel(context.Background())
	ib := &inbox{db: db, dsn: dsn, queue: newJobQueue[*ingestJob](4 * maxIngestBatch), ctx: ctx, stop: stop,
		applierWake: make(chan struct{}, 1), notifyWake: make(chan struct{}, 1), reportWake: make(chan struct{}, 1),
		waiters: map[uint64][]func(ApplyResult){}, clock: time.Now, reportEvery: time.Second}
	ib.sleep = ib.sleepFor
	ib.readApplied = ib.applied
	ib.notifyPace = ib.paceNotify
	ib.flushWG.Add(1)
	go ib.flushLoop()
	return ib
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// close stops taking pushes, commits what is queued, and stops the
// applier (after its current transaction) and the reporter.
func (ib *inbox) close() {
	ib.queue.close()
	ib.flushWG.Wait()
	ib.stop()
	ib.wg.Wait()
}

func (ib *inbox) log(format string, args ...any) { ib.logs.log(format, args...) }

// IngestPush stores a verified, decoded push in the inbox of a team's
// database and returns once that is committed (durable); the push's
// effects are applied afterwards by the applier (StartApplier). A push
// whose identity (key and content hash) is in the inbox already is a
// duplicate and stored once. onApplied, if not nil, is called once, on
// another goroutine, with what applying the push did (for a duplicate:
// Duplicate and the push it repeats) — or with an empty result (stored,
// outcome not reported) when the listener has too many outcomes pending.
// On a file opened with Options.PushInbox the push goes to the file's
// inbox (fileinbox.go); on one without, there is none: ApplyPush applies
// at once.
func (db *DB) IngestPush(ctx context.Context, rec PushRecord, p *api.Push, onApplied func(ApplyResult)) (Ingested, error) {
	ib := db.inbox
	if ib == nil && db.finbox == nil {
		return Ingested{}, errors.New("ingest push: no push inbox (a team's database, or a file opened with Options.PushInbox); use ApplyPush")
	}
	if p == nil || p.Key() == "" {
		return Ingested{}, errors.New("ingest push: no decoded push with a key")
	}
	pp := db.preparePush(rec, p)
	if db.finbox != nil {
		return db.finbox.ingest(ctx, pp, p, onApplied)
	}
	j := &ingestJob{key: []byte(pp.rec.Key), hash: pp.rec.Hash[:], rec: pp.stored(), done: make(chan ingestAnswer, 1),
		receipt: PushReceipt{At: pp.rec.ReceivedAt, RemoteAddr: pp.rec.RemoteAddr, Signature: pp.rec.Signature}}
	if err := ib.queue.send(ctx, j); err != nil {
		return Ingested{}, err
	}
	var a ingestAnswer
	select {
	case a = <-j.done:
	case <-ctx.Done():
		return Ingested{}, ctx.Err()
	}
	if a.err != nil {
		return Ingested{}, fmt.Errorf("ingest push %s: %w", p.Key(), a.err)
	}
	if onApplied != nil {
		fn := onApplied
		if a.dup {
			fn = func(r ApplyResult) {
				if r.ID == 0 { // the earlier push's outcome is not reported
					onApplied(ApplyResult{Duplicate: true, Ignored: "duplicate of a push stored before"})
					return
				}
				onApplied(ApplyResult{ID: r.ID, Duplicate: true, Ignored: "duplicate of push " + strconv.FormatUint(r.ID, 10), ReservationKey: r.ReservationKey})
			}
		}
		ib.await(a.id, fn)
	}
	return Ingested{Inbox: a.id, Duplicate: a.dup}, nil
}

// flushLoop is the ingest group commit: it takes every push that queued up
// while the previous INSERT was committing and inserts them together.
func (ib *inbox) flushLoop() {
	defer ib.flushWG.Done()
	jobs := make([]*ingestJob, 0, maxIngestBatch)
	for j := range ib.queue.ch {
		jobs = gather(append(jobs[:0], j), ib.queue.ch, maxIngestBatch)
		ib.commit(jobs)
	}
}

const qIngest = `INSERT INTO paydesk_push_inbox (key, hash, rec)
SELECT * FROM unnest($1::bytea[], $2::bytea[], $3::bytea[]) AS u(key, hash, rec) ORDER BY key, hash
ON CONFLICT (key, hash) DO NOTHING
RETURNING id, key, hash`

const qIngestDuplicates = `SELECT i.id, i.key, i.hash FROM paydesk_push_inbox i
JOIN unnest($1::bytea[], $2::bytea[]) AS u(key, hash) ON i.key = u.key AND i.hash = u.hash`

// commit inserts a batch in one statement (its own transaction: one
// commit, one WAL flush) and answers each push: its new row, or the row it
// duplicates. ON CONFLICT DO NOTHING waits for a concurrent insert of the
// same identity (the other listener) to end, so a push answered as a
// duplicate duplicates a committed row.
func (ib *inbox) commit(jobs []*ingestJob) {
	// In identity order: two listeners inserting the same pushes wait for
	// each other's rows in one order, never in a cycle (a deadlock).
	sorted := slices.Clone(jobs)
	slices.SortFunc(sorted, func(a, b *ingestJob) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return bytes.Compare(a.hash, b.hash)
	})
	keys, hashes, recs := make([][]byte, len(jobs)), make([][]byte, len(jobs)), make([][]byte, len(jobs))
	for i, j := range sorted {
		keys[i], hashes[i], recs[i] = j.key, j.hash, j.rec
	}
	ctx, cancel := context.WithTimeout(context.Background(), ingestTimeout)
	defer cancel()
	var ids map[string]uint64
	var err error
	for try := 0; try < 5; try++ {
		if ids, err = ib.insertBatch(ctx, keys, hashes, recs); !postgres.Retryable(err) {
			break
		}
	}
	if err != nil {
		for _, j := range jobs {
			j.done <- ingestAnswer{err: fmt.Errorf("database %s: %w", ib.db.path, err)}
		}
		return
	}
	ib.wakeApplier(len(ids))
	claimed := make(map[string]bool, len(ids))
	var dupKeys, dupHashes [][]byte
	var later []*ingestJob
	var dups []dupJob // answered once their receipts are recorded
	for _, j := range jobs {
		ident := string(j.key) + string(j.hash) // the hash is 32 bytes: unambiguous
		if id, ok := ids[ident]; ok {
			if !claimed[ident] {
				claimed[ident] = true
				j.done <- ingestAnswer{id: id}
			} else {
				dups = append(dups, dupJob{j, id}) // twice in one batch
			}
			continue
		}
		dupKeys, dupHashes = append(dupKeys, j.key), append(dupHashes, j.hash)
		later = append(later, j)
	}
	if len(later) > 0 {
		old, err := ib.identities(ctx, qIngestDuplicates, dupKeys, dupHashes)
		for _, j := range later {
			id, ok := old[string(j.key)+string(j.hash)]
			switch {
			case err != nil:
				j.done <- ingestAnswer{err: fmt.Errorf("database %s: %w", ib.db.path, err)}
			case !ok:
				j.done <- ingestAnswer{err: errors.New("inbox: neither inserted nor found (a concurrent insert rolled back): try again")}
			default:
				dups = append(dups, dupJob{j, id})
			}
		}
	}
	ib.recordReceipts(ctx, dups)
}

// identities runs a query returning (id, key, hash) rows.
func (ib *inbox) identities(ctx context.Context, q string, args ...any) (map[string]uint64, error) {
	rows, err := ib.db.conn.Pool().Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]uint64{}
	var id int64
	var key, hash []byte
	for rows.Next() {
		if err := rows.Scan(&id, &key, &hash); err != nil {
			return nil, err
		}
		out[string(key)+string(hash)] = uint64(id)
	}
	return out, rows.Err()
}

// wakeApplier tells the applier that n pushes were committed to the
// inbox: this process's own directly, any other's through NOTIFY (sent by
// the notifier, which coalesces the wakes of many batches into one NOTIFY
// whose payload is their count, for the applier's burst meter).
func (ib *inbox) wakeApplier(n int) {
	if ib.holding.Load() {
		ib.burst.Add(ib.clock(), n)
		poke(ib.applierWake)
		return
	}
	ib.notifyCount.Add(int64(n))
	ib.notifierOnce.Do(func() {
		ib.wg.Add(1)
		go ib.notifier()
	})
	poke(ib.notifyWake)
}

func (ib *inbox) notifier() {
	defer ib.wg.Done()
	for {
		select {
		case <-ib.ctx.Done():
			return
		case <-ib.notifyWake:
		}
		n := ib.notifyCount.Swap(0)
		if ib.holding.Load() { // the lock came here meanwhile
			ib.burst.Add(ib.clock(), int(n))
			poke(ib.applierWake)
			continue
		}
		ctx, cancel := context.WithTimeout(ib.ctx, 2*time.Second)
		_, _ = ib.db.conn.Pool().Exec(ctx, `SELECT pg_notify($1, $2)`, inboxChannel, strconv.FormatInt(n, 10)) // a hint: the applier also looks once a second
		cancel()
		if !ib.notifyPace() {
			return
		}
	}
}

// notifyEvery spaces a listener's NOTIFY paydesk_inbox: the batches
// committed meanwhile go in the next one, with their count. One NOTIFY a
// batch (about 120 a second from a listener under load) was a statement
// and a transaction of the server's each, and woke every listening
// session on the database; the applier rests through a burst anyway, and
// its burst meter counts in windows five times as long (burst.Window).
const notifyEvery = 50 * time.Millisecond

// paceNotify waits notifyEvery; false when the DB is closing.
func (ib *inbox) paceNotify() bool {
	t := time.NewTimer(notifyEvery)
	defer t.Stop()
	select {
	case <-ib.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// StartApplier starts this process's applier (once; on a file, whose
// inbox starts at Open, it only names where its errors go): it waits for
// the database's applier lock, drains the inbox when it gets it, and
// applies what is ingested after, until the DB is closed. logf, if not
// nil, receives its errors.
func (db *DB) StartApplier(logf func(format string, args ...any)) {
	if fb := db.finbox; fb != nil && logf != nil {
		fb.logs.set(logf)
	}
	ib := db.inbox
	if ib == nil {
		return
	}
	if logf != nil {
		ib.logs.set(logf)
	}
	ib.applierOnce.Do(func() {
		ib.wg.Add(1)
		go ib.applierLoop()
	})
}

var errLockLost = errors.New("the applier's connection (and with it the lock) was lost")

func (ib *inbox) applierLoop() {
	defer ib.wg.Done()
	for ib.ctx.Err() == nil {
		err := ib.holdAndApply()
		if err == nil || ib.ctx.Err() != nil {
			continue
		}
		ib.log("inbox applier: %v (trying again in a second)", err)
		select {
		case <-ib.ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// holdAndApply takes the applier lock on a connection of its own (waiting
// while another process holds it), then applies until the DB is closed or
// the connection is lost.
func (ib *inbox) holdAndApply() error {
	conn, err := pgx.Connect(ib.ctx, ib.dsn)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(ib.ctx, `SELECT pg_advisory_lock($1)`, int64(applierLockKey)); err != nil {
		return err
	}
	// LISTEN only now: a session that listens but waits for hours on the
	// lock would hold back PostgreSQL's notification queue for everyone.
	// What was ingested before the LISTEN, the drain below finds.
	if _, err := conn.Exec(ib.ctx, "LISTEN "+inboxChannel); err != nil {
		return err
	}
	ib.holding.Store(true)
	defer ib.holding.Store(false)

	// The connection now only waits for notifications: each wakes the
	// applier, and its end (the session, and the lock, are gone) stops it.
	lctx, lcancel := context.WithCancel(ib.ctx)
	lost := make(chan struct{})
	go func() {
		defer close(lost)
		for {
			nt, err := conn.WaitForNotification(lctx)
			if err != nil {
				return
			}
			// The payload counts the pushes another listener committed
			// (empty from a listener before the burst meter: a wake only).
			if n, err := strconv.Atoi(nt.Payload); err == nil {
				ib.burst.Add(ib.clock(), n)
			}
			poke(ib.applierWake)
		}
	}()
	defer func() { lcancel(); <-lost }()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var after int64 // a drain woken by a push goes on after the last row applied
	for full := true; ; {
		if full {
			after = 0
		}
		var err error
		if after, err = ib.drain(lost, after, full); err != nil {
			return err
		}
		select {
		case <-ib.ctx.Done():
			return nil
		case <-lost:
			return errLockLost
		case <-ib.applierWake:
			full = false
		case <-tick.C:
			full = true
		}
	}
}

// drain applies batches until the inbox has no row waiting.
//
// A row applied leaves its entry in the index of waiting rows until
// VACUUM removes it, and a scan of that index steps over every such entry
// (a visit to the table each) before the first row still waiting: with a
// hundred thousand pushes applied since the last vacuum, each batch's
// query read 64,000 index entries and the applier slowed to a third. So
// each batch asks only for rows after the last one applied, and so does
// the drain a listener's notification wakes; a row that committed late with
// a lower number (ids are handed out at insert, commits may finish in
// another order) is found by the look from the start that the applier
// makes once a second (full). drain returns where the next one goes on.
func (ib *inbox) drain(lost <-chan struct{}, after int64, full bool) (int64, error) {
	for {
		select {
		case <-lost:
			return after, errLockLost
		case <-ib.ctx.Done():
			return after, nil
		default:
		}
		start := time.Now()
		n, last, err := ib.applyBatch(applyBatchSize, after)
		if err != nil {
			return after, err
		}
		after = last
		if n > 0 {
			if d := ib.restAfterBatch(time.Since(start)); d > 0 && !ib.sleep(lost, d) {
				return after, nil // closing or lost: the caller sees which
			}
		}
		if n < applyBatchSize {
			if full && n > 0 {
				continue // what came in meanwhile
			}
			return after, nil
		}
	}
}

// DrainInbox applies every push waiting in the inbox and returns how many
// it applied (0 on a file). It does not need the applier lock: an apply
// transaction marks its rows applied, and two that took the same row
// cannot both commit. Tests, and the benchmark's drain, use it.
func (db *DB) DrainInbox(ctx context.Context) (int, error) {
	ib := db.inbox
	if ib == nil {
		return 0, nil
	}
	total := 0
	for ctx.Err() == nil {
		n, _, err := ib.applyBatch(applyBatchSize, 0)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, ctx.Err()
}

// InboxWaiting counts the pushes in the inbox not applied yet (on a file
// without an inbox, 0).
func (db *DB) InboxWaiting(ctx context.Context) (int, error) {
	if db.finbox != nil {
		return db.finbox.waiting(), nil
	}
	if db.inbox == nil {
		return 0, nil
	}
	var n int
	err := db.conn.Pool().QueryRow(ctx, `SELECT count(*) FROM paydesk_push_inbox WHERE push_id IS NULL`).Scan(&n)
	return n, err
}

// appliedRow is an inbox row the applier applied.
type appliedRow struct {
	id  uint64
	res ApplyResult
}

// ruleError is a push the rules could not apply (not a database failure):
// the applier then records it alone, as not applied, so one bad row does
// not hold up the inbox.
type ruleError struct {
	id  uint64
	err error
}

func (e *ruleError) Error() string { return fmt.Sprintf("inbox row %d: %v", e.id, e.err) }
func (e *ruleError) Unwrap() error { return e.err }

// applyBatch applies up to limit waiting rows numbered above after in one
// transaction and marks them applied in it; it returns how many it applied
// and the highest number among them.
func (ib *inbox) applyBatch(limit int, after int64) (int, int64, error) {
	done, err := ib.applyRows(limit, after, false)
	var re *ruleError
	if errors.As(err, &re) {
		// One push broke the batch: the rows before it one by one, then
		// it alone, recorded as not applied.
		n := 0
		for {
			d, err := ib.applyRows(1, after, false)
			if errors.As(err, &re) {
				ib.log("inbox applier: %v: kept in the push log as not applied", re)
				d, err = ib.applyRows(1, after, true)
			}
			n += len(d)
			if len(d) > 0 {
				after = max(after, int64(d[len(d)-1].id))
			}
			if err != nil || len(d) == 0 || n >= limit {
				return n, after, err
			}
		}
	}
	if len(done) > 0 {
		after = max(after, int64(done[len(done)-1].id))
	}
	return len(done), after, err
}

// applyRows is one apply transaction over up to limit waiting rows. With
// failed, the rows are stored in the push log without running the rules
// (the rules refused them).
func (ib *inbox) applyRows(limit int, after int64, failed bool) ([]appliedRow, error) {
	db := ib.db
	var c Change
	var done []appliedRow
	err := db.inboxUpdate(func(rt RepoTx, it inboxTx) error {
		c, done = Change{keys: db.audit}, done[:0] // a transaction that lost a race runs again
		ids, stored, err := it.InboxWaiting(limit, after)
		if err != nil || len(ids) == 0 {
			return err
		}
		recs := make([]*PushRecord, len(stored))
		keys := make([]string, 0, len(stored))
		var dataKeys []string
		for i, b := range stored {
			if recs[i], err = kvlayout.DecodePush(b); err != nil {
				return &ruleError{id: ids[i], err: fmt.Errorf("stored push: %w", err)}
			}
			keys = append(keys, recs[i].Key)
			if recs[i].Envelope != api.EnvelopeTransaction {
				dataKeys = append(dataKeys, recs[i].Key)
			}
		}
		if err := it.PrefetchForPushes(keys, dataKeys, len(recs)); err != nil {
			return err
		}
		for i, id := range ids {
			res, err := db.applyInboxRow(rt, recs[i], failed, &c)
			if err != nil {
				if terr := it.TxErr(); terr != nil {
					return terr
				}
				return &ruleError{id: id, err: err}
			}
			done = append(done, appliedRow{id: id, res: res})
		}
		pushIDs, results := make([]int64, len(done)), make([][]byte, len(done))
		idArg := make([]int64, len(done))
		for i, d := range done {
			idArg[i], pushIDs[i], results[i] = int64(d.id), int64(d.res.ID), kvlayout.EncodeApplyResult(d.res)
		}
		if err := it.InboxMark(idArg, pushIDs, results); err != nil {
			return err
		}
		c.inbox, c.inboxRuns = true, runsOf(idArg)
		return c.writeCounts(rt)
	})
	if err != nil {
		return nil, err
	}
	db.notify(c)
	ib.resolve(done)
	return done, nil
}

// inboxTx is what the apply transaction needs of an engine's transaction
// beyond the contract (kv.InboxTx): the inbox rows it reads and marks in
// the same transaction as the rules' writes.
type inboxTx = kv.InboxTx

// inboxUpdate runs fn in a write transaction of the store's engine on
// PostgreSQL, the rules' view of it and the inbox's.
func (db *DB) inboxUpdate(fn func(rt RepoTx, it inboxTx) error) error {
	if db.rel != nil {
		return db.rel.UpdateTx(context.Background(), func(t *postgres.Tx) error { return fn(t, t) })
	}
	return db.bk.InboxUpdate(fn)
}

// applyInboxRow runs the push rules on one inbox row (ApplyPush's, in the
// caller's transaction). With failed it only logs the push, not applied.
func (db *DB) applyInboxRow(tx RepoTx, rec *PushRecord, failed bool, c *Change) (ApplyResult, error) {
	var res ApplyResult
	if !failed {
		p, err := api.DecodePush(rec.Body)
		if err != nil {
			return res, fmt.Errorf("push body: %w", err)
		}
		pp := &preparedPush{rec: *rec, enc: db.repo.EncodePush(rec)}
		err = db.applyPush(tx, pp, p, &res, c)
		return res, err
	}
	rec.Applied, rec.Ignored = false, "not applied: the store's rules refused it (see the listener's log)"
	id, err := tx.AppendPush(rec, PushEncoding{})
	if err != nil {
		return res, err
	}
	// Refused by the rules, it is still a push the gateway sent: the shop
	// gets it as it would have without paydesk.
	if err := db.enqueueDeliveries(tx, rec, id); err != nil {
		return res, err
	}
	c.Pushes++
	res.ID, res.Ignored = id, rec.Ignored
	return res, nil
}

// await registers fn for the outcome of inbox row id.
func (ib *inbox) await(id uint64, fn func(ApplyResult)) {
	ib.wmu.Lock()
	if len(ib.waiters) >= maxWaiters {
		ib.wmu.Unlock()
		fn(ApplyResult{})
		return
	}
	ib.waiters[id] = append(ib.waiters[id], fn)
	ib.wmu.Unlock()
	ib.reporterOnce.Do(func() {
		ib.wg.Add(1)
		go ib.reporter()
	})
}

// resolve hands the outcomes this process applied to their waiters.
func (ib *inbox) resolve(done []appliedRow) {
	var calls []func()
	ib.wmu.Lock()
	if len(ib.waiters) > 0 {
		for _, d := range done {
			for _, fn := range ib.waiters[d.id] {
				fn, res := fn, d.res
				calls = append(calls, func() { fn(res) })
			}
			delete(ib.waiters, d.id)
		}
	}
	ib.wmu.Unlock()
	for _, call := range calls {
		call()
	}
}
