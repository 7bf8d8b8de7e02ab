package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"paydesk/internal/fold"
	"paydesk/internal/query"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// The reservation list on bbolt. Beside the summaries (key → Summary) the
// file keeps, updated in the same transaction as a summary:
//
//   - one index per sort column: position key (posKey) → row ID and key, so a
//     page is a cursor walk of Limit entries, whatever the list's size;
//   - an index of the reservations whose outcome is unknown, and one of the
//     order mismatches, likewise;
//   - a row ID per reservation (key → 4 bytes; IDs dense from 0), and the
//     search text of 64 rows per block (row ID / 64 → block), laid out so a
//     filter runs bytes.Index over a block's text at memory speed instead of
//     visiting rows one by one, with a sketch of each block's trigrams and
//     digits (below) that tells the blocks a rare word may be in.
//
// A filter whose blocks are few makes a bit set of the rows it found (one
// 64-bit word per block: 125 KB for a million rows); the page then walks
// the sort index and keeps the rows in the set, or, when few rows matched,
// reads and sorts just those. A common word walks the sort index checking
// each row's text until the page is full, and is counted apart
// (boltCount). docs/large.md has the figures.
var (
	bSumIdx = [SortCount][]byte{
		SortCreated:  []byte("sumpos.created"),
		SortInvoice:  []byte("sumpos.invoice"),
		SortCustomer: []byte("sumpos.customer"),
		SortAmount:   []byte("sumpos.amount"),
		SortState:    []byte("sumpos.state"),
	}
	bSumUnknown = []byte("sumpos.unknown") // position by created → row ID and key
	bSumMissing = []byte("sumpos.missing") // likewise, for OrderMissing
	bSumRow     = []byte("sumrow")         // key → row ID (4 bytes)
	bSumText    = []byte("sumtext")        // row ID / 64 → textBlock
	bSumGram    = []byte("sumgram")        // row ID / 64 → the block's trigrams (gramBytes, a bit per hash)
)

var pageBuckets = append(bSumIdx[:], bSumUnknown, bSumMissing, bSumRow, bSumText, bSumGram)

// boltList is one paged list of the file: its records and its indexes'
// buckets. The reservation list (reservation records) and the transaction list
// (pagetx.go) are two; the paging and the search below serve both.
type boltList struct {
	records []byte   // key → record
	idx     [][]byte // one index per sort column: position → row ID and key
	// row: key → row ID, its sequence numbering the rows (a reservation
	// record names its row since layout 13: recordRow); text: the text
	// blocks; gram: their sketches.
	row, text, gram []byte
	count           []byte // meta counter of the records
	// pos appends the position key in column col of the record v stored
	// under key.
	pos func(dst []byte, col SortBy, key, v []byte) ([]byte, error)
	// keep reports whether the record v under key passes a query's state
	// and Where (keepSummary).
	keep func(key, v []byte, q *PageQuery, f *fold.Folder) bool
	// stateRange is the index and key prefix that hold a state's rows in
	// creation order.
	stateRange func(tx Tx, st State) (Cursor, []byte)
	// knownState reports whether stateRange holds exactly the rows of st
	// (nil: always); an unknown state's range is checked row by row.
	knownState func(State) bool
	// fields is the check of Where's fields on a row's search text, as
	// keep applies them, its values folded once (domain.SummaryFields).
	fields func(w *query.Query) func(text []byte) bool
	// amountCol is the sort column of the amount in cents.
	amountCol SortBy
}

// resBolt is the reservation list. Its rows are read from the
// reservation records (kvlayout.SummaryOf): the file keeps no copy of
// them (layout 13).
var resBolt = &boltList{
	records: bReservation, idx: bSumIdx[:], row: bSumRow, text: bSumText, gram: bSumGram, count: kReservationCount,
	pos: func(dst []byte, col SortBy, key, v []byte) ([]byte, error) {
		s, err := kvlayout.SummaryOf(string(key), v)
		if err != nil {
			return nil, err
		}
		return domain.PosKey(dst, col, &s), nil
	},
	keep: func(key, v []byte, q *PageQuery, f *fold.Folder) bool {
		s, err := kvlayout.SummaryOf(string(key), v)
		return err == nil && keepSummary(&s, q, f)
	},
	stateRange: stateRange,
	knownState: domain.KnownState,
	fields:     domain.SummaryFields,
	amountCol:  SortAmount,
}

// smallSet is the match count up to which a filtered page reads and sorts
// the matching rows instead of walking a sort index past the others.
const smallSet = 1500

// maxScanBlocks is how many text blocks (of 64 rows) a page's filter
// searches before it answers; a query that the trigram sketches cannot
// narrow to that many (a common word, a word of one or two letters) walks
// the sort index instead, checking rows until the page is full, and the
// whole search runs for the count (ReservationCount).
const maxScanBlocks = 1500

// Each text block has a sketch of its trigrams: a bit per hash of every
// three bytes of its rows' text (within a field). A word of three bytes or
// more can be in a block only if all its trigrams' bits are set, so a rare
// word (an invoice, an e-mail) is searched for in the one or two blocks
// that may hold it, not in all 16,000 of a million rows. Bits are only
// ever set (a changed row leaves its old trigrams): a stale bit costs a
// block searched for nothing, never a row missed.
//
// Digits need more: there are only a thousand digit trigrams, and 64 rows
// of invoice, reservation and order numbers hold nearly all of them. So
// the sketch has a second part, for every five digits in a row (a run of
// five or more): an invoice or an order number typed in part is found in
// the few blocks whose numbers hold those digits.
const (
	gramBits   = 14 // 2 KiB of trigram bits
	digitBits  = 13 // 1 KiB of five-digit bits
	gramBytes  = (1<<gramBits + 1<<digitBits) / 8
	digitsBase = 1 << gramBits
)

func gramHash(a, b, c byte) uint32 {
	return (uint32(a) | uint32(b)<<8 | uint32(c)<<16) * 0x9E3779B1 >> (32 - gramBits)
}

func digitHash(d []byte) uint32 {
	v := uint32(0)
	for _, c := range d[:5] {
		v = v*10 + uint32(c-'0')
	}
	return digitsBase + (v+1)*0x9E3779B1>>(32-digitBits)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// eachGram calls fn with the bit of every trigram (within a field) and of
// every five digits in a run of digits.
func eachGram(text []byte, fn func(uint32)) {
	run := 0
	for i := range text {
		if isDigit(text[i]) {
			run++
			if run >= 5 {
				fn(digitHash(text[i-4 : i+1]))
			}
		} else {
			run = 0
		}
		if i+2 >= len(text) {
			continue
		}
		a, b, c := text[i], text[i+1], text[i+2]
		if a == 0 || b == 0 || c == 0 || a == '\n' || b == '\n' || c == '\n' {
			continue
		}
		fn(gramHash(a, b, c))
	}
}

// addGrams sets the bits of text's grams in sketch.
func addGrams(sketch, text []byte) {
	eachGram(text, func(h uint32) { sketch[h>>3] |= 1 << (h & 7) })
}

// wordGrams are the bits of the words' grams (none for words of fewer than
// three bytes).
func wordGrams(words [][]byte) []uint32 {
	var out []uint32
	for _, w := range words {
		eachGram(w, func(h uint32) { out = append(out, h) })
	}
	return out
}

func hasGrams(sketch []byte, grams []uint32) bool {
	if len(sketch) != gramBytes {
		return true // no sketch: the block may hold anything
	}
	for _, h := range grams {
		if sketch[h>>3]&(1<<(h&7)) == 0 {
			return false
		}
	}
	return true
}

// migrateGrams builds the blocks' trigram sketches (schema 6).
func migrateGrams(tx Tx) error {
	if _, ok := tx.(boltTx); !ok {
		return nil
	}
	gb, err := tx.CreateBucketIfNotExists(bSumGram)
	if err != nil {
		return err
	}
	tb := tx.Bucket(bSumText)
	if tb == nil {
		return nil
	}
	return tb.ForEach(func(k, v []byte) error {
		rows, err := decodeBlock(v)
		if err != nil {
			return fmt.Errorf("search text block %x: %w", k, err)
		}
		sketch := make([]byte, gramBytes)
		for _, r := range rows {
			addGrams(sketch, r.text)
		}
		return gb.Put(k, sketch)
	})
}

// probeSteps bounds the look for a row beyond a page (More, Less): past
// it the answer is "maybe", and the list finds out with its next page.
const probeSteps = 4096

// migrateList makes the list's buckets (schema 5); a file that has
// reservations already gets its indexes from the fill that runs at open,
// in chunks (pagefill.go).
func migrateList(tx Tx) error {
	if _, ok := tx.(boltTx); !ok {
		return nil // PostgreSQL keeps its list table (pagepg.go)
	}
	for _, b := range pageBuckets {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if rb := tx.Bucket(bReservation); rb != nil {
		if k, _ := rb.Cursor().First(); k != nil {
			return startFill(tx, listFillName)
		}
	}
	return nil
}

// listFillName names the fill of the reservation list's indexes.
const listFillName = "reservation-list"

// listIndexes are the list's sort indexes and the two filtered ones.
var listIndexes = []struct {
	b    []byte
	col  SortBy
	only func(*Summary) bool
}{
	{bSumIdx[SortCreated], SortCreated, nil}, {bSumIdx[SortInvoice], SortInvoice, nil},
	{bSumIdx[SortCustomer], SortCustomer, nil}, {bSumIdx[SortAmount], SortAmount, nil},
	{bSumIdx[SortState], SortState, nil},
	{bSumUnknown, SortCreated, func(s *Summary) bool { return s.OutcomeUnknown }},
	{bSumMissing, SortCreated, OrderMissing},
}

// putSummary brings the reservation list in line with a reservation's
// new row s; old is its row before (nil: a new reservation), row its list
// row (reservationRecord). On bbolt the list's indexes follow and the rows
// are read from the reservation records (resBolt). On the kv PostgreSQL
// the summaries bucket keeps the rows and the list table follows it by
// itself (pagepg.go).
func putSummary(tx Tx, row resRow, old *Summary, s Summary) error {
	if _, bolt := tx.(boltTx); !bolt {
		return tx.Bucket(bSummary).Put([]byte(s.Key), kvlayout.EncodeSummary(s))
	}
	if row.id == noRow {
		return nil // a file before schema 5, being migrated
	}
	var x indexer
	return x.index(tx, row, old, &s)
}

// resRow is a reservation's list row on bbolt: its ID (noRow: the file
// has no list yet) and whether it is new, not indexed before.
type resRow struct {
	id    uint32
	fresh bool
}

// reservationRecord is r's record and its list row. On bbolt the record
// names the row (kvlayout.EncodeReservationRow), so that the file keeps
// no key → row ID entry for it: the row the record before (prev, nil for
// none) named, or the entry an older record had, which goes, or a new
// row.
func reservationRecord(tx Tx, r *Reservation, prev []byte) ([]byte, resRow, error) {
	rows := tx.Bucket(bSumRow)
	if _, bolt := tx.(boltTx); !bolt || rows == nil {
		return kvlayout.EncodeReservation(r), resRow{id: noRow}, nil
	}
	key := []byte(r.Key)
	id, entry := recordRow(rows, key, prev)
	switch {
	case entry:
		return kvlayout.EncodeReservationRow(r, id), resRow{id: id}, rows.Delete(key)
	case id != noRow:
		return kvlayout.EncodeReservationRow(r, id), resRow{id: id}, nil
	}
	n, err := rows.NextSequence()
	if err != nil {
		return nil, resRow{}, err
	}
	id = uint32(n - 1)
	return kvlayout.EncodeReservationRow(r, id), resRow{id: id, fresh: true}, nil
}

// recordRow is the list row of the reservation record v under key: the
// one it names, or else its key → row ID entry (an older record's: entry
// is set); noRow when it has none.
func recordRow(rows Bucket, key, v []byte) (id uint32, entry bool) {
	if id, ok := kvlayout.ReservationRow(v); ok {
		return id, false
	}
	if e := rows.Get(key); len(e) == 4 {
		return binary.BigEndian.Uint32(e), true
	}
	return noRow, false
}

// summaryRows is where the reservations' list rows are read: the
// reservation records on bbolt, the summaries bucket on the kv PostgreSQL.
func summaryRows(tx Tx) (Bucket, func(k, v []byte) (Summary, error)) {
	if _, bolt := tx.(boltTx); bolt {
		return tx.Bucket(bReservation), func(k, v []byte) (Summary, error) { return kvlayout.SummaryOf(string(k), v) }
	}
	return tx.Bucket(bSummary), func(_, v []byte) (Summary, error) { return kvlayout.DecodeSummary(v) }
}

// oldSummary is the row of the reservation record prev, as it was before a
// write replaces it, for the list's indexes on bbolt (nil: no record, or
// not bbolt).
func oldSummary(tx Tx, key string, prev []byte) (*Summary, error) {
	if _, bolt := tx.(boltTx); !bolt || prev == nil {
		return nil, nil
	}
	s, err := kvlayout.SummaryOf(key, prev)
	if err != nil {
		return nil, fmt.Errorf("reservation %s: %w", key, err)
	}
	return &s, nil
}

// unindexSummary takes a reservation about to be deleted out of the
// list's indexes (bbolt).
func unindexSummary(tx Tx, key string) error {
	v := tx.Bucket(bReservation).Get([]byte(key))
	old, err := oldSummary(tx, key, v)
	rows := tx.Bucket(bSumRow)
	if err != nil || old == nil || rows == nil {
		return err
	}
	id, _ := recordRow(rows, []byte(key), v)
	if id == noRow {
		return nil // never indexed
	}
	var x indexer
	return x.index(tx, resRow{id: id}, old, nil)
}

// indexer holds the buffers of index writes.
type indexer struct {
	f          fold.Folder
	pos, opos  []byte
	text, otxt []byte
}

func (x *indexer) index(tx Tx, row resRow, old, s *Summary) error {
	cur := s
	if cur == nil {
		cur = old
	}
	if cur == nil {
		return nil
	}
	key := []byte(cur.Key)
	id := row.id
	if row.fresh {
		old = nil // not indexed before
	}
	val := appendIndexValue(make([]byte, 0, 8), id, key)
	for col := SortBy(0); col < SortCount; col++ {
		// New reservations come in time order: the created index grows at
		// its end, and moveEntry fills its pages while it does.
		b := tx.Bucket(bSumIdx[col])
		if err := x.move(b, col, old, s, val, nil); err != nil {
			return err
		}
	}
	if err := x.move(tx.Bucket(bSumUnknown), SortCreated, old, s, val, func(s *Summary) bool { return s.OutcomeUnknown }); err != nil {
		return err
	}
	if err := x.move(tx.Bucket(bSumMissing), SortCreated, old, s, val, OrderMissing); err != nil {
		return err
	}
	// The search text changes seldom (a new reservation, its order joining,
	// a capture's invoice number): most writes (a state change) skip this.
	x.text = x.text[:0]
	if s != nil {
		x.text = append(AppendSearchText(x.text, s, &x.f), '\n')
	}
	if old != nil && s != nil {
		x.otxt = append(AppendSearchText(x.otxt[:0], old, &x.f), '\n')
		if bytes.Equal(x.otxt, x.text) {
			return nil
		}
	}
	if s == nil {
		// An older record's key → row ID entry.
		if err := tx.Bucket(bSumRow).Delete(key); err != nil {
			return err
		}
	}
	tb := tx.Bucket(bSumText)
	FillPages(tb) // blocks are numbered by row ID, which only grows
	return setRowText(tb, id, key, x.text)
}

// noRow is rowID's answer for a row that has none and gets none.
const noRow = ^uint32(0)

// rowID is a list row's ID (rows: key → ID), a new one (fresh) for a key
// that has none when add is set, else noRow.
// own, when set, spares looks at the bucket's end (ownedValues.fillAtEnd).
func rowID(rows Bucket, key []byte, add bool, own *ownedValues) (id uint32, fresh bool, err error) {
	if v := rows.Get(key); len(v) == 4 {
		return binary.BigEndian.Uint32(v), false, nil
	}
	if !add {
		return noRow, false, nil
	}
	n, err := rows.NextSequence()
	if err != nil {
		return 0, false, err
	}
	id = uint32(n - 1)
	own.fillAtEnd(rows, key)
	return id, true, rows.Put(key, binary.BigEndian.AppendUint32(nil, id))
}

// moveEntry replaces an index entry at opos (nil: none) by one at pos
// (nil: none) with value val, filling the index's pages while this
// transaction's entries go to its end (fillAtEnd) or, with group > 0, to
// the end of their group, the positions' first group bytes
// (fillAtGroupEnd).
func moveEntry(b Bucket, opos, pos, val []byte, own *ownedValues, group int) error {
	if opos != nil && pos != nil && bytes.Equal(opos, pos) {
		return nil
	}
	if opos != nil {
		if err := b.Delete(opos); err != nil {
			return err
		}
	}
	if pos == nil {
		return nil
	}
	if group > 0 {
		fillAtGroupEnd(b, pos, group)
	} else {
		own.fillAtEnd(b, pos)
	}
	return b.Put(pos, val)
}

// move replaces old's entry of one index by s's. only, when set, says
// which rows the index holds (else all).
func (x *indexer) move(b Bucket, col SortBy, old, s *Summary, val []byte, only func(*Summary) bool) error {
	in := func(r *Summary) bool { return r != nil && (only == nil || only(r)) }
	var pos, opos []byte
	if in(s) {
		x.pos = domain.PosKey(x.pos[:0], col, s)
		pos = x.pos
	}
	if in(old) {
		x.opos = domain.PosKey(x.opos[:0], col, old)
		opos = x.opos
	}
	group := 0
	if pos != nil && col != SortCreated {
		// The position is the column's value, the creation time (8 bytes)
		// and the packed key, whose length the value ends with: the rows
		// of one value rise in creation order.
		if n, m := binary.Uvarint(val[4:]); m > 0 {
			group = len(pos) - 8 - int(n)
		}
	}
	return moveEntry(b, opos, pos, val, nil, group)
}

// A textBlock holds the search text of up to 64 rows (row ID / 64): a
// count n, the rows' low bits (n bytes), where each row's text ends (n ×
// uint16), the length of the text (uint16), the text, each row's ended by
// '\n' (never in a query word), then the rows' keys (uvarint length +
// bytes). A row's text is at most maxSearchText+1 bytes, so a block stays
// under 64 KB.
type textRow struct {
	lo   byte
	key  []byte
	text []byte
}

func decodeBlock(v []byte) ([]textRow, error) {
	if len(v) == 0 {
		return nil, nil
	}
	n := int(v[0])
	if len(v) < 1+3*n+2 {
		return nil, kvlayout.ErrCorrupt
	}
	los, ends := v[1:1+n], v[1+n:1+3*n]
	h := int(binary.BigEndian.Uint16(v[1+3*n:]))
	text := v[3+3*n:]
	if len(text) < h {
		return nil, kvlayout.ErrCorrupt
	}
	keys := text[h:]
	text = text[:h]
	out := make([]textRow, n)
	start := 0
	for i := range n {
		end := int(binary.BigEndian.Uint16(ends[2*i:]))
		l, m := binary.Uvarint(keys)
		if end < start || end > h || m <= 0 || uint64(len(keys)-m) < l {
			return nil, kvlayout.ErrCorrupt
		}
		if los[i] > 63 || (i > 0 && los[i] <= los[i-1]) {
			return nil, kvlayout.ErrCorrupt
		}
		out[i] = textRow{lo: los[i], text: text[start:end], key: keys[m : m+int(l)]}
		keys = keys[m+int(l):]
		start = end
	}
	if len(keys) > 0 || start != h {
		return nil, kvlayout.ErrCorrupt
	}
	return out, nil
}

func encodeBlock(rows []textRow) []byte {
	n := len(rows)
	size := 3 + 3*n
	for _, r := range rows {
		size += len(r.text) + len(r.key) + binary.MaxVarintLen16
	}
	out := make([]byte, 3+3*n, size)
	out[0] = byte(n)
	h := 0
	for i, r := range rows {
		out[1+i] = r.lo
		h += len(r.text)
		binary.BigEndian.PutUint16(out[1+n+2*i:], uint16(h))
	}
	binary.BigEndian.PutUint16(out[1+3*n:], uint16(h))
	for _, r := range rows {
		out = append(out, r.text...)
	}
	for _, r := range rows {
		out = binary.AppendUvarint(out, uint64(len(r.key)))
		out = append(out, r.key...)
	}
	return out
}

// setRowText writes (text non-empty) or removes a reservation's search
// text.
func setRowText(b Bucket, id uint32, key, text []byte) error {
	return setListRowText(b, bSumGram, id, key, text, nil)
}

// setListRowText writes (text non-empty) or removes a row's search text
// in text block bucket b and its sketch in bucket gram.
// own, when set, holds the blocks and sketches the transaction wrote
// already (ownedvalues.go).
func setListRowText(b Bucket, gram []byte, id uint32, key, text []byte, own *ownedValues) error {
	bk := binary.BigEndian.AppendUint32(nil, id>>6)
	old := b.Get(bk)
	var buf []byte
	if own != nil && len(old) > 0 {
		buf = own.buffer(textOwned(gram), bk, old, len(old)+len(text)+len(key)+3+binary.MaxVarintLen16)
	}
	if nv, ok := appendRow(buf, old, byte(id&63), key, text); ok {
		// A new reservation: its row ID is the newest, its row goes last.
		if err := b.Put(bk, nv); err != nil {
			return err
		}
		own.put(textOwned(gram), bk, old, nv)
		return addRowGrams(b, gram, bk, text, own)
	}
	rows, err := decodeBlock(old)
	if err != nil {
		return fmt.Errorf("search text block %d: %w", id>>6, err)
	}
	lo := byte(id & 63)
	i := 0
	for i < len(rows) && rows[i].lo < lo {
		i++
	}
	switch {
	case i < len(rows) && rows[i].lo == lo && len(text) == 0:
		rows = append(rows[:i], rows[i+1:]...)
	case i < len(rows) && rows[i].lo == lo:
		rows[i] = textRow{lo: lo, key: key, text: text}
	case len(text) > 0:
		rows = append(rows[:i], append([]textRow{{lo: lo, key: key, text: text}}, rows[i:]...)...)
	}
	if len(rows) == 0 {
		return b.Delete(bk)
	}
	if err := addRowGrams(b, gram, bk, text, own); err != nil {
		return err
	}
	return b.Put(bk, encodeBlock(rows))
}

// textOwned names a list's text block bucket for ownedValues by its
// sketches' bucket: both lists number their blocks alike.
func textOwned(gram []byte) []byte { return append([]byte("text/"), gram...) }

// addRowGrams sets a row's grams in its block's sketch.
func addRowGrams(b Bucket, gram, bk, text []byte, own *ownedValues) error {
	gb := b.(boltBucket).Bolt.Tx().Bucket(gram)
	if gb == nil || len(text) == 0 {
		return nil
	}
	// The sketch is copied and written only when the row sets a bit it
	// lacks: a block's rows share most of their grams, and a sketch is
	// 3 KiB on a page of its own.
	old := gb.Get(bk)
	if mine := own.mine(gram, bk, old); len(mine) == gramBytes {
		// Written by this transaction already: bbolt holds this very
		// slice as the value, so setting its bits is writing it.
		eachGram(text, func(h uint32) { mine[h>>3] |= 1 << (h & 7) })
		return nil
	}
	var sketch []byte
	if len(old) != gramBytes {
		sketch = make([]byte, gramBytes)
		copy(sketch, old)
	}
	eachGram(text, func(h uint32) {
		if sketch == nil {
			if old[h>>3]&(1<<(h&7)) != 0 {
				return
			}
			sketch = bytes.Clone(old)
		}
		sketch[h>>3] |= 1 << (h & 7)
	})
	if sketch == nil {
		return nil
	}
	if err := gb.Put(bk, sketch); err != nil {
		return err
	}
	own.put(gram, bk, old, sketch)
	return nil
}

// appendRow is setRowText's way for a row after every row of the block
// (ok false: another case), written without decoding the block.
// It builds the block in buf (nil: a new slice), which must not hold v.
func appendRow(buf, v []byte, lo byte, key, text []byte) ([]byte, bool) {
	if len(v) == 0 || len(text) == 0 {
		return nil, false
	}
	n := int(v[0])
	if n == 0 || n >= 64 || len(v) < 3+3*n || v[n] >= lo {
		return nil, false
	}
	h := int(binary.BigEndian.Uint16(v[1+3*n:]))
	if len(v) < 3+3*n+h || h+len(text) > 0xffff {
		return nil, false
	}
	out := buf[:0]
	if need := len(v) + 3 + len(text) + len(key) + binary.MaxVarintLen16; cap(out) < need {
		out = make([]byte, 0, need)
	}
	out = append(out, byte(n+1))
	out = append(out, v[1:1+n]...)
	out = append(out, lo)
	out = append(out, v[1+n:1+3*n]...)
	out = binary.BigEndian.AppendUint16(out, uint16(h+len(text)))
	out = binary.BigEndian.AppendUint16(out, uint16(h+len(text)))
	out = append(out, v[3+3*n:3+3*n+h]...)
	out = append(out, text...)
	out = append(out, v[3+3*n+h:]...)
	out = binary.AppendUvarint(out, uint64(len(key)))
	return append(out, key...), true
}

// blockRowText finds one row's text in a block without decoding the block
// (nil: not there).
func blockRowText(v []byte, lo byte) []byte {
	if len(v) == 0 {
		return nil
	}
	n := int(v[0])
	if len(v) < 3+3*n {
		return nil
	}
	los, ends := v[1:1+n], v[1+n:1+3*n]
	start := 0
	for i := range n {
		end := int(binary.BigEndian.Uint16(ends[2*i:]))
		if los[i] == lo {
			text := v[3+3*n:]
			if end > len(text) || start > end {
				return nil
			}
			return text[start:end]
		}
		start = end
	}
	return nil
}

// blockMatches returns the bits (by low bits of the row ID) of the block's
// rows whose text holds every word; only the rows in mask are looked at.
func blockMatches(v []byte, words [][]byte, mask uint64) (uint64, error) {
	if len(v) == 0 {
		return 0, nil
	}
	n := int(v[0])
	if len(v) < 3+3*n {
		return 0, kvlayout.ErrCorrupt
	}
	los, ends := v[1:1+n], v[1+n:1+3*n]
	h := int(binary.BigEndian.Uint16(v[1+3*n:]))
	if len(v) < 3+3*n+h {
		return 0, kvlayout.ErrCorrupt
	}
	text := v[3+3*n : 3+3*n+h]
	all := mask
	for _, w := range words {
		var found uint64
		row, off := 0, 0
		for off < len(text) {
			j := bytes.Index(text[off:], w)
			if j < 0 {
				break
			}
			p := off + j
			for row < n && int(binary.BigEndian.Uint16(ends[2*row:])) <= p {
				row++
			}
			if row >= n {
				break
			}
			found |= 1 << (los[row] & 63)
			off = int(binary.BigEndian.Uint16(ends[2*row:])) // the rest of this row adds nothing
		}
		all &= found
		if all == 0 {
			return 0, nil
		}
	}
	return all, nil
}

func (l *boltList) rowCount(tx Tx) uint64 { return tx.Bucket(l.row).Sequence() }

// wordBits finds the rows whose text holds every word. It searches only
// the blocks whose trigram sketch allows the words and, when the query
// narrows the last one (a keystroke added to it) on the same state of the
// file, only the rows the last one found. Unless all is set it gives up
// (nil) when more than maxScanBlocks blocks would have to be searched.
func (c *pageCache) wordBits(ctx context.Context, tx boltTx, l *boltList, words []string, all bool) ([]uint64, int, error) {
	key := strings.Join(words, "\x00")
	txid := tx.Bolt.ID()
	c.mu.Lock()
	var prev []uint64
	if c.txid == txid && c.bits != nil && c.words != "" && strings.HasPrefix(key, c.words) {
		if key == c.words {
			bits, n := c.bits, c.n
			c.mu.Unlock()
			return bits, n, nil
		}
		prev = c.bits
	}
	c.mu.Unlock()
	scan := maxScanBlocks
	if c.scanBlocks > 0 {
		scan = c.scanBlocks
	}
	out, n, err := searchBlocks(ctx, tx, l, wordBytes(words), prev, all, scan)
	if err != nil || out == nil {
		return out, n, err
	}
	c.mu.Lock()
	c.txid, c.words, c.bits, c.n = txid, key, out, n
	c.mu.Unlock()
	return out, n, nil
}

// searchBlocks finds the rows whose search text holds every word: in the
// blocks whose sketches may hold them (of the rows set in prev, when not
// nil), or in every block for words too short to have a sketch. Unless all
// is set it gives up (nil, -1) when more than scan blocks may hold them.
func searchBlocks(ctx context.Context, tx boltTx, l *boltList, ws [][]byte, prev []uint64, all bool, scan int) ([]uint64, int, error) {
	grams := wordGrams(ws)
	nblocks := int((l.rowCount(tx) + 63) / 64)
	// The blocks to search.
	var blocks []uint32
	switch {
	case len(grams) > 0:
		cur := tx.Bucket(l.gram).Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			i := binary.BigEndian.Uint32(k)
			if (prev == nil || (int(i) < len(prev) && prev[i] != 0)) && hasGrams(v, grams) {
				blocks = append(blocks, i)
				if !all && len(blocks) > scan {
					return nil, -1, nil // a common word: no need to look further
				}
			}
		}
	case prev != nil:
		for i, m := range prev {
			if m != 0 {
				blocks = append(blocks, uint32(i))
			}
		}
	default:
		blocks = nil // every block
	}
	if !all && (blocks == nil && len(grams) == 0 && prev == nil || len(blocks) > scan) {
		return nil, -1, nil
	}
	out := make([]uint64, nblocks)
	n := 0
	tb := tx.Bucket(l.text)
	searched := 0
	search := func(i uint32, v []byte) error {
		if err := stopBlocks(ctx, searched); err != nil {
			return err
		}
		searched++
		mask := ^uint64(0)
		if prev != nil {
			mask = prev[i]
		}
		got, err := blockMatches(v, ws, mask)
		if err != nil {
			return fmt.Errorf("search text block %d: %w", i, err)
		}
		if int(i) < len(out) {
			out[i] = got
			n += bits.OnesCount64(got)
		}
		return nil
	}
	if blocks == nil && len(grams) == 0 && prev == nil {
		cur := tb.Cursor()
		for k, v := cur.First(); k != nil; k, v = cur.Next() {
			if err := search(binary.BigEndian.Uint32(k), v); err != nil {
				return nil, 0, err
			}
		}
	} else {
		var bk [4]byte
		for _, i := range blocks {
			binary.BigEndian.PutUint32(bk[:], i)
			if err := search(i, tb.Get(bk[:])); err != nil {
				return nil, 0, err
			}
		}
	}
	return out, n, nil
}

// stateBits finds the rows in a state: a range of the state index (or the
// outcome-unknown or order-missing index).
func (c *pageCache) stateBits(tx boltTx, l *boltList, st State) ([]uint64, error) {
	txid := tx.Bolt.ID()
	c.mu.Lock()
	if c.stateTx == txid && c.state == st && c.stateSet != nil {
		b := c.stateSet
		c.mu.Unlock()
		return b, nil
	}
	c.mu.Unlock()
	out := make([]uint64, (l.rowCount(tx)+63)/64)
	r := indexRange{}
	r.cur, r.prefix = l.stateRange(tx, st)
	r.from = r.prefix
	if err := r.walk(func(_ []byte, id uint32) { setBit(out, id) }); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.stateTx, c.state, c.stateSet = txid, st, out
	c.mu.Unlock()
	return out, nil
}

// stateRange is the index and key prefix that hold a state's rows in
// creation order.
func stateRange(tx Tx, st State) (Cursor, []byte) {
	switch st {
	case StateOutcomeUnknown:
		return tx.Bucket(bSumUnknown).Cursor(), nil
	case StateOrderMissing:
		return tx.Bucket(bSumMissing).Cursor(), nil
	}
	return tx.Bucket(bSumIdx[SortState]).Cursor(), []byte{domain.StateRank(st)}
}

func (c *pageCache) cachedState(tx boltTx, st State) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stateTx == tx.Bolt.ID() && c.state == st {
		return c.stateSet
	}
	return nil
}

func hasBit(set []uint64, id uint32) bool {
	return int(id>>6) < len(set) && set[id>>6]&(1<<(id&63)) != 0
}

func popCount(set []uint64) int {
	n := 0
	for _, w := range set {
		n += bits.OnesCount64(w)
	}
	return n
}

func and(a, b []uint64) []uint64 {
	out := make([]uint64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] & b[i]
	}
	return out
}

// keyRow and keyPage are a page of a bbolt list as its indexes give it:
// positions and keys; pageRows reads the records.
type keyRow struct {
	pos []byte
	key string
	v   []byte // the record, when the page came with it (PostgreSQL)
}

type keyPage struct {
	rows       []keyRow
	total      int
	more, less bool
}

// boltPage answers a page query from a list's indexes.
func (c *pageCache) boltPage(ctx context.Context, tx boltTx, l *boltList, q PageQuery) (keyPage, error) {
	if tx.Bucket(l.row) == nil {
		return keyPage{}, fmt.Errorf("the file has no list indexes (an older schema)")
	}
	words := q.SearchWords()
	if len(words) == 0 && !q.HasCond() {
		p, _, err := walkRange(tx.Bucket(l.idx[q.Sort]).Cursor(), nil, q, nil, 0)
		p.total = int(metaCount(tx.Bucket(bMeta), l.count))
		return p, err
	}
	var set []uint64
	total := -1
	if len(words) > 0 {
		b, n, err := c.wordBits(ctx, tx, l, words, false)
		if err != nil {
			return keyPage{}, err
		}
		if b == nil {
			// A common word: rows are checked as the sort index is walked,
			// until the page is full; the count comes by itself. A word
			// rarer than it looked (the walk goes on and on) is searched
			// for in every block after all.
			budget := walkBudget
			if c.walk > 0 {
				budget = c.walk
			}
			p, done, err := walkRange(tx.Bucket(l.idx[q.Sort]).Cursor(), nil, q, textKeep(tx, l, wordBytes(words), &q), budget)
			if err != nil {
				return keyPage{}, err
			}
			if done {
				p.total = -1
				return p, nil
			}
			if b, n, err = c.wordBits(ctx, tx, l, words, true); err != nil {
				return keyPage{}, err
			}
		}
		set, total = b, n
	}
	if q.HasCond() {
		sb := c.cachedCond(tx, &q)
		if sb == nil && set == nil && q.Sort == SortCreated && !q.HasWhere() {
			// A state in creation order is a range of its index.
			cur, prefix := l.stateRange(tx, q.State)
			p, _, err := walkRange(cur, prefix, q, nil, 0)
			p.total = -1
			return p, err
		}
		if sb == nil {
			var err error
			if sb, err = c.condBits(ctx, tx, l, &q); err != nil {
				return keyPage{}, err
			}
		}
		if set == nil {
			set = sb
		} else {
			set = and(set, sb)
		}
		total = popCount(set)
	}
	small := smallSet
	if c.small > 0 {
		small = c.small
	}
	if total <= small {
		return sortedSet(tx, l, set, q)
	}
	p, err := walkIndex(tx, l, q, set)
	p.total = total
	return p, err
}

// walkBudget is how many index entries a page walks for a common word
// before it searches every block instead (a word in one row in a thousand
// fills a page of 200 in 200,000 entries: the blocks are faster then).
const walkBudget = 30_000

// boltCount counts the rows that pass the filter: the whole search, or
// with upTo > 0 the blocks in order until upTo rows are found (the first
// count of a common word, "10,000+").
func (c *pageCache) boltCount(ctx context.Context, tx boltTx, l *boltList, q PageQuery, upTo int) (int, error) {
	words := q.SearchWords()
	if len(words) == 0 && !q.HasCond() {
		return int(metaCount(tx.Bucket(bMeta), l.count)), nil
	}
	if upTo > 0 && len(words) > 0 {
		if n, ok, err := c.countUpTo(ctx, tx, l, words, &q, upTo); ok || err != nil {
			return n, err
		}
	}
	var set []uint64
	if len(words) > 0 {
		b, _, err := c.wordBits(ctx, tx, l, words, true)
		if err != nil {
			return 0, err
		}
		set = b
	}
	if q.HasCond() {
		sb, err := c.condBits(ctx, tx, l, &q)
		if err != nil {
			return 0, err
		}
		if set == nil {
			set = sb
		} else {
			set = and(set, sb)
		}
	}
	return popCount(set), nil
}

// stopBlocks is ctx's error every 64 text blocks a search reads (4,096
// rows): a search of a million rows stops within a few milliseconds of
// its reader giving up.
func stopBlocks(ctx context.Context, n int) error {
	if n%64 != 63 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("stopped after %d blocks: %w", n+1, err)
	}
	return nil
}

// countUpTo counts matching rows block by block until upTo; ok is false
// when the search of the words is known already (the whole count is then
// at hand).
func (c *pageCache) countUpTo(ctx context.Context, tx boltTx, l *boltList, words []string, q *PageQuery, upTo int) (int, bool, error) {
	c.mu.Lock()
	known := c.txid == tx.Bolt.ID() && c.words == strings.Join(words, "\x00") && c.bits != nil
	c.mu.Unlock()
	if known {
		return 0, false, nil
	}
	ws := wordBytes(words)
	grams := wordGrams(ws)
	gb, sb := tx.Bucket(l.gram), tx.Bucket(l.records)
	var f fold.Folder
	n := 0
	cur := tx.Bucket(l.text).Cursor()
	blocks := 0
	for k, v := cur.First(); k != nil && n < upTo; k, v = cur.Next() {
		if err := stopBlocks(ctx, blocks); err != nil {
			return 0, true, err
		}
		blocks++
		if len(grams) > 0 && !hasGrams(gb.Get(k), grams) {
			continue
		}
		m, err := blockMatches(v, ws, ^uint64(0))
		if err != nil || m == 0 {
			if err != nil {
				return 0, true, fmt.Errorf("search text block %x: %w", k, err)
			}
			continue
		}
		if !q.HasCond() {
			n += bits.OnesCount64(m)
			continue
		}
		rows, err := decodeBlock(v)
		if err != nil {
			return 0, true, fmt.Errorf("search text block %x: %w", k, err)
		}
		for _, r := range rows {
			if m&(1<<(r.lo&63)) != 0 && l.keep(r.key, sb.Get(r.key), q, &f) {
				n++
			}
		}
	}
	return min(n, upTo), true, nil
}

// textKeep checks a row's search text (and state) as an index is walked.
func textKeep(tx Tx, l *boltList, words [][]byte, q *PageQuery) func(k, v []byte) bool {
	tb, sb := tx.Bucket(l.text), tx.Bucket(l.records)
	var f fold.Folder
	var bk [4]byte
	var key []byte // the row's key, read into one buffer row by row
	return func(k, v []byte) bool {
		if len(v) < 4 {
			return false
		}
		id := binary.BigEndian.Uint32(v)
		binary.BigEndian.PutUint32(bk[:], id>>6)
		text := blockRowText(tb.Get(bk[:]), byte(id&63))
		if text == nil || !containsAll(text, words) {
			return false
		}
		if !q.HasCond() {
			return true
		}
		var err error
		key, err = entryKey(key[:0], k, v)
		return err == nil && l.keep(key, sb.Get(key), q, &f)
	}
}

// sortedSet reads the few rows of set and sorts them in memory.
func sortedSet(tx Tx, l *boltList, set []uint64, q PageQuery) (keyPage, error) {
	var rows []keyRow
	tb, sb := tx.Bucket(l.text), tx.Bucket(l.records)
	var bk [4]byte
	for i, m := range set {
		if m == 0 {
			continue
		}
		binary.BigEndian.PutUint32(bk[:], uint32(i))
		block, err := decodeBlock(tb.Get(bk[:]))
		if err != nil {
			return keyPage{}, fmt.Errorf("search text block %d: %w", i, err)
		}
		for _, r := range block {
			if m&(1<<(r.lo&63)) == 0 {
				continue
			}
			v := sb.Get(r.key)
			if v == nil {
				continue
			}
			pos, err := l.pos(nil, q.Sort, r.key, v)
			if err != nil {
				return keyPage{}, fmt.Errorf("record %s: %w", r.key, err)
			}
			rows = append(rows, keyRow{pos: pos, key: string(r.key)})
		}
	}
	slices.SortFunc(rows, func(a, b keyRow) int { return bytes.Compare(a.pos, b.pos) })
	if q.Desc {
		slices.Reverse(rows)
	}
	from, to := window(len(rows), func(i int) []byte { return rows[i].pos }, &q)
	return keyPage{rows: rows[from:to], total: len(rows), less: from > 0, more: to < len(rows)}, nil
}

// walkIndex walks the sort column's index from the query's cursor and keeps
// the rows in set.
func walkIndex(tx Tx, l *boltList, q PageQuery, set []uint64) (keyPage, error) {
	keep := func(_, v []byte) bool { return len(v) >= 4 && hasBit(set, binary.BigEndian.Uint32(v)) }
	p, _, err := walkRange(tx.Bucket(l.idx[q.Sort]).Cursor(), nil, q, keep, 0)
	return p, err
}

// valueRows decodes a page that came with its records (PostgreSQL) into a
// list's rows.
func valueRows[R, T any](p keyPage, dec func([]byte) (T, error), row func(T, []byte) R) ([]R, error) {
	if len(p.rows) == 0 {
		return nil, nil
	}
	out := make([]R, 0, len(p.rows))
	for _, r := range p.rows {
		t, err := dec(r.v)
		if err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		out = append(out, row(t, r.pos))
	}
	return out, nil
}

// pageRows reads a key page's records (decoded by dec) into a list's rows
// (made by row).
func pageRows[R, T any](tx Tx, l *boltList, p keyPage, dec func(key, v []byte) (T, error), row func(T, []byte) R) ([]R, error) {
	if len(p.rows) == 0 {
		return nil, nil
	}
	b := tx.Bucket(l.records)
	out := make([]R, 0, len(p.rows))
	for _, r := range p.rows {
		v := b.Get([]byte(r.key))
		if v == nil {
			return nil, fmt.Errorf("index entry of %s without a record: %w", r.key, kvlayout.ErrCorrupt)
		}
		t, err := dec([]byte(r.key), v)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", r.key, err)
		}
		out = append(out, row(t, r.pos))
	}
	return out, nil
}

// walkRange walks the index entries under prefix (keys prefix + position,
// values row ID + key) from the query's cursor, in the query's order, and
// returns the positions and keys of up to Limit entries keep accepts.
// With a budget > 0 it gives up (done false) after that many entries
// without filling the page.
func walkRange(cur Cursor, prefix []byte, q PageQuery, keep func(k, v []byte) bool, budget int) (keyPage, bool, error) {
	asc := !q.Desc
	in := func(k []byte) []byte {
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return nil
		}
		return k
	}
	// step moves one row on in the list's order (fwd) or back.
	step := func(fwd bool) ([]byte, []byte) {
		var k, v []byte
		if fwd == asc {
			k, v = cur.Next()
		} else {
			k, v = cur.Prev()
		}
		return in(k), v
	}
	// end places the cursor on the list's first row (start) or last.
	end := func(start bool) ([]byte, []byte) {
		if start == asc {
			k, v := cur.Seek(prefix)
			return in(k), v
		}
		if len(prefix) == 0 {
			k, v := cur.Last()
			return in(k), v
		}
		after := append(bytes.Clone(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1)
		if k, _ := cur.Seek(after); k == nil {
			k, v := cur.Last()
			return in(k), v
		}
		k, v := cur.Prev()
		return in(k), v
	}
	// from places the cursor on the first row strictly beyond pos, going
	// fwd in the list's order.
	from := func(pos []byte, fwd bool) ([]byte, []byte) {
		full := append(bytes.Clone(prefix), pos...)
		k, v := cur.Seek(full)
		up := fwd == asc // moving to larger keys
		switch {
		case up && k != nil && bytes.Equal(k, full):
			return step(fwd)
		case up:
			return in(k), v
		case k == nil:
			k, v = cur.Last()
			return in(k), v
		}
		k, v = cur.Prev()
		return in(k), v
	}
	at := func(pos []byte) ([]byte, []byte) {
		full := append(bytes.Clone(prefix), pos...)
		k, v := cur.Seek(full)
		if k != nil && bytes.Equal(k, full) {
			return k, v
		}
		return nil, nil
	}
	ok := func(k, v []byte) bool { return len(v) >= 4 && (keep == nil || keep(k, v)) }
	lim := q.PageSize()
	var k, v []byte
	fwd := true
	var anchor []byte // where the page starts, for the look the other way
	atAnchor := false // the anchor's own row is on the page (From)
	switch {
	case q.After != nil:
		k, v = from(q.After, true)
		anchor = q.After
	case q.From != nil:
		if k, v = at(q.From); k == nil {
			k, v = from(q.From, true)
		}
		anchor, atAnchor = q.From, true
	case q.Before != nil:
		fwd = false
		k, v = from(q.Before, false)
		anchor = q.Before
	case q.Last:
		fwd = false
		k, v = end(false)
	default:
		k, v = end(true)
	}
	var rows []keyRow
	var key []byte // each row's key, unpacked into one buffer
	for n := 0; k != nil && len(rows) < lim; k, v = step(fwd) {
		if n++; budget > 0 && n > budget {
			return keyPage{}, false, nil
		}
		if ok(k, v) {
			var err error
			if key, err = entryKey(key[:0], k, v); err != nil {
				return keyPage{}, false, err
			}
			rows = append(rows, keyRow{pos: bytes.Clone(k[len(prefix):]), key: string(key)})
		}
	}
	// One more row this way?
	beyond := false
	for n := 0; k != nil && n < probeSteps; k, v = step(fwd) {
		if ok(k, v) {
			beyond = true
			break
		}
		n++
	}
	if k != nil && !beyond {
		beyond = true // not found within the probe: maybe
	}
	// And one the other way from the anchor?
	behind := false
	if anchor != nil {
		// A row at the anchor itself (from skips it) counts as behind.
		if kk, vv := at(anchor); !atAnchor && kk != nil && ok(kk, vv) {
			behind = true
		}
		k, v = from(anchor, !fwd)
		for n := 0; !behind && k != nil && n < probeSteps; k, v = step(!fwd) {
			if ok(k, v) {
				behind = true
			}
			n++
		}
		if k != nil && !behind {
			behind = true
		}
	}
	if !fwd {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
		beyond, behind = behind, beyond
	}
	return keyPage{more: beyond, less: behind, rows: rows}, true, nil
}
