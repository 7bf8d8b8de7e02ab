package kv

import (
	"bytes"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Prefetching for the push inbox's applier. The push rules read the store
// key by key — the push index of the push's key, the transaction it is
// about, the refunds against it, the open operations, a push number — and
// on PostgreSQL each read is a round trip. Before it runs the rules over a
// batch of inbox rows, the applier reads all of that for the whole batch
// in one round trip (a pgx.Batch): the pgTx then answers the rules' Gets
// and cursors from what it read, and goes to the database only for what
// it did not read (a Reserve push's order, orphans, a reservation by
// invoice — the rarer paths).
//
// What a prefetch read is held as a known range of a bucket: every key
// from lo up to last (the first key at or after the range's end, read
// too) or, with toEnd, every key from lo on, is in the bucket's cache —
// including what the transaction writes there afterwards. A cursor that
// starts and moves inside a known range is served from the cache; when it
// leaves the range it reads the database as before.

// knownRange is a stretch of a bucket whose keys this transaction knows.
type knownRange struct {
	lo, last []byte
	toEnd    bool
	keys     [][]byte // sorted; a key whose cache value is nil was deleted
}

func (r *knownRange) holds(k []byte) bool {
	return bytes.Compare(k, r.lo) >= 0 && (r.toEnd || bytes.Compare(k, r.last) <= 0)
}

// rangeOf returns the known range that holds k, nil if none. The ranges
// are disjoint and sorted (mergeRanges).
func (b *pgBucket) rangeOf(k []byte) *knownRange {
	i, _ := slices.BinarySearchFunc(b.ranges, k, func(r *knownRange, k []byte) int { return bytes.Compare(r.lo, k) })
	// ranges[i-1] is the last whose lo is at most k (ranges[i] when equal).
	if i < len(b.ranges) && bytes.Equal(b.ranges[i].lo, k) {
		return b.ranges[i]
	}
	if i > 0 && b.ranges[i-1].holds(k) {
		return b.ranges[i-1]
	}
	return nil
}

// noteKey adds k (written by the transaction) to the range that holds it.
func (b *pgBucket) noteKey(k []byte) {
	if r := b.rangeOf(k); r != nil {
		if i, found := slices.BinarySearchFunc(r.keys, k, bytes.Compare); !found {
			r.keys = slices.Insert(r.keys, i, k)
		}
	}
}

// knownAbsent: k lies in a known range and was not there.
func (b *pgBucket) knownAbsent(k []byte) bool { return b.rangeOf(k) != nil }

// knownPage serves a forward cursor move from a known range: the keys from
// k on (after k when after), in order, while they are known. ok is false
// when no range can answer it.
func (b *pgBucket) knownPage(k []byte, after bool) (page []kvRow, ok bool) {
	r := b.rangeOf(k)
	if r == nil || (after && !r.toEnd && bytes.Equal(k, r.last)) {
		return nil, false
	}
	i, found := slices.BinarySearchFunc(r.keys, k, bytes.Compare)
	if found && after {
		i++
	}
	for _, key := range r.keys[i:] {
		if v := b.cache[string(key)]; v != nil {
			page = append(page, kvRow{k: key, v: v})
		}
	}
	if len(page) > 0 || r.toEnd {
		return page, true
	}
	return nil, false
}

// mergeRanges makes the bucket's known ranges disjoint and sorts them: two
// that overlap are one (every key of both is known, so every key of their
// union is).
func (b *pgBucket) mergeRanges() {
	slices.SortFunc(b.ranges, func(x, y *knownRange) int { return bytes.Compare(x.lo, y.lo) })
	var out []*knownRange
	for _, r := range b.ranges {
		if n := len(out); n > 0 && (out[n-1].toEnd || bytes.Compare(r.lo, out[n-1].last) <= 0) {
			cur := out[n-1]
			switch {
			case cur.toEnd:
			case r.toEnd:
				cur.toEnd, cur.last = true, nil
			case bytes.Compare(r.last, cur.last) > 0:
				cur.last = r.last
			}
			cur.keys = slices.CompactFunc(slices.SortedFunc(slices.Values(append(cur.keys, r.keys...)), bytes.Compare), bytes.Equal)
			continue
		}
		out = append(out, r)
	}
	b.ranges = out
}

// qPrefetchRanges reads, per range, the keys from lo before hi and the
// first key at or after hi.
const qPrefetchRanges = `SELECT r.i, x.k, x.v FROM unnest($2::bytea[], $3::bytea[]) WITH ORDINALITY AS r(lo, hi, i)
CROSS JOIN LATERAL (
	(SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k >= r.lo AND k < r.hi ORDER BY k)
	UNION ALL
	(SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k >= r.hi ORDER BY k LIMIT 1)
) AS x ORDER BY r.i, x.k`

// prefetchWhole is how many keys of a small bucket (the open operations)
// are read whole; a larger one is left to the cursor.
const prefetchWhole = 1000

// PrefetchForPushes reads in one round trip what the push rules will read
// for pushes with these keys (dataKeys: those of data request pushes), and
// reserves n push numbers.
func (t *pgTx) PrefetchForPushes(keys, dataKeys []string, n int) error {
	if t.err != nil {
		return t.err
	}
	if err := t.flush(); err != nil {
		return err
	}
	ranges := func(keys []string, sep byte) (los, his [][]byte) {
		for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
			lo := []byte(k)
			if sep == 0 {
				lo = append(lo, 0)
			}
			los, his = append(los, lo), append(his, append([]byte(k), 1))
		}
		return los, his
	}
	type ranged struct {
		bucket  []byte
		los, hi [][]byte
	}
	los, his := ranges(keys, 1)
	subLos, _ := ranges(keys, 0)
	dataLos, dataHis := ranges(dataKeys, 1)
	plans := []ranged{
		{bTransaction, los, his},         // the transaction record and the push index: key, key 0x00 id
		{bPushKey, subLos, his},          // the push index of older caches
		{bRelated, subLos, his},          // refunds against key
		{bReservation, dataLos, dataHis}, // a Reserve push's reservation
		{bKeyOwner, dataLos, dataHis},    // the reservation a data request belongs to
		{bOrphan, dataLos, dataHis},      // a data request that came before its reservation
		{bOpOpen, nil, nil},              // the open operations, whole
	}
	var batch pgx.Batch
	var order []*pgBucket
	var orderPlans []ranged
	for _, p := range plans {
		if p.los != nil && len(p.los) == 0 {
			continue // no push of that kind in the batch
		}
		b, ok := t.Bucket(p.bucket).(*pgBucket)
		if !ok {
			if t.err != nil {
				return t.err
			}
			continue // no such bucket: the rules find nothing there either
		}
		order, orderPlans = append(order, b), append(orderPlans, p)
		if p.los == nil {
			batch.Queue(`SELECT 1::bigint, k, v FROM paydesk_kv WHERE bucket = $1 ORDER BY k LIMIT $2`, b.name, prefetchWhole+1)
			continue
		}
		batch.Queue(qPrefetchRanges, b.name, p.los, p.hi)
	}
	var seq *pgBucket
	if n > 0 {
		if b, ok := t.Bucket(bPush).(*pgBucket); ok && b.seqName != "" {
			seq = b
			batch.Queue(`SELECT nextval($1) FROM generate_series(1, $2)`, b.seqName, n)
		}
	}
	if t.err != nil {
		return t.err
	}
	br := t.tx.SendBatch(t.ctx, &batch)
	for i, b := range order {
		if err := b.readRanges(br, orderPlans[i].los, orderPlans[i].hi, orderPlans[i].los == nil); err != nil {
			_ = br.Close()
			t.fail(err)
			return err
		}
	}
	if seq != nil {
		rows, err := br.Query()
		if err == nil {
			for rows.Next() {
				var v int64
				if err = rows.Scan(&v); err != nil {
					break
				}
				seq.reserved = append(seq.reserved, uint64(v))
			}
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err != nil {
			_ = br.Close()
			t.fail(err)
			return err
		}
	}
	if err := br.Close(); err != nil {
		t.fail(err)
		return err
	}
	return nil
}

// readRanges takes one prefetch query's rows into the bucket's cache and
// known ranges.
func (b *pgBucket) readRanges(br pgx.BatchResults, los, his [][]byte, whole bool) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	var found [][]kvRow
	if whole {
		found = make([][]kvRow, 1)
	} else {
		found = make([][]kvRow, len(los))
	}
	for rows.Next() {
		var i int64
		var r kvRow
		if err := rows.Scan(&i, &r.k, &r.v); err != nil {
			return err
		}
		if i < 1 || int(i) > len(found) {
			return errors.New("prefetch: a row for no range")
		}
		if r.v == nil {
			r.v = []byte{}
		}
		found[i-1] = append(found[i-1], r)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i, rs := range found {
		for _, r := range rs {
			if _, written := b.cache[string(r.k)]; !written {
				b.cache[string(r.k)] = r.v
			}
		}
		kr := &knownRange{}
		if whole {
			if len(rs) > prefetchWhole {
				continue // too many to hold: the cursor reads them
			}
			kr.lo, kr.toEnd = []byte{}, true
		} else {
			kr.lo = los[i]
			if n := len(rs); n > 0 && bytes.Compare(rs[n-1].k, his[i]) >= 0 {
				kr.last = rs[n-1].k // the first key past the range
			} else {
				kr.toEnd = true // nothing after the range
			}
		}
		for _, r := range rs {
			kr.keys = append(kr.keys, r.k)
		}
		b.ranges = append(b.ranges, kr)
	}
	b.mergeRanges()
	return nil
}
