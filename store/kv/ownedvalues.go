package kv

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// A push appends its transaction's row to the search text block of its
// row ID (64 rows a block) and sets the new bits of that block's trigram
// sketch. The pushes of one group commit have neighbouring row IDs, so
// they rewrite the same block and sketch one after the other: a copy of
// the whole block (up to about 10 KB) and of the 3 KiB sketch per push,
// garbage as soon as the next push of the commit writes its own (the
// largest allocations of the write path, measured with the listener's
// benchmark). ownedValues remembers the values this transaction wrote
// itself: a sketch it wrote is changed in place, and a block is built in
// the buffer the previous version left free (two buffers a block, used
// in turn).
//
// bbolt keeps the value given to Put until the transaction commits
// (node.put stores the slice), and Get returns that same slice; so a value
// that Get returns and that is one of ours is bbolt's current value for the
// key, and nothing else in the transaction holds it. ownedValues lives as
// long as one transaction (kvTx): a transaction that is rolled back and run
// again starts with none.
type ownedValues struct {
	m map[string]*ownedValue
	// ends holds, per bucket, what fillAtEnd knows of the keys this
	// transaction put at the bucket's end.
	ends map[*bolt.Bucket]*fillEnd
	// looks counts fillAtEnd's looks at a bucket's end.
	looks int
}

// fillEnd is what a transaction put at a bucket's end: every key after
// base is one of the n it put since (a delete only makes fewer), the
// greatest of them max.
type fillEnd struct {
	base, max []byte
	n         int
}

type ownedValue struct {
	cur, spare []byte
}

func ownedKey(bucket, key []byte) string { return string(bucket) + "\x00" + string(key) }

// same reports whether a and b are the same slice (same array, same
// length).
func same(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// mine returns v when it is the value this transaction put last under key
// in bucket, nil otherwise.
func (o *ownedValues) mine(bucket, key, v []byte) []byte {
	if o == nil || o.m == nil {
		return nil
	}
	if e := o.m[ownedKey(bucket, key)]; e != nil && same(e.cur, v) {
		return v
	}
	return nil
}

// buffer returns an empty buffer of at least n bytes' capacity for the
// next value of key in bucket, whose current value is cur: the buffer its
// value before cur used when cur is ours, else a new one.
func (o *ownedValues) buffer(bucket, key, cur []byte, n int) []byte {
	if o != nil && o.m != nil {
		if e := o.m[ownedKey(bucket, key)]; e != nil && same(e.cur, cur) && cap(e.spare) >= n {
			return e.spare[:0]
		}
	}
	// Room for a few more rows: the block grows by one row a push.
	return make([]byte, 0, n+n/4+256)
}

// put records that v, made by buffer or by this transaction, is now the
// value of key in bucket; the previous value of ours becomes the spare.
func (o *ownedValues) put(bucket, key, prev, v []byte) {
	if o == nil {
		return
	}
	if o.m == nil {
		o.m = make(map[string]*ownedValue)
	}
	k := ownedKey(bucket, key)
	e := o.m[k]
	if e == nil {
		e = &ownedValue{}
		o.m[k] = e
	}
	if same(e.cur, prev) {
		e.spare = e.cur
	} else {
		e.spare = nil
	}
	e.cur = v
}

// fillAtEnd is the package's fillAtEnd with its look at the bucket's end
// spared for a key after the first one this transaction put at the end
// (the base: the bucket's last key then), while it has put fewer than
// nearEnd there: every key after the base is one of those, so fewer than
// nearEnd keys follow the new one, which is what the look counts. Each new
// transaction of a push puts a key at the end of the transactions bucket,
// its row IDs and its six list indexes, and the pushes of one commit come
// a little out of order (each sender's keys rise, not all senders'); the
// look (a cursor to the bucket's last key, a seek and up to nearEnd
// steps) was the write path's largest cost in the listener's CPU profile.
// A nil o is the package's fillAtEnd.
func (o *ownedValues) fillAtEnd(b Bucket, k []byte) {
	bb, ok := b.(BoltBucket)
	if !ok || bb.Bolt.FillPercent == fillInside {
		return
	}
	if o != nil && bb.Bolt.FillPercent == 1.0 {
		if e := o.ends[bb.Bolt]; e != nil {
			if bytes.Compare(k, e.max) > 0 {
				e.max, e.n = append(e.max[:0], k...), e.n+1
				return
			}
			if e.n < nearEnd && bytes.Compare(k, e.base) > 0 {
				e.n++
				return
			}
		}
	}
	if o != nil {
		o.looks++
	}
	last, atEnd := fillAtEndLook(bb, k)
	if atEnd && o != nil {
		if o.ends == nil {
			o.ends = make(map[*bolt.Bucket]*fillEnd)
		}
		e := o.ends[bb.Bolt]
		if e == nil {
			e = &fillEnd{}
			o.ends[bb.Bolt] = e
		}
		// k goes after every key: the keys after last are k and what
		// comes after it, so the count starts again.
		e.base, e.max, e.n = append(e.base[:0], last...), append(e.max[:0], k...), 1
	}
}
