package kv

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// The bucket engine keeps the store's records in named buckets of sorted
// keys, read and written in transactions. Engine is what it needs of the
// storage under it: bbolt for one person (a file, OpenFile) or PostgreSQL
// for a team (store's pgengine.go). The domain rules — the ledger, the journal, applying
// pushes — are written once against Tx and hold on either engine: a write
// transaction sees a consistent snapshot and commits all or nothing, and
// on PostgreSQL concurrent writers from other processes are serialized
// (a transaction that lost a race runs again).
type Engine interface {
	// Update runs fn in a write transaction and commits it (durably)
	// when fn returns nil. fn may run more than once.
	Update(fn func(tx Tx) error) error
	// View runs fn in a read transaction.
	View(fn func(tx Tx) error) error
	Close() error
}

// Tx is a transaction: its buckets by name.
type Tx interface {
	// Bucket returns the bucket, nil when it does not exist.
	Bucket(name []byte) Bucket
	// CreateBucketIfNotExists makes the bucket (migrations).
	CreateBucketIfNotExists(name []byte) (Bucket, error)
}

// Bucket is a sorted map of byte keys to byte values, with a sequence
// counter. Values returned by Get and the cursor are valid until the
// transaction ends.
type Bucket interface {
	Get(key []byte) []byte
	Put(key, value []byte) error
	Delete(key []byte) error
	Cursor() Cursor
	ForEach(fn func(k, v []byte) error) error
	NextSequence() (uint64, error)
	Sequence() uint64
	SetSequence(v uint64) error
}

// Cursor walks a bucket in key order; a nil key means past the end.
type Cursor interface {
	First() (key, value []byte)
	Last() (key, value []byte)
	Seek(key []byte) (key2, value []byte)
	Next() (key, value []byte)
	Prev() (key, value []byte)
}

// boltEngine is bbolt under the Engine interface. Every transaction runs
// under the damage guard (damage.go): a fault or a panic on a damaged page
// is an error, and once one was seen the file takes no more writes.
type boltEngine struct {
	db     *bolt.DB
	damage *damage
	mark   *openMark
}

// Update runs fn in a write transaction; the session's first write puts
// the clean-close marker's "open" in the same commit (damage.go).
func (e boltEngine) Update(fn func(Tx) error) error {
	if err := e.damage.get(); err != nil {
		return err
	}
	return e.damage.guard(func() error {
		return e.db.Update(func(tx *bolt.Tx) error {
			if err := fn(BoltTx{tx}); err != nil {
				return err
			}
			return e.mark.putOpen(tx)
		})
	})
}

func (e boltEngine) View(fn func(Tx) error) error {
	return e.damage.guard(func() error {
		return e.db.View(func(tx *bolt.Tx) error { return fn(BoltTx{tx}) })
	})
}

func (e boltEngine) Close() error { return e.db.Close() }

// BoltTx and BoltBucket hold one pointer each, so wrapping them in an
// interface allocates nothing on the push path. The list indexes on bbolt
// reach through them for what only bbolt has (a transaction's ID, the
// page fill).
type BoltTx struct{ Bolt *bolt.Tx }

func (t BoltTx) Bucket(name []byte) Bucket {
	b := t.Bolt.Bucket(name)
	if b == nil {
		return nil
	}
	return BoltBucket{b}
}

func (t BoltTx) CreateBucketIfNotExists(name []byte) (Bucket, error) {
	b, err := t.Bolt.CreateBucketIfNotExists(name)
	if err != nil {
		return nil, err
	}
	return BoltBucket{b}, nil
}

// BoltBucket is a bbolt bucket under the Bucket interface.
type BoltBucket struct{ Bolt *bolt.Bucket }

func (b BoltBucket) Get(k []byte) []byte                      { return b.Bolt.Get(k) }
func (b BoltBucket) Put(k, v []byte) error                    { return b.Bolt.Put(k, v) }
func (b BoltBucket) Delete(k []byte) error                    { return b.Bolt.Delete(k) }
func (b BoltBucket) Cursor() Cursor                           { return b.Bolt.Cursor() }
func (b BoltBucket) ForEach(fn func(k, v []byte) error) error { return b.Bolt.ForEach(fn) }
func (b BoltBucket) NextSequence() (uint64, error)            { return b.Bolt.NextSequence() }
func (b BoltBucket) Sequence() uint64                         { return b.Bolt.Sequence() }
func (b BoltBucket) SetSequence(v uint64) error               { return b.Bolt.SetSequence(v) }

// FillPages tells bbolt that keys only grow (a log): pages are filled
// before they split. Other engines ignore it.
func FillPages(b Bucket) {
	if bb, ok := b.(BoltBucket); ok {
		bb.Bolt.FillPercent = 1.0
	}
}

// fillAtEnd is fillPages for an index whose keys usually rise (a row's
// creation time) but need not: an import or a generated file brings them
// in any order, and a bucket filled to the brim by keys that land inside
// leaves most pages nearly empty (23% full on a generated file). So pages
// are filled only while every key of this transaction goes to the end, or
// near it (pushes of one commit arrive a little out of order); after a
// key lands inside, the transaction keeps bbolt's half-full split, which
// suits keys in any order. Other engines ignore it.
func fillAtEnd(b Bucket, k []byte) { (*ownedValues)(nil).fillAtEnd(b, k) }

// fillAtEndLook is fillAtEnd's look at the bucket's end; it reports
// the bucket's last key and whether k goes after it.
func fillAtEndLook(bb BoltBucket, k []byte) (last []byte, after bool) {
	c := bb.Bolt.Cursor()
	n := 0
	last, _ = c.Last()
	if last != nil && bytes.Compare(k, last) <= 0 {
		for at, _ := c.Seek(k); at != nil && n < nearEnd; at, _ = c.Next() {
			n++
		}
	}
	if n < nearEnd {
		bb.Bolt.FillPercent = 1.0
	} else {
		bb.Bolt.FillPercent = fillInside
	}
	return last, last == nil || bytes.Compare(k, last) > 0
}

// nearEnd is how many keys may follow one that still counts as going to
// the end: the keys of one apply transaction (up to 512 pushes, two keys
// each in the transactions bucket) overtaken by those of a few hundred
// senders, and a few pages of an index. At 256 the push inbox's
// transactions of 512 pushes found keys "inside" and split the
// transactions bucket half full (fill 0.76 after 100,000 pushes, 0.96
// at 1,024).
const nearEnd = 1024

// fillInside is bbolt's default split, as a value fillAtEnd tells from
// the default: a key of this transaction landed inside the bucket.
const fillInside = bolt.DefaultFillPercent + 1e-9

// fillAtGroupEnd is fillAtEnd for an index whose keys rise within a group
// (the first g bytes of a key: a state, a customer, an amount; the
// creation time and the row's key follow): a new row's entry goes at the
// end of its group, inside the tree. bbolt's half-full split leaves the
// group's older entries on a page that no later entry of the group
// reaches, so such an index stays about half full (42% for the state
// index of a generated file that grew by use), and a full page would
// split again on each entry of the group (fillAtEnd's case). So while
// every key of this transaction that lands inside goes at the end of a
// group of at least two pages of entries, pages split at fillGroupEnd; a
// key that lands elsewhere inside (a customer's first reservation, keys
// in any order) makes it bbolt's split for the rest of the transaction.
// Other engines ignore it.
func fillAtGroupEnd(b Bucket, k []byte, g int) {
	bb, ok := b.(BoltBucket)
	if !ok || bb.Bolt.FillPercent == fillInside {
		return
	}
	if g <= 0 || g >= len(k) {
		fillAtEnd(b, k)
		return
	}
	was := bb.Bolt.FillPercent
	fillAtEndLook(bb, k)
	switch {
	case bb.Bolt.FillPercent == 1.0:
		// Near the end; a group's end this transaction split at keeps
		// its split (a full page would split again there).
		if was == fillGroupEnd {
			bb.Bolt.FillPercent = fillGroupEnd
		}
	case atGroupEnd(bb, k, g):
		bb.Bolt.FillPercent = fillGroupEnd
	}
}

// fillGroupEnd is the split fillAtGroupEnd sets: a page keeps 90% of its
// entries, the rest and the new ones go on. Entries added at the end of
// groups of two pages or more fill about 81–90% of their pages (a
// simulation of a leaf level: 8–224 groups); 100% would leave a page of
// one entry per entry added where a group's end shares a page with the
// next group's start.
const fillGroupEnd = 0.9

// atGroupEnd reports whether k (not in the bucket yet) goes after every
// key of its group (its first g bytes) and after at least two pages of
// them, so that later keys of the group follow it, not the page before.
func atGroupEnd(bb BoltBucket, k []byte, g int) bool {
	c := bb.Bolt.Cursor()
	next, _ := c.Seek(k)
	if next != nil && bytes.Equal(next, k) {
		next, _ = c.Next()
	}
	if next != nil && bytes.HasPrefix(next, k[:g]) {
		return false
	}
	var prev, v []byte
	if next == nil {
		prev, v = c.Last()
	} else {
		prev, v = c.Prev()
	}
	limit := 2 * bb.Bolt.Tx().DB().Info().PageSize
	for size := 0; prev != nil; prev, v = c.Prev() {
		if !bytes.HasPrefix(prev, k[:g]) {
			return false
		}
		// An element's header in a leaf page is 16 bytes.
		if size += len(prev) + len(v) + 16; size >= limit {
			return true
		}
	}
	return false
}

// KeyCount counts a bucket's keys (once, for a file from before a counter
// was kept).
func KeyCount(b Bucket) int {
	if bb, ok := b.(BoltBucket); ok {
		return bb.Bolt.Stats().KeyN
	}
	n := 0
	_ = b.ForEach(func(_, _ []byte) error { n++; return nil })
	return n
}
