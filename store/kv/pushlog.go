package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// The push log's index on bbolt: bPushTime holds one key per stored push
// and per rejected-log entry, its position in the log (domain.PushPos:
// received time, stored or rejected, ID; 17 bytes, no value). A push's
// own write adds its key (indexPushTime, called by AppendPush and
// AppendRejected); receipts come in time order, so the key lands at the
// end of the tree and fillAtEnd keeps the pages full. A page walks the
// index from its cursor and reads the records it needs, filtering them
// with domain.KeepPushRow, the reference pager's rule.
//
// A file from before the index gets it at open (pushLogFill, resumable
// like the lists' fills); a file whose newest push has no key (written by
// a binary that did not keep the index) has it built again.
var bPushTime = []byte("pushtime")

// pushLogFillName names the fill of the push log's index.
const pushLogFillName = "push-log"

// indexPushTime adds rec's position to the push log's index. Without the
// bucket (the kv tables of a layout-7 database, read only for their
// conversion) there is no index to keep.
func indexPushTime(tx Tx, rec *domain.PushRecord, rejected bool) error {
	b := tx.Bucket(bPushTime)
	if b == nil {
		return nil
	}
	var buf [domain.PushPosLen]byte
	k := domain.PushPosOf(buf[:0], rec.ReceivedAt.UnixNano(), rejected, rec.ID)
	fillAtEnd(b, k)
	return b.Put(k, []byte{})
}

// unindexRejected removes the position of rejected-log entry id, whose
// record is v (the log is trimmed and its groups are merged).
func unindexRejected(tx Tx, id uint64, v []byte) error {
	b := tx.Bucket(bPushTime)
	if b == nil {
		return nil
	}
	p, err := kvlayout.DecodePushFields(v)
	if err != nil {
		return fmt.Errorf("rejected entry %d: %w", id, err)
	}
	return b.Delete(domain.PushPosOf(nil, p.ReceivedAt.UnixNano(), true, id))
}

// pushRecordAt reads the record a position names, nil when it is gone;
// with fieldsOnly without its headers and body (a filter or a count needs
// only the parsed fields, and the body is packed).
func pushRecordAt(tx Tx, pos []byte, fieldsOnly bool) (*domain.PushRecord, error) {
	_, rejected, id, ok := domain.SplitPushPos(pos)
	if !ok {
		return nil, fmt.Errorf("push log index: key %x is no position", pos)
	}
	b := bPush
	if rejected {
		b = bRejected
	}
	v := tx.Bucket(b).Get(u64(id))
	if v == nil {
		return nil, nil
	}
	decode := kvlayout.DecodePush
	if fieldsOnly {
		decode = kvlayout.DecodePushFields
	}
	p, err := decode(v)
	if err != nil {
		return nil, fmt.Errorf("push log: %s %d: %w", string(b), id, err)
	}
	p.ID, p.Rejected = id, rejected
	return p, nil
}

// ensurePushLog makes the push log's index due when the file lacks it or
// when it misses the newest push or rejection (an older binary wrote
// since), then fills it.
func (db *DB) ensurePushLog() error {
	// due says what the open has to do: nothing (most opens), go on with
	// a fill cut short, or start one.
	due := func(tx Tx) (start bool, err error) {
		b := tx.Bucket(bPushTime)
		if b == nil {
			return true, nil
		}
		if fresh, err := pushLogFresh(tx, b); err != nil || fresh {
			return false, err
		}
		return tx.Bucket(bMeta).Get(fillKey(pushLogFillName)) == nil, nil
	}
	// A read transaction answers most opens: a write one commits even when
	// it changes nothing, and bbolt's commit writes the whole freelist
	// (344 KB on a grown file of a million reservations) with two fsyncs.
	var start bool
	if err := db.eng.View(func(tx Tx) (err error) { start, err = due(tx); return err }); err != nil {
		return err
	}
	if start {
		err := db.guardedUpdate(func(tx Tx) error {
			if start, err := due(tx); err != nil || !start {
				return err
			}
			if _, err := tx.CreateBucketIfNotExists(bPushTime); err != nil {
				return err
			}
			if pushLogEmpty(tx) {
				return nil // a new file: nothing to index (and nothing to tell as an upgrade)
			}
			return startFill(tx, pushLogFillName)
		})
		if err != nil {
			return err
		}
	}
	return db.runFill(pushLogFillName, pushLogFill())
}

// pushLogEmpty reports whether the file holds no push and no rejection.
func pushLogEmpty(tx Tx) bool {
	for _, name := range [][]byte{bPush, bRejected} {
		if b := tx.Bucket(name); b != nil {
			if k, _ := b.Cursor().First(); k != nil {
				return false
			}
		}
	}
	return true
}

// pushLogFresh reports whether the newest stored push and the newest
// rejected entry have their keys in the index.
func pushLogFresh(tx Tx, idx Bucket) (bool, error) {
	for _, name := range [][]byte{bPush, bRejected} {
		k, v := tx.Bucket(name).Cursor().Last()
		if k == nil {
			continue
		}
		p, err := kvlayout.DecodePushFields(v)
		if err != nil {
			return false, fmt.Errorf("%s %d: %w", string(name), kvlayout.Be64(k), err)
		}
		p.ID, p.Rejected = kvlayout.Be64(k), bytes.Equal(name, bRejected)
		if idx.Get(domain.PushPos(nil, p)) == nil {
			return false, nil
		}
	}
	return true, nil
}

// pushLogFill clears the index (an index an older binary left behind
// may hold entries of rejections since trimmed), then builds it from the
// push log and the rejected log.
func pushLogFill() []fillStep {
	clear := fillStep{name: "clear " + string(bPushTime), run: func(tx Tx, _ []byte, n int, _ any) ([]byte, error) {
		b := tx.Bucket(bPushTime)
		var ks [][]byte
		c := b.Cursor()
		for k, _ := c.First(); k != nil && len(ks) < n; k, _ = c.Next() {
			ks = append(ks, bytes.Clone(k))
		}
		for _, k := range ks {
			if err := b.Delete(k); err != nil {
				return nil, err
			}
		}
		if len(ks) < n {
			return nil, nil
		}
		return ks[len(ks)-1], nil // the next chunk starts from the first key again
	}}
	return []fillStep{clear, indexStep("index "+string(bPushTime), bPushTime, func(tx Tx, add func(k, v []byte)) error {
		var pos []byte
		for _, name := range [][]byte{bPush, bRejected} {
			rejected := bytes.Equal(name, bRejected)
			err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				p, err := kvlayout.DecodePushFields(v)
				if err != nil {
					return fmt.Errorf("%s %d: %w", string(name), kvlayout.Be64(k), err)
				}
				pos = domain.PushPosOf(pos[:0], p.ReceivedAt.UnixNano(), rejected, kvlayout.Be64(k))
				add(pos, nil)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})}
}

// pushLister pages the push log of a bbolt file.
type pushLister struct{ db *DB }

// pushLister is nil where the index is not kept (the kv tables on
// PostgreSQL): the store pages in memory there.
func (r *kvRepo) pushLister() domain.PushLister {
	l, ok := r.lists.(kvLister)
	if !ok || l.db == nil || l.db.file == nil {
		return nil
	}
	return pushLister(l)
}

// pushWalk walks the index in the list's order (forward) or against it.
type pushWalk struct {
	c    Cursor
	desc bool // the list is newest first: its order is the keys' reversed
}

func (w pushWalk) step(forward bool) []byte {
	if forward != w.desc {
		k, _ := w.c.Next()
		return k
	}
	k, _ := w.c.Prev()
	return k
}

// end is the first key in the list's order (forward) or its last.
func (w pushWalk) end(forward bool) []byte {
	if forward != w.desc {
		k, _ := w.c.First()
		return k
	}
	k, _ := w.c.Last()
	return k
}

// at is the first key at or after pos in the direction (forward: the
// list's order).
func (w pushWalk) at(pos []byte, forward bool) []byte {
	k, _ := w.c.Seek(pos)
	if forward != w.desc {
		return k
	}
	// Backwards in key order: the greatest key ≤ pos.
	if k == nil {
		k, _ = w.c.Last()
		return k
	}
	if bytes.Equal(k, pos) {
		return k
	}
	k, _ = w.c.Prev()
	return k
}

// after is the first key strictly after pos in the direction.
func (w pushWalk) after(pos []byte, forward bool) []byte {
	k := w.at(pos, forward)
	if k != nil && bytes.Equal(k, pos) {
		k = w.step(forward)
	}
	return k
}

func (l pushLister) PushPage(ctx context.Context, q domain.PushQuery) (domain.PushPage, error) {
	if err := q.Check(); err != nil {
		return domain.PushPage{}, err
	}
	var p domain.PushPage
	defer l.db.listReading()()
	err := l.db.view(func(tx Tx) error {
		idx := tx.Bucket(bPushTime)
		if idx == nil {
			return errors.New("the push log's index is missing")
		}
		var err error
		p, err = pushPage(ctx, tx, idx, &q)
		return err
	})
	if err != nil {
		return domain.PushPage{}, fmt.Errorf("push log: %w", err)
	}
	return p, nil
}

// pushPage reads the window q asks for: its rows in the list's order,
// whether rows come before and after it, and the total when nothing
// narrows the log (the index's keys); a narrowed total is -1
// (PushCount counts it).
func pushPage(ctx context.Context, tx Tx, idx Bucket, q *domain.PushQuery) (domain.PushPage, error) {
	lim := q.PageSize()
	w := pushWalk{c: idx.Cursor(), desc: q.Desc}
	// keep reads the record at k when it passes q.
	keep := func(k []byte) (*domain.PushRecord, error) {
		if q.Narrowed() {
			r, err := pushRecordAt(tx, k, true)
			if err != nil || r == nil || !domain.KeepPushRow(r, q) {
				return nil, err
			}
		}
		return pushRecordAt(tx, k, false) // a row of the page: the whole record
	}
	// collect gathers up to n passing rows from k on in the direction.
	collect := func(k []byte, forward bool, n int) ([]domain.PushPageRow, error) {
		var rows []domain.PushPageRow
		for seen := 0; k != nil && len(rows) < n; k = w.step(forward) {
			if seen++; seen%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			r, err := keep(k)
			if err != nil {
				return nil, err
			}
			if r != nil {
				rows = append(rows, domain.PushPageRow{Push: r, Pos: bytes.Clone(k)})
			}
		}
		return rows, nil
	}
	// any reports whether a passing row lies from k on in the direction.
	any := func(k []byte, forward bool) (bool, error) {
		rows, err := collect(k, forward, 1)
		return len(rows) > 0, err
	}
	var p domain.PushPage
	var err error
	switch {
	case q.Before != nil || q.Last:
		start := w.end(false)
		if q.Before != nil {
			start = w.after(q.Before, false)
		}
		if p.Rows, err = collect(start, false, lim+1); err != nil {
			return p, err
		}
		if p.Less = len(p.Rows) > lim; p.Less {
			p.Rows = p.Rows[:lim]
		}
		slices.Reverse(p.Rows)
		if q.Before != nil {
			if p.More, err = any(w.at(q.Before, true), true); err != nil {
				return p, err
			}
		}
	default:
		start := w.end(true)
		switch {
		case q.After != nil:
			start = w.after(q.After, true)
		case q.From != nil:
			start = w.at(q.From, true)
		}
		if p.Rows, err = collect(start, true, lim+1); err != nil {
			return p, err
		}
		if p.More = len(p.Rows) > lim; p.More {
			p.Rows = p.Rows[:lim]
		}
		switch {
		case q.After != nil:
			p.Less, err = any(w.at(q.After, false), false)
		case q.From != nil:
			p.Less, err = any(w.after(q.From, false), false)
		}
		if err != nil {
			return p, err
		}
	}
	p.Total = -1
	if !q.Narrowed() {
		p.Total = KeyCount(idx)
	}
	return p, nil
}

func (l pushLister) PushCount(ctx context.Context, q domain.PushQuery) (int, error) {
	if err := q.Check(); err != nil {
		return 0, err
	}
	n := 0
	defer l.db.listReading()()
	err := l.db.view(func(tx Tx) error {
		idx := tx.Bucket(bPushTime)
		if idx == nil {
			return errors.New("the push log's index is missing")
		}
		if !q.Narrowed() {
			n = KeyCount(idx)
			return nil
		}
		c := idx.Cursor()
		seen := 0
		for k, _ := c.First(); k != nil && (q.Limit <= 0 || n < q.Limit); k, _ = c.Next() {
			if seen++; seen%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			r, err := pushRecordAt(tx, k, true)
			if err != nil {
				return err
			}
			if r != nil && domain.KeepPushRow(r, &q) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("push count: %w", err)
	}
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	return n, nil
}
