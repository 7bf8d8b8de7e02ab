package kv

import (
	"encoding/binary"
	"fmt"

	"paydesk/internal/fold"
	"paydesk/store/kvlayout"
)

// condBits finds the rows that pass the query's state and Where: a state
// alone is a range of its index (stateBits); Where's conditions are
// checked on every record, block by block, once for a state of the file
// (a keystroke that only adds words reuses it).
func (c *pageCache) condBits(tx boltTx, l *boltList, q *PageQuery) ([]uint64, error) {
	if !q.HasWhere() {
		return c.stateBits(tx, l, q.State)
	}
	if b := c.cachedCond(tx, q); b != nil {
		return b, nil
	}
	key := q.CondKey()
	out := make([]uint64, (l.rowCount(tx)+63)/64)
	sb := tx.Bucket(l.records)
	var f fold.Folder
	cur := tx.Bucket(l.text).Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(k) != 4 {
			return nil, kvlayout.ErrCorrupt
		}
		blk := int(binary.BigEndian.Uint32(k))
		rows, err := decodeBlock(v)
		if err != nil {
			return nil, fmt.Errorf("search text block %x: %w", k, err)
		}
		for _, r := range rows {
			if blk < len(out) && l.keep(sb.Get(r.key), q, &f) {
				out[blk] |= 1 << (r.lo & 63)
			}
		}
	}
	c.mu.Lock()
	c.whereTx, c.where, c.whereSet = tx.Bolt.ID(), key, out
	c.mu.Unlock()
	return out, nil
}

// cachedCond is the rows of the query's conditions when known for this
// state of the file.
func (c *pageCache) cachedCond(tx boltTx, q *PageQuery) []uint64 {
	if !q.HasWhere() {
		return c.cachedState(tx, q.State)
	}
	key := q.CondKey()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.whereTx == tx.Bolt.ID() && c.where == key {
		return c.whereSet
	}
	return nil
}
