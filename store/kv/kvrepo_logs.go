package kv

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// The bucket-backed engine's logs: pushes, the rejected log, the gateway
// log, the journal, the audit log, orders, batches and the counters.

// The per-key push index (key 0x00 id → content hash) lives in the
// transactions bucket, where its entries sort right behind the transaction
// record they are about: a push for a random key dirties one page there
// instead of one in the record's tree and another in an index tree of its
// own, and a commit's fdatasync has that many fewer pages to wait for.
// Caches written before keep their entries in bPushKey, which is still read.
var pushIndexBuckets = [][]byte{bTransaction, bPushKey}

// eachPushOf calls fn with the ID and content hash of every push indexed
// under key, in both index buckets, until fn returns false.
func eachPushOf(tx Tx, key string, fn func(id uint64, hash []byte) bool) {
	prefix := pairKey(key, "")
	for _, name := range pushIndexBuckets {
		c := tx.Bucket(name).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) == len(prefix)+8 && !fn(kvlayout.Be64(k[len(prefix):]), v) {
				return
			}
		}
	}
}

// appendOnly returns a log bucket keyed by rising sequence numbers, set to
// fill its pages: bbolt's default half-full split suits random keys and
// would write twice the pages for a log.
func appendOnly(tx Tx, name []byte) Bucket {
	b := tx.Bucket(name)
	FillPages(b)
	return b
}

// pushHashPrefix is how much of a push's content hash its index entry
// holds (layout 10; earlier entries hold all 32 bytes): enough to pass
// over the other pushes of the key, and a match is held against the whole
// hash in the push's record, so dedup stays exact at 24 bytes less a push.
const pushHashPrefix = 8

func (k *kvTx) PushDuplicate(key string, hash [32]byte) (uint64, error) {
	var dup uint64
	var err error
	eachPushOf(k.tx, key, func(id uint64, h []byte) bool {
		switch {
		case len(h) == len(hash) && bytes.Equal(h, hash[:]):
			dup = id
		case len(h) == pushHashPrefix && bytes.Equal(h, hash[:pushHashPrefix]):
			var p *PushRecord
			v := k.tx.Bucket(bPush).Get(u64(id))
			if v == nil {
				err = fmt.Errorf("push %d: indexed under key %q, but its record is missing: %w", id, key, kvlayout.ErrCorrupt)
				return false
			}
			if p, err = kvlayout.DecodePushFields(v); err != nil {
				err = fmt.Errorf("push %d: %w", id, err)
				return false
			}
			if p.Hash == hash {
				dup = id
			}
		}
		return dup == 0
	})
	return dup, err
}

func (k *kvTx) AppendPush(rec *PushRecord, enc PushEncoding) (uint64, error) {
	pb := appendOnly(k.tx, bPush)
	id, err := pb.NextSequence()
	if err != nil {
		return 0, err
	}
	rec.ID = id
	var v []byte
	if b := enc.Bytes(); b != nil {
		v = kvlayout.EncodePushHead(rec, b)
	} else {
		v = kvlayout.EncodePush(rec)
	}
	if err := pb.Put(u64(id), v); err != nil {
		return 0, err
	}
	ik, tb := append(pairKey(rec.Key, ""), u64(id)...), k.tx.Bucket(bTransaction)
	k.own.fillAtEnd(tb, ik)
	if err := tb.Put(ik, rec.Hash[:pushHashPrefix]); err != nil {
		return 0, err
	}
	return id, indexPushTime(k.tx, rec, false) // the push log's index (pushlog.go)
}

func (k *kvTx) Push(id uint64) (*PushRecord, error) {
	v := k.tx.Bucket(bPush).Get(u64(id))
	if v == nil {
		return nil, nil
	}
	p, err := kvlayout.DecodePush(v)
	if err != nil {
		return nil, fmt.Errorf("push %d: %w", id, err)
	}
	return p, nil
}

func (k *kvTx) PushesBefore(before uint64, limit int) ([]*PushRecord, error) {
	return newestPushes(k.tx.Bucket(bPush), limit, before)
}

// newestPushes reads up to limit push records of a log bucket with IDs
// below beforeID (0: from the newest), newest first.
func newestPushes(b Bucket, limit int, beforeID uint64) ([]*PushRecord, error) {
	var out []*PushRecord
	c := b.Cursor()
	var k, v []byte
	if beforeID == 0 {
		k, v = c.Last()
	} else {
		c.Seek(u64(beforeID))
		k, v = c.Prev()
	}
	for ; k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
		p, err := kvlayout.DecodePush(v)
		if err != nil {
			return nil, fmt.Errorf("push %d: %w", kvlayout.Be64(k), err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (k *kvTx) PushIDsOf(key string) ([]uint64, error) {
	var ids []uint64
	eachPushOf(k.tx, key, func(id uint64, _ []byte) bool {
		ids = append(ids, id)
		return true
	})
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func rejectedGroupKey(source, class string) []byte {
	return append(append(append([]byte(nil), kRejectedGroup...), source...), append([]byte{0}, class...)...)
}

// kRejectedEntries counts the rejected log's entries in meta: bbolt's
// Bucket.Stats walks every page, too slow to run per rejection.
var kRejectedEntries = []byte("rejectedentries")

// rejectedEntries is the count; a file from before it is counted once,
// before this transaction changes the bucket (Stats reads the pages as
// they were committed).
func rejectedEntries(b Bucket, m Bucket) (int, error) {
	if v := m.Get(kRejectedEntries); v != nil {
		return int(kvlayout.Be64(v)), nil
	}
	n := KeyCount(b)
	return n, m.Put(kRejectedEntries, u64(uint64(n)))
}

func addRejectedEntries(b Bucket, m Bucket, d int) error {
	n, err := rejectedEntries(b, m)
	if err != nil {
		return err
	}
	return m.Put(kRejectedEntries, u64(uint64(max(n+d, 0))))
}

func (k *kvTx) AppendRejected(rec *PushRecord) (uint64, error) {
	b, m := appendOnly(k.tx, bRejected), k.tx.Bucket(bMeta)
	if _, err := rejectedEntries(b, m); err != nil { // counted before the bucket changes
		return 0, err
	}
	n, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	rec.ID = n
	if err := b.Put(u64(n), kvlayout.EncodePush(rec)); err != nil {
		return 0, err
	}
	if err := indexPushTime(k.tx, rec, true); err != nil { // the push log's index (pushlog.go)
		return 0, err
	}
	return n, addRejectedEntries(b, m, 1)
}

func (k *kvTx) Rejected(id uint64) (*PushRecord, error) {
	v := k.tx.Bucket(bRejected).Get(u64(id))
	if v == nil {
		return nil, nil
	}
	p, err := kvlayout.DecodePush(v)
	if err != nil {
		return nil, fmt.Errorf("rejected entry %d: %w", id, err)
	}
	return p, nil
}

func (k *kvTx) OldestRejected() (*PushRecord, error) {
	key, v := k.tx.Bucket(bRejected).Cursor().First()
	if key == nil {
		return nil, nil
	}
	p, err := kvlayout.DecodePush(v)
	if err != nil {
		return nil, fmt.Errorf("rejected entry %d: %w", kvlayout.Be64(key), err)
	}
	p.ID = kvlayout.Be64(key) // the entry's place in the log is its ID
	return p, nil
}

func (k *kvTx) DeleteRejected(id uint64) error {
	b, m := appendOnly(k.tx, bRejected), k.tx.Bucket(bMeta)
	v := b.Get(u64(id))
	if v == nil {
		return nil
	}
	if err := unindexRejected(k.tx, id, v); err != nil { // the push log's index (pushlog.go)
		return err
	}
	if _, err := rejectedEntries(b, m); err != nil { // counted before the bucket changes
		return err
	}
	if err := b.Delete(u64(id)); err != nil {
		return err
	}
	return addRejectedEntries(b, m, -1)
}

// RejectedEntries only reads (it may run in a read transaction): the
// writers keep the count in meta from their first change on.
func (k *kvTx) RejectedEntries() (int, error) {
	if v := k.tx.Bucket(bMeta).Get(kRejectedEntries); v != nil {
		return int(kvlayout.Be64(v)), nil
	}
	return KeyCount(k.tx.Bucket(bRejected)), nil
}

func (k *kvTx) RejectedNewest(limit int) ([]*PushRecord, error) {
	return newestPushes(k.tx.Bucket(bRejected), limit, 0)
}

func (k *kvTx) RejectedGroupEntry(source, class string) (uint64, error) {
	v := k.tx.Bucket(bMeta).Get(rejectedGroupKey(source, class))
	if v == nil {
		return 0, nil
	}
	return kvlayout.Be64(v), nil
}

func (k *kvTx) SetRejectedGroupEntry(source, class string, id uint64) error {
	return k.tx.Bucket(bMeta).Put(rejectedGroupKey(source, class), u64(id))
}

func (k *kvTx) DeleteRejectedGroup(source, class string) error {
	return k.tx.Bucket(bMeta).Delete(rejectedGroupKey(source, class))
}

// trim deletes the oldest entries of a sequence-numbered bucket beyond max.
// The newest ID is the bucket's sequence, so the oldest kept is seq−max+1.
func trim(b Bucket, max int) error {
	seq := b.Sequence()
	if max <= 0 || seq <= uint64(max) {
		return nil
	}
	limit := seq - uint64(max) // delete IDs ≤ limit
	c := b.Cursor()
	for k, _ := c.First(); k != nil && kvlayout.Be64(k) <= limit; k, _ = c.First() {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func (k *kvTx) AppendExchange(x *Exchange, keep int) (uint64, error) {
	b := appendOnly(k.tx, bExchange)
	n, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	x.ID = n
	v, err := json.Marshal(x)
	if err != nil {
		return 0, err
	}
	if err := b.Put(u64(n), v); err != nil {
		return 0, err
	}
	return n, trim(b, keep)
}

func (k *kvTx) Exchanges(limit int) ([]Exchange, error) {
	var out []Exchange
	c := k.tx.Bucket(bExchange).Cursor()
	for key, v := c.Last(); key != nil && (limit <= 0 || len(out) < limit); key, v = c.Prev() {
		var e Exchange
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, fmt.Errorf("gateway log entry %d: %w", kvlayout.Be64(key), err)
		}
		out = append(out, e)
	}
	return out, nil
}

func (k *kvTx) NextOpID() (uint64, error) { return k.tx.Bucket(bOp).NextSequence() }

func (k *kvTx) Op(id uint64) (*PendingOp, error) {
	v := k.tx.Bucket(bOp).Get(u64(id))
	if v == nil {
		return nil, nil
	}
	var op PendingOp
	if err := json.Unmarshal(v, &op); err != nil {
		return nil, fmt.Errorf("operation %d: %w", id, err)
	}
	return &op, nil
}

func (k *kvTx) PutOp(op *PendingOp) error {
	v, err := json.Marshal(op)
	if err != nil {
		return fmt.Errorf("operation %d: %w", op.ID, err)
	}
	if err := k.tx.Bucket(bOp).Put(u64(op.ID), v); err != nil {
		return err
	}
	// The open index's value (result key 0x00 invoice) spares a push
	// decoding the operations it cannot be about (matchOp).
	if op.State.IsOpen() {
		return k.tx.Bucket(bOpOpen).Put(u64(op.ID), pairKey(op.ResultKey, op.Invoice))
	}
	return k.tx.Bucket(bOpOpen).Delete(u64(op.ID))
}

func (k *kvTx) OpenOps() ([]OpenOp, error) {
	var out []OpenOp
	c := k.tx.Bucket(bOpOpen).Cursor()
	for key, v := c.First(); key != nil; key, v = c.Next() {
		rk, inv, _ := bytes.Cut(v, []byte{0})
		out = append(out, OpenOp{ID: kvlayout.Be64(key), ResultKey: string(rk), Invoice: string(inv)})
	}
	return out, nil
}

func (k *kvTx) Ops() ([]*PendingOp, error) {
	var out []*PendingOp
	c := k.tx.Bucket(bOp).Cursor()
	for key, v := c.Last(); key != nil; key, v = c.Prev() {
		if err := k.stop(len(out)); err != nil {
			return nil, err
		}
		var op PendingOp
		if err := json.Unmarshal(v, &op); err != nil {
			return nil, fmt.Errorf("operation %d: %w", kvlayout.Be64(key), err)
		}
		out = append(out, &op)
	}
	return out, nil
}

func (k *kvTx) AppendAudit(e AuditEntry, keys AuditSealer) (AuditEntry, error) {
	b := appendOnly(k.tx, bAudit)
	n, err := b.NextSequence()
	if err != nil {
		return e, err
	}
	e.ID = n
	e.Prev = ""
	if lastK, last := b.Cursor().Last(); lastK != nil {
		e.Prev = domain.ChainHash(last)
	}
	e, v, err := domain.SealAudit(keys, e)
	if err != nil {
		return e, err
	}
	return e, b.Put(u64(n), v)
}

func (k *kvTx) AuditEntry(id uint64) (*AuditEntry, error) {
	v := k.tx.Bucket(bAudit).Get(u64(id))
	if v == nil {
		return nil, nil
	}
	var e AuditEntry
	if err := json.Unmarshal(v, &e); err != nil {
		return nil, fmt.Errorf("audit entry %d: %w", id, err)
	}
	return &e, nil
}

func (k *kvTx) LastAudit() (*AuditEntry, error) {
	key, v := k.tx.Bucket(bAudit).Cursor().Last()
	if key == nil {
		return nil, nil
	}
	var e AuditEntry
	if err := json.Unmarshal(v, &e); err != nil {
		return nil, fmt.Errorf("audit entry %d: %w", kvlayout.Be64(key), err)
	}
	e.ID = kvlayout.Be64(key)
	return &e, nil
}

func (k *kvTx) WalkAudit(newestFirst bool, fn func(id uint64, e *AuditEntry, stored []byte, err error) bool) error {
	c := k.tx.Bucket(bAudit).Cursor()
	first, next := c.First, c.Next
	if newestFirst {
		first, next = c.Last, c.Prev
	}
	n := 0
	for key, v := first(); key != nil; key, v = next() {
		if err := k.stop(n); err != nil {
			return err
		}
		n++
		var e AuditEntry
		err := json.Unmarshal(v, &e)
		if err != nil {
			e = AuditEntry{}
			err = fmt.Errorf("audit entry %d: %w", kvlayout.Be64(key), err)
		}
		if !fn(kvlayout.Be64(key), &e, v, err) {
			return nil
		}
	}
	return nil
}

func (k *kvTx) AuditSequence() (uint64, error) { return k.tx.Bucket(bAudit).Sequence(), nil }

func (k *kvTx) Order(invoice string) (*Order, error) {
	v := k.tx.Bucket(bOrder).Get([]byte(invoice))
	if v == nil {
		return nil, nil
	}
	var o Order
	if err := json.Unmarshal(v, &o); err != nil {
		return nil, fmt.Errorf("order %s: %w", invoice, err)
	}
	return &o, nil
}

func (k *kvTx) PutOrder(o *Order) error {
	v, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("order %s: %w", o.Invoice, err)
	}
	return k.tx.Bucket(bOrder).Put([]byte(o.Invoice), v)
}

func (k *kvTx) Orders() ([]*Order, error) {
	var out []*Order
	err := k.tx.Bucket(bOrder).ForEach(func(key, v []byte) error {
		if err := k.stop(len(out)); err != nil {
			return err
		}
		var o Order
		if err := json.Unmarshal(v, &o); err != nil {
			return fmt.Errorf("order %s: %w", key, err)
		}
		out = append(out, &o)
		return nil
	})
	return out, err
}

func (k *kvTx) PutOrderConflict(o *Order) error {
	v, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("order %s: %w", o.Invoice, err)
	}
	return k.tx.Bucket(bOrderConflict).Put(invoiceKey(o.Invoice, o.Hash), v)
}

func (k *kvTx) OrderConflicts(invoice string) ([]*Order, error) {
	var out []*Order
	var prefix []byte
	if invoice != "" {
		prefix = append([]byte(invoice), 0)
	}
	c := k.tx.Bucket(bOrderConflict).Cursor()
	for key, v := c.Seek(prefix); key != nil && bytes.HasPrefix(key, prefix); key, v = c.Next() {
		var o Order
		if err := json.Unmarshal(v, &o); err != nil {
			return nil, fmt.Errorf("order conflict %q: %w", key, err)
		}
		out = append(out, &o)
	}
	return out, nil
}

func batchItemKey(id string, idx int) []byte {
	k := make([]byte, 0, len(id)+5)
	k = append(k, id...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(idx))
}

func batchHashKey(kind, hash string) []byte { return []byte(kind + "\x00" + hash) }

func (k *kvTx) NextBatchNumber() (uint64, error) { return k.tx.Bucket(bBatch).NextSequence() }

func (k *kvTx) PutBatch(b *Batch) error {
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("batch %s: %w", b.ID, err)
	}
	if err := k.tx.Bucket(bBatch).Put([]byte(b.ID), v); err != nil {
		return err
	}
	if b.Hash != "" {
		return k.tx.Bucket(bBatchHash).Put(batchHashKey(b.Kind, b.Hash), []byte(b.ID))
	}
	return nil
}

func (k *kvTx) Batch(id string) (*Batch, error) {
	v := k.tx.Bucket(bBatch).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var b Batch
	if err := json.Unmarshal(v, &b); err != nil {
		return nil, fmt.Errorf("batch %s: %w", id, err)
	}
	return &b, nil
}

func (k *kvTx) BatchByHash(kind, hash string) (string, error) {
	return string(k.tx.Bucket(bBatchHash).Get(batchHashKey(kind, hash))), nil
}

func (k *kvTx) Batches() ([]Batch, error) {
	var out []Batch
	err := k.tx.Bucket(bBatch).ForEach(func(key, v []byte) error {
		var b Batch
		if err := json.Unmarshal(v, &b); err != nil {
			return fmt.Errorf("batch %s: %w", key, err)
		}
		out = append(out, b)
		return nil
	})
	return out, err
}

func (k *kvTx) PutBatchItem(id string, it BatchItem) error {
	v, err := json.Marshal(it)
	if err != nil {
		return fmt.Errorf("batch %s item %d: %w", id, it.Index, err)
	}
	return k.tx.Bucket(bBatchItem).Put(batchItemKey(id, it.Index), v)
}

func (k *kvTx) BatchItems(id string) ([]BatchItem, error) {
	var items []BatchItem
	prefix := append([]byte(id), 0)
	c := k.tx.Bucket(bBatchItem).Cursor()
	for key, v := c.Seek(prefix); key != nil && len(key) == len(prefix)+4 && bytes.HasPrefix(key, prefix); key, v = c.Next() {
		var it BatchItem
		if err := json.Unmarshal(v, &it); err != nil {
			return nil, fmt.Errorf("batch %s item: %w", id, err)
		}
		items = append(items, it)
	}
	return items, nil
}

// AddTally adds to the counters kept in meta, each under its own key with
// the shard appended: on a shared database every process keeps counters of
// its own (several listeners would otherwise all update one row and wait
// on each other); Tally sums them (metaCount).
func (k *kvTx) AddTally(d Tally) error {
	m := k.tx.Bucket(bMeta)
	for _, c := range []struct {
		key []byte
		n   int64
	}{{kPushCount, d.Pushes}, {kRejectedCount, d.Rejected}, {kReservationCount, d.Reservations}, {kTransactionCount, d.Transactions}} {
		if c.n == 0 {
			continue
		}
		key := append(append([]byte(nil), c.key...), k.shard...)
		// A negative change wraps around: the sum comes out right.
		if err := m.Put(key, u64(kvlayout.Be64(m.Get(key))+uint64(c.n))); err != nil {
			return err
		}
	}
	return nil
}

func (k *kvTx) Tally() (Tally, error) {
	m := k.tx.Bucket(bMeta)
	return Tally{Pushes: int64(metaCount(m, kPushCount)), Rejected: int64(metaCount(m, kRejectedCount)),
		Reservations: int64(metaCount(m, kReservationCount)), Transactions: int64(metaCount(m, kTransactionCount))}, nil
}

// metaCount is a counter of meta: its own key plus every process's shard
// of it (key/…).
func metaCount(m Bucket, key []byte) uint64 {
	n := kvlayout.Be64(m.Get(key))
	prefix := append(append([]byte(nil), key...), '/')
	c := m.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		n += kvlayout.Be64(v)
	}
	return n
}
