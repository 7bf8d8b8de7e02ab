package kv

import (
	"bytes"
	"fmt"
	"slices"

	"paydesk/internal/fold"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// A file written by an older paydesk has its records but not the list's
// indexes. Building them in the schema migration's one transaction keeps
// every page it writes in memory until the commit: 7 GB for a million
// reservations. So the migration only makes the buckets and records that
// a fill is due; the fill then runs at open in transactions of a bounded
// number of rows, each recording how far it got, so the memory stays that
// of one chunk and a fill cut short (killed, power lost) goes on where it
// stopped at the next open. Nobody reads the list before it ends: the
// fill is part of Open, and a bbolt file has one process at a time.
//
// A fill is a list of steps. A step walks a source bucket in key order
// from where the last chunk stopped (rowsStep), or builds one sort index:
// its entries read in one pass, sorted, and put in chunks in key order, so
// bbolt appends to its last page instead of splitting pages all over the
// tree (indexStep). The state lives in meta under the fill's name: the
// step number and, for a walk, the last key done.

// fillChunk is the number of rows one fill transaction writes.
const fillChunk = 20_000

// fillStep is one step of a fill: run does the step's next chunk of n
// rows in tx from the key after `after` (nil: from the start) and returns
// the key to go on after, nil when the step is done.
type fillStep struct {
	name string
	// prepare, when set, runs once before the step's first chunk, outside
	// any write transaction (e.g. reads and sorts the index's entries);
	// what it returns is handed to run.
	prepare func(db *DB) (any, error)
	run     func(tx Tx, after []byte, n int, prepared any) (next []byte, err error)
}

// startFill records in tx that fill name is due (from its first step).
func startFill(tx Tx, name string) error {
	return tx.Bucket(bMeta).Put(fillKey(name), []byte{0})
}

func fillKey(name string) []byte { return []byte("fill/" + name) }

// fillTitles say what each fill does, for Options.Upgrading.
var fillTitles = map[string]string{
	packedPosFillName: "converting the lists' indexes to this paydesk's layout",
	listFillName:      "building the reservation list's indexes",
	txListFillName:    "building the transaction list's indexes",
	refoldFillName:    "folding the lists' search texts again",
	pushLogFillName:   "building the push log's index",
}

// runFill runs what is left of fill name, chunk by chunk.
func (db *DB) runFill(name string, steps []fillStep) error {
	n := db.opts.FillChunk
	if n <= 0 {
		n = fillChunk
	}
	chunks := 0
	told := false
	for {
		var state []byte
		if err := db.eng.View(func(tx Tx) error {
			state = bytes.Clone(tx.Bucket(bMeta).Get(fillKey(name)))
			return nil
		}); err != nil {
			return err
		}
		if state == nil {
			return nil
		}
		if !told && db.opts.Upgrading != nil {
			db.opts.Upgrading(fillTitles[name])
			told = true
		}
		step, after := int(state[0]), state[1:]
		if step >= len(steps) {
			return db.eng.Update(func(tx Tx) error { return tx.Bucket(bMeta).Delete(fillKey(name)) })
		}
		s := steps[step]
		var prepared any
		if s.prepare != nil {
			var err error
			if prepared, err = s.prepare(db); err != nil {
				return fmt.Errorf("%s: %s: %w", name, s.name, err)
			}
		}
		// The chunks of this step, each a transaction that also records
		// how far the step got.
		for {
			var next []byte
			err := db.eng.Update(func(tx Tx) error {
				var err error
				if len(after) == 0 {
					after = nil // a step's start: keys are never empty
				}
				if next, err = s.run(tx, after, n, prepared); err != nil {
					return err
				}
				st := []byte{byte(step)}
				if next == nil {
					st[0]++
				} else {
					st = append(st, next...)
				}
				return tx.Bucket(bMeta).Put(fillKey(name), st)
			})
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, s.name, err)
			}
			if chunks++; chunks == db.opts.FailFillAfter {
				return fmt.Errorf("%s: %w", name, domain.ErrFillCut)
			}
			if next == nil {
				break
			}
			after = next
		}
	}
}

// walkFrom calls fn with up to n entries of b in key order after the key
// `after` (from the first with nil) and returns the last key it gave fn,
// nil when it reached the end of the bucket.
func walkFrom(b Bucket, after []byte, n int, fn func(k, v []byte) error) ([]byte, error) {
	c := b.Cursor()
	var k, v []byte
	if after == nil {
		k, v = c.First()
	} else if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
		k, v = c.Next()
	}
	var last []byte
	for i := 0; k != nil; k, v = c.Next() {
		if i == n {
			return last, nil
		}
		if err := fn(k, v); err != nil {
			return nil, err
		}
		last = append(last[:0], k...)
		i++
	}
	return nil, nil
}

// sortedEntries is an index's entries, sorted by key, in one arena: a
// million of them cost their bytes and 12 bytes each, not a pair of slices.
type sortedEntries struct {
	arena []byte
	ents  []arenaEntry
}

type arenaEntry struct {
	off       uint32
	klen, vln uint32
}

func (s *sortedEntries) add(k, v []byte) {
	s.ents = append(s.ents, arenaEntry{uint32(len(s.arena)), uint32(len(k)), uint32(len(v))})
	s.arena = append(append(s.arena, k...), v...)
}

func (s *sortedEntries) kv(i int) (k, v []byte) {
	e := s.ents[i]
	k = s.arena[e.off : e.off+e.klen]
	return k, s.arena[e.off+e.klen : e.off+e.klen+e.vln]
}

func (s *sortedEntries) sort() {
	slices.SortFunc(s.ents, func(a, b arenaEntry) int {
		return bytes.Compare(s.arena[a.off:a.off+a.klen], s.arena[b.off:b.off+b.klen])
	})
}

// indexStep builds index bucket idx from the entries collect gives (read
// in one pass, sorted), put in chunks; the step's position is the last
// index key put.
func indexStep(name string, idx []byte, collect func(tx Tx, add func(k, v []byte)) error) fillStep {
	return fillStep{
		name: name,
		prepare: func(db *DB) (any, error) {
			var es sortedEntries
			err := db.eng.View(func(tx Tx) error { return collect(tx, es.add) })
			if err != nil {
				return nil, err
			}
			es.sort()
			return &es, nil
		},
		run: func(tx Tx, after []byte, n int, prepared any) ([]byte, error) {
			es := prepared.(*sortedEntries)
			b := tx.Bucket(idx)
			FillPages(b)
			i := 0
			if after != nil {
				i, _ = slices.BinarySearchFunc(es.ents, after, func(e arenaEntry, k []byte) int {
					return bytes.Compare(es.arena[e.off:e.off+e.klen], k)
				})
				i++ // after is done
			}
			end := min(i+n, len(es.ents))
			var k, v []byte
			for ; i < end; i++ {
				k, v = es.kv(i)
				if err := b.Put(k, v); err != nil {
					return nil, err
				}
			}
			if end == len(es.ents) {
				return nil, nil
			}
			return bytes.Clone(k), nil
		},
	}
}

// listFill is the fill of the reservation list's indexes (schema 5): row
// IDs and search text (with the blocks' sketches) in the reservations' key
// order, then each sort index.
func listFill() []fillStep {
	steps := []fillStep{{
		name: "rows and search text",
		run: func(tx Tx, after []byte, n int, _ any) ([]byte, error) {
			rows, tb := tx.Bucket(bSumRow), tx.Bucket(bSumText)
			var f fold.Folder
			var text []byte
			return walkFrom(tx.Bucket(bReservation), after, n, func(k, v []byte) error {
				if _, named := kvlayout.ReservationRow(v); named {
					return nil // written since layout 13: its row is indexed
				}
				s, err := kvlayout.SummaryOf(string(k), v)
				if err != nil {
					return fmt.Errorf("reservation %s: %w", k, err)
				}
				id, fresh, err := rowID(rows, k, true, nil)
				if err != nil || !fresh {
					return err
				}
				text = append(AppendSearchText(text[:0], &s, &f), '\n')
				return setRowText(tb, id, k, text)
			})
		},
	}}
	for _, ix := range listIndexes {
		steps = append(steps, indexStep("index "+string(ix.b), ix.b, func(tx Tx, add func(k, v []byte)) error {
			rows := tx.Bucket(bSumRow)
			var pos, val []byte
			return tx.Bucket(bReservation).ForEach(func(k, v []byte) error {
				s, err := kvlayout.SummaryOf(string(k), v)
				if err != nil {
					return fmt.Errorf("reservation %s: %w", k, err)
				}
				if ix.only != nil && !ix.only(&s) {
					return nil
				}
				pos = domain.PosKey(pos[:0], ix.col, &s)
				id, _ := recordRow(rows, k, v)
				if id == noRow {
					return fmt.Errorf("reservation %s: no row ID: %w", k, kvlayout.ErrCorrupt)
				}
				val = appendIndexValue(val[:0], id, k)
				add(pos, val)
				return nil
			})
		}))
	}
	return steps
}
