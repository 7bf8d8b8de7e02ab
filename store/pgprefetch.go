package store

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

// noteKey adds k (written by the transaction) to the range that holds it.
func (b *pgBucket) noteKey(k []byte) {
	for _, r := range b.ranges {
		if r.holds(k) {
			if i, found := slices.BinarySearchFunc(r.keys, k, bytes.Compare); !found {
				r.keys = slices.Insert(r.keys, i, k)
			}
		}
	}
}

// knownAbsent: k lies in a known range and was not there.
func (b *pgBucket) knownAbsent(k []byte) bool {
	for _, r := range b.ranges {
		if r.holds(k) {
			return true
		}
	}
	return false
}

// knownPage serves a forward cursor move from a known range: the keys from
// k on (after k when after), in order, while they are known. ok is false
// when no range can answer it.
func (b *pgBucket) knownPage(k []byte, after bool) (page []kvRow, ok bool) {
	for _, r := range b.ranges {
		if !r.holds(k) || (after && !r.toEnd && bytes.Equal(k, r.last)) {
			continue
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
	}
	return nil, false
}

// prefetchRange is one range to read: keys from lo, before hi (nil: to
// the end of the bucket), and the first key at or after hi.
type prefetchRange struct{ lo, hi []byte }

const qPrefetchRanges = `SELECT r.i, x.k, x.v FROM unnest($2::bytea[], $3::bytea[]) WITH ORDINALITY AS r(lo, hi, i)
CROSS JOIN LATERAL (
	(SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k >= r.lo AND k < r.hi ORDER BY k)
	UNION ALL
	(SELECT k, v FROM paydesk_kv WHERE bucket = $1 AND k >= r.hi ORDER BY k LIMIT 1)
) AS x ORDER BY r.i, x.k`

// prefetchWhole is how many keys of a small bucket (the open operations)
// are read whole; a larger one is left to the cursor.
const prefetchWhole = 1000

// prefetchForPushes reads in one round trip what the push rules will read
// for pushes with these keys, and reserves n push numbers.
func (t *pgTx) prefetchForPushes(keys []string, n int) error {
	if t.err != nil {
		return t.err
	}
	if err := t.flush(); err != nil {
		return err
	}
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	var los, his, subLos [][]byte
	for _, k := range keys {
		los = append(los, []byte(k))
		his = append(his, append([]byte(k), 1))
		subLos = append(subLos, append([]byte(k), 0))
	}
	type ranged struct {
		bucket []byte
		lo     [][]byte
	}
	plans := []ranged{
		{bTransaction, los},   // the transaction record and the push index: key, key 0x00 id
		{bPushKey, subLos},    // the push index of older caches
		{bRelated, subLos},    // refunds against key
		{bReservation, los},   // a Reserve push's reservation
		{bKeyOwner, los},      // the reservation a data request belongs to
		{bOrphan, los},        // a data request that came before its reservation
		{bOpOpen, [][]byte{}}, // the open operations, whole
	}
	var batch pgx.Batch
	var order []*pgBucket
	for _, p := range plans {
		b, ok := t.Bucket(p.bucket).(*pgBucket)
		if !ok {
			if t.err != nil {
				return t.err
			}
			continue // no such bucket: the rules find nothing there either
		}
		order = append(order, b)
		if len(p.lo) == 0 {
			batch.Queue(`SELECT 1::bigint, k, v FROM paydesk_kv WHERE bucket = $1 ORDER BY k LIMIT $2`, b.name, prefetchWhole+1)
			continue
		}
		batch.Queue(qPrefetchRanges, b.name, p.lo, his)
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
	for _, b := range order {
		if err := b.readRanges(br, los, his, bytes.Equal(b.name, bOpOpen)); err != nil {
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
	return nil
}
