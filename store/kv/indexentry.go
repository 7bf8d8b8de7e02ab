package kv

import (
	"encoding/binary"
	"fmt"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// A list index entry (layout 11) is position key → row ID (4 bytes) and the
// length of the row's packed key (uvarint). The position key ends with the
// row's key, packed in 5-bit symbols (domain.AppendSortKey: 20 bytes for a
// 32-digit transaction key), so the entry names it by its length instead
// of repeating it. Layout 8 wrote the key itself after the row ID, layouts
// 9 and 10 the key unpacked at the position's end; the upgrade to 9 and
// the one to 11 build the indexes again (migrateIndexEntries), so only
// this form is read.

// appendIndexValue appends the value of an index entry for row id with
// the given key.
func appendIndexValue(dst []byte, id uint32, key []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, id)
	return binary.AppendUvarint(dst, uint64(domain.SortKeyLen(string(key))))
}

// entryKey is the row key an index entry (k → v) names: the last bytes of
// its position key, as many as its value says, unpacked.
func entryKey(k, v []byte) (string, error) {
	if len(v) < 5 {
		return "", fmt.Errorf("index entry %x: value of %d bytes: %w", k, len(v), kvlayout.ErrCorrupt)
	}
	n, m := binary.Uvarint(v[4:])
	if m <= 0 || 4+m != len(v) || n == 0 || n > uint64(len(k)) {
		return "", fmt.Errorf("index entry %x: key length: %w", k, kvlayout.ErrCorrupt)
	}
	key, err := domain.DecodeSortKey(k[uint64(len(k))-n:])
	if err != nil {
		return "", fmt.Errorf("index entry %x: %w: %w", k, err, kvlayout.ErrCorrupt)
	}
	return key, nil
}

// migrateIndexEntries builds the lists' sort indexes again in the short
// form (layout 9): the migration empties them, and the fills at open
// (pagefill.go) put every entry back in chunks, resumable when cut, as
// for a file that never had them. Rows, search texts and their sketches
// stay as they are (the fills' first steps pass over rows that have an
// ID).
func migrateIndexEntries(tx Tx) error {
	bt, ok := tx.(boltTx)
	if !ok {
		return nil // PostgreSQL keeps list tables (pagepg.go)
	}
	lists := []struct {
		records []byte
		idx     [][]byte
		fill    string
	}{
		{bSummary, append(bSumIdx[:], bSumUnknown, bSumMissing), listFillName},
		{bTransaction, bTxIdx[:], txListFillName},
	}
	for _, l := range lists {
		if bt.Bolt.Bucket(l.idx[0]) == nil {
			continue // the list's buckets come with its own migration
		}
		for _, name := range l.idx {
			if bt.Bolt.Bucket(name) != nil {
				if err := bt.Bolt.DeleteBucket(name); err != nil {
					return fmt.Errorf("index %s: %w", name, err)
				}
			}
			if _, err := bt.Bolt.CreateBucket(name); err != nil {
				return fmt.Errorf("index %s: %w", name, err)
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
