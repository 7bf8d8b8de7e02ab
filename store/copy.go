package store

import (
	"bytes"
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
func (db *DB) CopyTo(dst *DB, progress func(bucket string, keys int)) error {
	for _, name := range allBuckets {
		n, err := db.copyBucket(dst, name)
		if err != nil {
			return fmt.Errorf("copy %s: %w", name, err)
		}
		if progress != nil {
			progress(string(name), n)
		}
	}
	return nil
}

func (db *DB) copyBucket(dst *DB, name []byte) (int, error) {
	type kv struct{ k, v []byte }
	var seq uint64
	var after []byte
	total := 0
	for {
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
