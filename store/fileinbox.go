package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"paydesk/api"
	"paydesk/store/kv"
	"paydesk/store/kvlayout"
)

// The push inbox on a file (issue 25). On a cache file the listener does
// not wait for the rules' commit either: a bbolt commit writes every page
// the rules dirtied (the push log, the transaction and its six list
// indexes, counters), one pwrite each, then two fsyncs, and the pushes
// that arrive meanwhile wait for the next one. Instead:
//
//   - IngestPush appends the push to the inbox beside the cache, a frame
//     of length, checksum and sequence number, and returns once that
//     append is fdatasync'd: "stored" means durable in the inbox. Pushes
//     go in group commits, one write and one fdatasync per batch.
//   - The inbox is two files, CACHE.inbox.0 and CACHE.inbox.1, appended
//     to in turn: once the current one has passed inboxSegment, the
//     writer empties the other, whose pushes are all applied by then
//     (the backlog is bounded by less), and goes on there. The inbox
//     takes at most two segments of disk, and emptying one never waits
//     for the applier to catch up with the newest push.
//   - The applier runs the store's rules (ApplyPush's) on the appended
//     pushes, oldest first, up to fileApplyBatch per transaction, and sets
//     the inbox's applied mark (the last sequence number applied) in that
//     same transaction: a push is in the cache and marked applied in one
//     commit or neither.
//   - Open applies what the inbox holds past the mark before it returns,
//     whoever opens the file: a kill -9 between the append and the apply
//     loses nothing, and nothing is applied twice. A frame cut short by
//     the kill was never answered (its fdatasync had not returned) and is
//     dropped with everything after it.
//
// A push sent again (the gateway's retry, the sandbox's resend) is
// appended again and found a duplicate by the rules, which record it as a
// receipt of the first: stored once, as through ApplyPush.

const (
	inboxFileSuffix = ".inbox"
	// inboxFrameHead is a frame's head: payload length and CRC-32C
	// (Castagnoli) of sequence number and payload, then the sequence
	// number, little-endian.
	inboxFrameHead = 16
	// maxFileIngestBatch bounds the pushes of one append.
	maxFileIngestBatch = 1024
	// fileApplyBatch is how many pushes one apply transaction takes. A
	// larger one costs more a push: bbolt inserts into in-memory nodes
	// that grow with the transaction.
	fileApplyBatch = 512
	// maxInboxBacklog bounds the bytes of the pushes appended but not
	// applied: past it an append waits for the applier, so a burst cannot
	// grow the backlog (and the memory it holds) without end. About 2,900
	// pushes of the gateway's size.
	maxInboxBacklog = 4 << 20
	// inboxSegment is the size past which the writer turns to the other
	// inbox file. At least maxInboxBacklog: when the current file is
	// that full, every push in the other one is applied.
	inboxSegment = maxInboxBacklog
	// maxInboxFrame bounds a frame's payload when the file is read back:
	// a length past it is a torn or foreign frame.
	maxInboxFrame = 64 << 20
)

var inboxCRC = crc32.MakeTable(crc32.Castagnoli)

// inboxFrame is one push in the inbox file: its sequence number and its
// record in the push log's binary form (kvlayout.EncodePush).
type inboxFrame struct {
	seq     uint64
	payload []byte
}

// appendInboxFrame appends a frame of seq and payload to b.
func appendInboxFrame(b []byte, seq uint64, payload []byte) []byte {
	var head [inboxFrameHead]byte
	binary.LittleEndian.PutUint32(head[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(head[8:], seq)
	crc := crc32.Update(crc32.Checksum(head[8:16], inboxCRC), inboxCRC, payload)
	binary.LittleEndian.PutUint32(head[4:], crc)
	return append(append(b, head[:]...), payload...)
}

// scanInbox reads the frames of an inbox file's bytes and returns them
// (their payloads point into b) and the length of the frames read. It
// stops at the first frame that is short, fails its checksum or does not
// number past the one before: the tail of an append a crash cut short.
func scanInbox(b []byte) (frames []inboxFrame, good int) {
	var last uint64
	for off := 0; len(b)-off >= inboxFrameHead; {
		head := b[off : off+inboxFrameHead]
		n := binary.LittleEndian.Uint32(head[0:])
		seq := binary.LittleEndian.Uint64(head[8:])
		if n == 0 || n > maxInboxFrame || uint64(len(b)-off-inboxFrameHead) < uint64(n) || seq <= last {
			break
		}
		payload := b[off+inboxFrameHead : off+inboxFrameHead+int(n)]
		if crc32.Update(crc32.Checksum(head[8:16], inboxCRC), inboxCRC, payload) != binary.LittleEndian.Uint32(head[4:]) {
			break
		}
		frames = append(frames, inboxFrame{seq: seq, payload: payload})
		last = seq
		off += inboxFrameHead + int(n)
		good = off
	}
	return frames, good
}

// fileJob is one push through the file inbox.
type fileJob struct {
	seq  uint64
	size int // its frame's bytes
	pp   *preparedPush
	// p is the decoded push; nil when its body does not decode (a frame
	// read back at open), which the applier then logs as not applied.
	p         *api.Push
	done      chan error
	onApplied func(ApplyResult)
}

// fileInbox is a cache file's push inbox: the append writer and the
// applier.
type fileInbox struct {
	db     *DB
	nosync bool

	queue   *jobQueue[*fileJob]
	writeWG sync.WaitGroup

	// The writer's own: the two files, the one appended to, the next
	// sequence number and the batch's bytes.
	seg  [2]inboxSegmentFile
	cur  int
	next uint64
	buf  []byte
	// segmentAt and backlogMax are inboxSegment and maxInboxBacklog
	// (tests make them small).
	segmentAt, backlogMax int64

	mu           sync.Mutex
	backlog      []*fileJob // appended, not applied yet; oldest first
	backlogBytes int64      // their frames' bytes
	applied      uint64     // the last sequence number applied
	// failed is the failure that stopped the inbox for good (a damaged
	// cache, an append that could not be undone); applyErr the store's
	// failure the applier waits out before it tries again. Either way the
	// inbox takes no pushes meanwhile: the sender is told to send again.
	failed   error
	applyErr error
	wake     chan struct{} // cap 1: the applier has work
	progress chan struct{} // cap 1: the applier applied a batch
	stop     chan struct{} // closed: the applier finishes the backlog and ends
	applyWG  sync.WaitGroup

	logs logSink

	// applyTx runs an apply transaction (kv.DB.InboxAppliedUpdate);
	// pause waits before the applier tries again after the store failed
	// (attempt counts from 0), false when the inbox is closing. Tests
	// replace both.
	applyTx func(fn func(RepoTx) (uint64, error)) error
	pause   func(attempt int, stop <-chan struct{}) bool
}

// maxApplyPause bounds the applier's wait between attempts.
const maxApplyPause = 30 * time.Second

// pauseFor waits a second, doubling with each attempt up to
// maxApplyPause, or until stop is closed.
func pauseFor(attempt int, stop <-chan struct{}) bool {
	t := time.NewTimer(min(time.Second<<min(attempt, 5), maxApplyPause))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	}
}

func (ib *fileInbox) log(format string, args ...any) { ib.logs.log(format, args...) }

// inboxSegmentFile is one of the inbox's two files.
type inboxSegmentFile struct {
	f    *os.File
	size int64
	last uint64 // the last sequence number appended to it
}

// inboxPaths are the inbox files of the cache file at path.
func inboxPaths(path string) [2]string {
	return [2]string{path + inboxFileSuffix + ".0", path + inboxFileSuffix + ".1"}
}

// replayFileInbox applies what the inbox files of db hold past the
// applied mark, empties them and returns the last sequence number used
// (the next push's is one more). An inbox file that is not there is an
// empty one.
func replayFileInbox(db *DB, logf func(string, ...any)) (uint64, error) {
	applied, err := db.bk.InboxApplied()
	if err != nil {
		return 0, fmt.Errorf("push inbox: %w", err)
	}
	var frames []inboxFrame
	var used []string
	for _, path := range inboxPaths(db.path) {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("push inbox: %w", err)
		}
		fr, good := scanInbox(b)
		if good < len(b) {
			logf("push inbox %s: %d bytes at its end are an append cut short (never answered): dropped", path, len(b)-good)
		}
		frames = append(frames, fr...)
		if len(b) > 0 {
			used = append(used, path)
		}
	}
	// The two files' pushes in the order they were appended.
	slices.SortFunc(frames, func(a, b inboxFrame) int { return cmp.Compare(a.seq, b.seq) })
	last := applied
	ib := &fileInbox{db: db, logs: logSink{f: logf}, applyTx: db.bk.InboxAppliedUpdate}
	var jobs []*fileJob
	for _, fr := range frames {
		last = max(last, fr.seq)
		if fr.seq <= applied {
			continue
		}
		j, err := jobFromFrame(db, fr)
		if err != nil {
			logf("push inbox: entry %d: %v: skipped", fr.seq, err)
			continue
		}
		jobs = append(jobs, j)
	}
	ib.backlog = jobs // apply takes them off as they are applied
	for len(ib.backlog) > 0 {
		if err := ib.apply(ib.backlog[:min(len(ib.backlog), fileApplyBatch)]); err != nil {
			return 0, fmt.Errorf("push inbox: apply the pushes it holds: %w", err)
		}
	}
	for _, path := range used {
		if err := os.Truncate(path, 0); err != nil {
			return 0, fmt.Errorf("push inbox: %w", err)
		}
		if err := kv.SyncPath(path); err != nil {
			return 0, fmt.Errorf("push inbox: %w", err)
		}
	}
	return last, nil
}

// jobFromFrame is the job of a frame read back from the inbox file.
func jobFromFrame(db *DB, fr inboxFrame) (*fileJob, error) {
	rec, err := kvlayout.DecodePush(fr.payload)
	if err != nil {
		return nil, fmt.Errorf("stored push: %w", err)
	}
	j := &fileJob{seq: fr.seq, pp: &preparedPush{rec: *rec, enc: db.repo.EncodePush(rec)}}
	if p, err := api.DecodePush(rec.Body); err == nil {
		j.p = p
	}
	return j, nil
}

// openFileInbox opens db's inbox files for appending (after
// replayFileInbox emptied them) and starts the writer and the applier.
func openFileInbox(db *DB, last uint64, nosync bool, logf func(string, ...any)) (*fileInbox, error) {
	ib := &fileInbox{db: db, nosync: nosync, queue: newJobQueue[*fileJob](4 * maxFileIngestBatch),
		next: last + 1, segmentAt: inboxSegment, backlogMax: maxInboxBacklog, applied: last,
		wake: make(chan struct{}, 1), progress: make(chan struct{}, 1), stop: make(chan struct{}), logs: logSink{f: logf},
		applyTx: db.bk.InboxAppliedUpdate, pause: pauseFor}
	paths := inboxPaths(db.path)
	for i, path := range paths {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			ib.closeFiles()
			return nil, fmt.Errorf("push inbox: %w", err)
		}
		ib.seg[i].f = f
	}
	// The files' names must outlive a crash as surely as what is
	// appended to them.
	if !nosync {
		if err := kv.SyncPath(filepath.Dir(paths[0])); err != nil {
			ib.closeFiles()
			return nil, fmt.Errorf("push inbox: sync its folder: %w", err)
		}
	}
	ib.writeWG.Add(1)
	go ib.writeLoop()
	ib.applyWG.Add(1)
	go ib.applyLoop()
	return ib, nil
}

func (ib *fileInbox) closeFiles() error {
	var first error
	for _, sg := range ib.seg {
		if sg.f != nil {
			if err := sg.f.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// ingest appends pp to the inbox and returns once the append is durable.
// onApplied, if not nil, is called once, on the applier's goroutine, with
// what applying the push did.
func (ib *fileInbox) ingest(ctx context.Context, pp *preparedPush, p *api.Push, onApplied func(ApplyResult)) (Ingested, error) {
	if err := ib.db.bk.File().Damaged(); err != nil {
		return Ingested{}, err
	}
	j := &fileJob{pp: pp, p: p, done: make(chan error, 1), onApplied: onApplied}
	if err := ib.queue.send(ctx, j); err != nil {
		return Ingested{}, err
	}
	select {
	case err := <-j.done:
		if err != nil {
			return Ingested{}, fmt.Errorf("ingest push %s: %w", p.Key(), err)
		}
		return Ingested{Inbox: j.seq}, nil
	case <-ctx.Done():
		return Ingested{}, ctx.Err()
	}
}

// writeLoop is the append group commit: it takes every push that queued
// up while the previous append was being fdatasync'd and appends them
// together.
func (ib *fileInbox) writeLoop() {
	defer ib.writeWG.Done()
	jobs := make([]*fileJob, 0, maxFileIngestBatch)
	for j := range ib.queue.ch {
		jobs = gather(append(jobs[:0], j), ib.queue.ch, maxFileIngestBatch)
		err := ib.append(jobs)
		for _, j := range jobs {
			j.done <- err
		}
	}
}

// append writes jobs to the inbox, durably, and hands them to the
// applier.
func (ib *fileInbox) append(jobs []*fileJob) error {
	ib.buf = ib.buf[:0]
	for _, j := range jobs {
		j.seq = ib.next
		ib.next++
		n := len(ib.buf)
		ib.buf = appendInboxFrame(ib.buf, j.seq, j.pp.stored())
		j.size = len(ib.buf) - n
	}
	if err := ib.room(int64(len(ib.buf))); err != nil {
		return err
	}
	sg := &ib.seg[ib.cur]
	_, err := sg.f.Write(ib.buf)
	if err == nil && !ib.nosync {
		err = fdatasync(sg.f)
	}
	if err != nil {
		// What was written may be on disk in part: cut it off, so that
		// the next append does not follow a torn frame (which would hide
		// it from the read at open). Those pushes are answered with the
		// error; the gateway sends them again.
		if terr := sg.f.Truncate(sg.size); terr != nil {
			ib.fail(fmt.Errorf("push inbox: append failed (%v) and could not be undone: %w", err, terr))
		}
		return fmt.Errorf("push inbox: %w", err)
	}
	sg.size += int64(len(ib.buf))
	sg.last = jobs[len(jobs)-1].seq
	ib.mu.Lock()
	ib.backlog = append(ib.backlog, jobs...)
	ib.backlogBytes += int64(len(ib.buf))
	ib.mu.Unlock()
	poke(ib.wake)
	return nil
}

// room waits until the applier's backlog leaves room for n more bytes
// (an empty backlog takes any batch) and, when the current file has
// passed the segment size, turns to the other one: it waits until the
// other's pushes are applied (with the backlog bounded below the segment
// size they are by then) and empties it.
func (ib *fileInbox) room(n int64) error {
	turn := ib.seg[ib.cur].size >= ib.segmentAt
	other := &ib.seg[1-ib.cur]
	for {
		ib.mu.Lock()
		failed, backlog, applied := ib.failed, ib.backlogBytes, ib.applied
		if failed == nil {
			failed = ib.applyErr
		}
		ib.mu.Unlock()
		if failed != nil {
			return failed
		}
		if turn && applied >= other.last {
			if err := other.f.Truncate(0); err != nil {
				return fmt.Errorf("push inbox: empty a file: %w", err)
			}
			if !ib.nosync {
				if err := other.f.Sync(); err != nil {
					return fmt.Errorf("push inbox: empty a file: %w", err)
				}
			}
			other.size = 0
			ib.cur, turn = 1-ib.cur, false
		}
		if !turn && (backlog == 0 || backlog+n <= ib.backlogMax) {
			return nil
		}
		<-ib.progress
	}
}

// waiting is how many pushes are appended and not applied yet.
func (ib *fileInbox) waiting() int {
	ib.mu.Lock()
	defer ib.mu.Unlock()
	return len(ib.backlog)
}

// fail stops the inbox taking pushes.
func (ib *fileInbox) fail(err error) {
	ib.mu.Lock()
	if ib.failed == nil {
		ib.failed = err
	}
	ib.mu.Unlock()
	poke(ib.progress)
}

// applyLoop applies the backlog, a transaction of up to fileApplyBatch
// pushes at a time, until stop is closed and the backlog is empty. When
// the store fails (a full disk, say) it waits and tries again, the pushes
// waiting in the inbox meanwhile; a damaged cache stops it for good.
func (ib *fileInbox) applyLoop() {
	defer ib.applyWG.Done()
	attempt := 0
	for {
		stopping := false
		select {
		case <-ib.wake:
		case <-ib.stop:
			stopping = true
		}
		for {
			ib.mu.Lock()
			jobs := ib.backlog[:min(len(ib.backlog), fileApplyBatch)]
			ib.mu.Unlock()
			if len(jobs) == 0 {
				break
			}
			err := ib.apply(jobs)
			if err == nil {
				if attempt > 0 {
					ib.log("push inbox: the cache takes pushes again")
					attempt = 0
				}
				continue
			}
			if errors.Is(err, ErrDamaged) {
				ib.log("push inbox: %v; the pushes stay in the inbox and are applied when the cache is opened again", err)
				ib.fail(fmt.Errorf("push inbox: the cache takes no pushes: %w", err))
				return
			}
			ib.log("push inbox: %v; the pushes wait in the inbox, and the listener answers 500 until the cache takes them", err)
			ib.setApplyErr(fmt.Errorf("push inbox: the cache takes no pushes for now: %w", err))
			if !ib.pause(attempt, ib.stop) {
				return // closing: what is left is applied at the next open
			}
			attempt++
		}
		if stopping {
			return
		}
	}
}

// setApplyErr sets (or, nil, clears) the store's failure the applier is
// waiting out; a change wakes an append waiting for room, which then
// refuses its pushes or goes on.
func (ib *fileInbox) setApplyErr(err error) {
	ib.mu.Lock()
	changed := (ib.applyErr == nil) != (err == nil)
	ib.applyErr = err
	ib.mu.Unlock()
	if changed {
		poke(ib.progress)
	}
}

// done takes applied jobs, the first of the backlog, off it. It runs
// before their outcomes are reported, so that whoever hears of an outcome
// finds the push no longer waiting.
func (ib *fileInbox) done(jobs []*fileJob) {
	if len(jobs) == 0 {
		return
	}
	ib.mu.Lock()
	ib.applied = jobs[len(jobs)-1].seq
	for _, j := range jobs {
		ib.backlogBytes -= int64(j.size)
	}
	ib.backlog = ib.backlog[len(jobs):]
	if len(ib.backlog) == 0 {
		ib.backlog = nil // let the array go
	}
	ib.mu.Unlock()
	poke(ib.progress)
}

// apply applies jobs, the first of the backlog, in one transaction,
// takes them off the backlog and reports each outcome. When the rules
// refuse one push the transaction is undone and the pushes are applied
// one at a time, the refused one kept in the push log as not applied. A
// failure of the store (the commit, a damaged page) stops it: the jobs
// not applied stay first in the backlog.
func (ib *fileInbox) apply(jobs []*fileJob) error {
	res, err := ib.applyJobs(jobs, false)
	if err == nil {
		ib.done(jobs)
		report(jobs, res)
		return nil
	}
	var re *ruleError
	if !errors.As(err, &re) {
		return err
	}
	for _, j := range jobs {
		one := []*fileJob{j}
		res, err := ib.applyJobs(one, false)
		if errors.As(err, &re) {
			if res, err = ib.applyJobs(one, true); err == nil && j.p != nil {
				ib.log("push inbox: push %s: %v: kept in the push log as not applied", j.pp.rec.Key, re.err)
			}
		}
		if err != nil {
			return err
		}
		ib.done(one)
		report(one, res)
	}
	return nil
}

// applyJobs is one apply transaction. With failed, the pushes are stored
// in the push log without running the rules.
func (ib *fileInbox) applyJobs(jobs []*fileJob, failed bool) ([]ApplyResult, error) {
	db := ib.db
	var c Change
	res := make([]ApplyResult, len(jobs))
	err := ib.applyTx(func(rt RepoTx) (uint64, error) {
		c = Change{keys: db.audit}
		for i, j := range jobs {
			var err error
			if failed || j.p == nil {
				rec := j.pp.rec // applyInboxRow marks its copy not applied
				res[i], err = db.applyInboxRow(rt, &rec, true, &c)
			} else {
				res[i] = ApplyResult{}
				err = db.applyPush(rt, j.pp, j.p, &res[i], &c)
			}
			if err != nil {
				// Inside the transaction an error is the push's own (the
				// rules', or a value bbolt refuses); the store's failures
				// come from the commit or as damage.
				return 0, &ruleError{id: j.seq, err: err}
			}
		}
		if err := c.writeCounts(rt); err != nil {
			return 0, err
		}
		return jobs[len(jobs)-1].seq, nil
	})
	if err != nil {
		return nil, err
	}
	// The store takes pushes again: before their outcomes are reported,
	// so that whoever hears of them finds the inbox taking pushes.
	ib.setApplyErr(nil)
	db.notify(c)
	return res, nil
}

// report hands each job's outcome to its waiter.
func report(jobs []*fileJob, res []ApplyResult) {
	for i, j := range jobs {
		if j.onApplied != nil {
			j.onApplied(res[i])
		}
	}
}

// close takes no more pushes, appends what is queued, applies the
// backlog and closes the file.
func (ib *fileInbox) close() error {
	ib.queue.close()
	ib.writeWG.Wait()
	close(ib.stop)
	ib.applyWG.Wait()
	return ib.closeFiles()
}
