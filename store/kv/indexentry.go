package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// A list index entry (layout 11) is position key → row ID (4 bytes) and the
// length of the row's packed key (uvarint). The position key ends with the
// row's key, packed in 5-bit symbols (domain.AppendSortKey: 20 bytes for a
// 32-digit transaction key), so the entry names it by its length instead
// of repeating it. The indexes of layout 11 are the sumpos.* and txpos.*
// buckets. Before, the sumidx.* and txidx.* buckets ended each position
// with the key itself and named it by its length (layouts 9 and 10) or
// repeated it after the row ID (layout 8): the upgrade to 9 drops them and
// builds the indexes from the records (migrateIndexEntries); the upgrade
// to 11 converts the entries of 9 and 10 (migratePackedPositions).

// appendIndexValue appends the value of an index entry for row id with
// the given key.
func appendIndexValue(dst []byte, id uint32, key []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, id)
	return binary.AppendUvarint(dst, uint64(domain.SortKeyLen(string(key))))
}

// entryKey appends the row key an index entry (k → v) names to dst: the
// last bytes of its position key, as many as its value says, unpacked.
func entryKey(dst, k, v []byte) ([]byte, error) {
	if len(v) < 5 {
		return dst, fmt.Errorf("index entry %x: value of %d bytes: %w", k, len(v), kvlayout.ErrCorrupt)
	}
	n, m := binary.Uvarint(v[4:])
	if m <= 0 || 4+m != len(v) || n == 0 || n > uint64(len(k)) {
		return dst, fmt.Errorf("index entry %x: key length: %w", k, kvlayout.ErrCorrupt)
	}
	key, err := domain.AppendDecodedSortKey(dst, k[uint64(len(k))-n:])
	if err != nil {
		return dst, fmt.Errorf("index entry %x: %w: %w", k, err, kvlayout.ErrCorrupt)
	}
	return key, nil
}

// oldIndexes are the list indexes of layouts 5–10 (their names are the
// old files', fixed) beside the buckets that hold them now: the
// reservation list's five sort indexes and two filtered ones, then the
// transaction list's six.
var oldIndexes = func() (out [][2][]byte) {
	now := append(append(append([][]byte(nil), bSumIdx[:]...), bSumUnknown, bSumMissing), bTxIdx[:]...)
	for i, old := range []string{"sumidx.created", "sumidx.invoice", "sumidx.customer", "sumidx.amount", "sumidx.state",
		"sumidx.unknown", "sumidx.missing",
		"txidx.created", "txidx.kind", "txidx.invoice", "txidx.customer", "txidx.amount", "txidx.status"} {
		out = append(out, [2][]byte{[]byte(old), now[i]})
	}
	return out
}()

// migrateIndexEntries drops the list indexes of layout 8, whose entries
// repeat the row's key, and has the fills at open (pagefill.go) build the
// lists' indexes again, in chunks, resumable when cut, as for a file that
// never had them. Rows, search texts and their sketches stay as they are
// (the fills' first steps pass over rows that have an ID).
func migrateIndexEntries(tx Tx) error {
	bt, ok := tx.(boltTx)
	if !ok {
		return nil // PostgreSQL keeps list tables (pagepg.go)
	}
	lists := []struct {
		records []byte
		old     [][2][]byte
		fill    string
	}{
		{bReservation, oldIndexes[:7], listFillName},
		{bTransaction, oldIndexes[7:], txListFillName},
	}
	for _, l := range lists {
		if bt.Bolt.Bucket(l.old[0][0]) == nil {
			continue // the list's buckets come with its own migration
		}
		for _, names := range l.old {
			if bt.Bolt.Bucket(names[0]) != nil {
				if err := bt.Bolt.DeleteBucket(names[0]); err != nil {
					return fmt.Errorf("index %s: %w", names[0], err)
				}
			}
			if _, err := bt.Bolt.CreateBucketIfNotExists(names[1]); err != nil {
				return fmt.Errorf("index %s: %w", names[1], err)
			}
		}
		if rb := tx.Bucket(l.records); rb != nil {
			if k, _ := rb.Cursor().First(); k != nil {
				if err := startFill(tx, l.fill); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// packedPosFillName names the conversion of layout 10's list indexes.
const packedPosFillName = "packed-positions"

// migratePackedPositions makes layout 11's index buckets and, where a
// list has layout 10's (or 9's), has the fill at open convert them entry
// by entry (packedPosFill): the old entries are in the order the new
// ones take, so the conversion appends to full pages and reads no record;
// on a million reservations it takes a fraction of building the indexes
// from the records.
func migratePackedPositions(tx Tx) error {
	bt, ok := tx.(boltTx)
	if !ok {
		return nil
	}
	due := false
	for _, names := range oldIndexes {
		if bt.Bolt.Bucket(names[0]) == nil {
			continue // a list made at layout 11, or none yet
		}
		if _, err := bt.Bolt.CreateBucketIfNotExists(names[1]); err != nil {
			return fmt.Errorf("index %s: %w", names[1], err)
		}
		due = true
	}
	if due {
		return startFill(tx, packedPosFillName)
	}
	return nil
}

// packedPosFill converts each old index in turn.
func packedPosFill() []fillStep {
	steps := make([]fillStep, 0, len(oldIndexes))
	for _, names := range oldIndexes {
		steps = append(steps, fillStep{name: "convert " + string(names[0]), run: func(tx Tx, after []byte, n int, _ any) ([]byte, error) {
			return convertPositions(tx, names[0], names[1], after, n)
		}})
	}
	return steps
}

// convertPositions writes up to n entries of index from (layout 9 or 10),
// from the key after `after`, into index to with the key packed, and
// returns the last key done; when from has no more, it drops from and
// returns nil.
func convertPositions(tx Tx, from, to, after []byte, n int) ([]byte, error) {
	bt, ok := tx.(boltTx)
	if !ok {
		return nil, nil
	}
	ob := bt.Bolt.Bucket(from)
	if ob == nil {
		return nil, nil // converted and dropped
	}
	nb, err := bt.Bolt.CreateBucketIfNotExists(to)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", to, err)
	}
	nb.FillPercent = 1.0 // the entries come in order: each goes at the end
	c := ob.Cursor()
	k, v := c.First()
	if after != nil {
		if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
			k, v = c.Next()
		}
	}
	var last []byte
	for ; k != nil && n > 0; k, v = c.Next() {
		n--
		l, m := uint64(0), 0
		if len(v) >= 5 {
			l, m = binary.Uvarint(v[4:])
		}
		if m <= 0 || 4+m != len(v) || l == 0 || l > uint64(len(k)) {
			return nil, fmt.Errorf("index %s: entry %x: not a row ID and a key length: %w", from, k, kvlayout.ErrCorrupt)
		}
		cut := uint64(len(k)) - l
		key := k[cut:]
		// bbolt keeps what Put is given until the commit: fresh slices.
		pos := domain.AppendSortKey(append(make([]byte, 0, int(cut)+domain.SortKeyLen(string(key))), k[:cut]...), string(key))
		if err := nb.Put(pos, appendIndexValue(make([]byte, 0, 6), binary.BigEndian.Uint32(v), key)); err != nil {
			return nil, fmt.Errorf("index %s: %w", to, err)
		}
		last = k
	}
	if k != nil {
		return bytes.Clone(last), nil
	}
	if err := bt.Bolt.DeleteBucket(from); err != nil {
		return nil, fmt.Errorf("index %s: %w", from, err)
	}
	return nil, nil
}
