package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// copyBatch is how many keys one transaction of a copy writes.
const copyBatch = 1000

// CopyTo copies every record of db into dst, bucket by bucket, key by key,
// in transactions of copyBatch keys: moving a one-person cache (a file) into
// a team's database. Copying again writes the same keys with the same
// values, so a copy that was cut short is finished by running it again;
// each bucket's sequence becomes the larger of the two. progress, if set,
// hears each bucket's count as it goes.
func (db *DB) CopyTo(ctx context.Context, dst *DB, progress func(bucket string, keys int)) error {
	if err := db.copyClash(ctx, dst); err != nil {
		return err
	}
	for _, name := range copiedBuckets() {
		if bytes.Equal(name, bSummary) {
			continue // rows are the reservations' own (copyBucket)
		}
		n, err := db.copyBucket(ctx, dst, name)
		if err != nil {
			return fmt.Errorf("copy %s: %w", name, err)
		}
		if progress != nil {
			progress(string(name), n)
		}
	}
	return nil
}

// ErrInUse: the database has records of its own under the numbers the
// copy would write (another cache's audit entries, pushes, operations).
// A copy fills a new database, or finishes a copy of the same cache; it
// never merges two histories (the audit log takes inserts only, and its
// entries chain by number and hash).
var ErrInUse = errors.New("the database is in use: it has records of its own under the numbers this cache uses")

// numbered are the buckets keyed by a sequence number: two stores number
// their entries independently, so the same key means another entry.
var numbered = [][]byte{bAudit, bPush, bRejected, bOp, bExchange}

// copyClash finds, before anything is written, a numbered record dst
// holds with other content than db's under the same key.
func (db *DB) copyClash(ctx context.Context, dst *DB) error {
	for _, name := range copyChecked() {
		var after []byte
		for {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("copy %s: %w", name, err)
			}
			type kv struct{ k, v []byte }
			var page []kv
			err := db.eng.View(func(tx Tx) error {
				b := tx.Bucket(name)
				if b == nil {
					return nil
				}
				c := b.Cursor()
				k, v := c.First()
				if after != nil {
					if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
						k, v = c.Next()
					}
				}
				for ; k != nil && len(page) < copyBatch; k, v = c.Next() {
					page = append(page, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("copy %s: %w", name, err)
			}
			clash := 0
			err = dst.eng.View(func(tx Tx) error {
				b := tx.Bucket(name)
				if b == nil {
					return nil
				}
				for _, e := range page {
					if old := b.Get(e.k); old != nil && !bytes.Equal(old, e.v) {
						clash++
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("copy %s: %w", name, err)
			}
			if clash > 0 {
				return fmt.Errorf("copy %s: %w (%d of its numbers hold other %s); nothing was copied: copy into a new database, or keep this cache as it is", name, ErrInUse, clash, name)
			}
			if len(page) < copyBatch {
				break
			}
			after = page[len(page)-1].k
		}
	}
	return nil
}

// ownOwnKey writes the key owner entry of a reservation's own key, which a
// file keeps none of since layout 12 (putOwner), unless the database has
// an entry for it: the conversion to the native engine's tables reads the
// owners from the entries. A copied owner entry of the file (another
// reservation took the key over) overwrites it when its bucket is copied.
func ownOwnKey(tx Tx, k []byte) error {
	ob, err := tx.CreateBucketIfNotExists(bKeyOwner)
	if err != nil {
		return err
	}
	if ob.Get(k) != nil {
		return nil
	}
	return ob.Put(k, k)
}

// copySummary writes a copied reservation's list row into the kv
// PostgreSQL's summaries bucket, which its list table follows (pagepg.go);
// a file reads its rows from the records (layout 13) and keeps none.
func copySummary(tx Tx, k, v []byte) error {
	if _, bolt := tx.(boltTx); bolt {
		return nil
	}
	row, err := summaryBytes(k, v)
	if err != nil {
		return err
	}
	sb, err := tx.CreateBucketIfNotExists(bSummary)
	if err != nil {
		return err
	}
	return sb.Put(k, row)
}

// copyBucket copies one bucket a chunk (copyBatch keys) per transaction;
// a done ctx stops it between chunks, and what was copied stays (a copy
// resumes).
func (db *DB) copyBucket(ctx context.Context, dst *DB, name []byte) (int, error) {
	type kv struct{ k, v []byte }
	var seq uint64
	var after []byte
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var page []kv
		err := db.eng.View(func(tx Tx) error {
			b := tx.Bucket(name)
			if b == nil {
				return nil
			}
			seq = b.Sequence()
			c := b.Cursor()
			k, v := c.First()
			if after != nil {
				k, v = c.Seek(after)
				if k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(page) < copyBatch; k, v = c.Next() {
				page = append(page, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		err = dst.eng.Update(func(tx Tx) error {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			for _, e := range page {
				// What a copy cut short already wrote stays as it is (the
				// audit log on PostgreSQL refuses any change anyway).
				if old := b.Get(e.k); old != nil && bytes.Equal(old, e.v) {
					continue
				}
				if err := b.Put(e.k, e.v); err != nil {
					return err
				}
			}
			if bytes.Equal(name, bReservation) {
				for _, e := range page {
					if err := ownOwnKey(tx, e.k); err != nil {
						return err
					}
					if err := copySummary(tx, e.k, e.v); err != nil {
						return err
					}
				}
			}
			if seq > b.Sequence() {
				return b.SetSequence(seq)
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += len(page)
		if len(page) < copyBatch {
			return total, nil
		}
		after = page[len(page)-1].k
	}
}
