package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"paydesk/internal/fold"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// The transaction list, paged and filtered in the store like the
// reservation list (page.go): a PageQuery whose Sort is one of the TxSort
// orders, the same cursors, the same filter (every word in the row's
// search text), and State, when set, a Kind. On bbolt it has the same
// kind of indexes as the reservations (pagebolt.go's boltList, kept in
// the transaction that writes the record: writeTxRecord); on PostgreSQL a
// list table (pagepg.go).

// keepTx applies a transaction list's State: a Kind, or "" for all.
func keepTx(t *Transaction, st State) bool { return st == "" || Kind(st) == t.Kind }

// PageTransactions answers q over transactions held in memory: a store
// without the list's indexes, a test's fake, and the reference the
// stores' tests compare with.
func PageTransactions(all []*Transaction, q PageQuery) TxPage {
	words := wordBytes(q.SearchWords())
	var f fold.Folder
	var text []byte
	rows := make([]TxPageRow, 0, len(all))
	for _, t := range all {
		if !keepTxWhere(t, &q, &f) {
			continue
		}
		if len(words) > 0 {
			text = AppendTxSearchText(text[:0], t, &f)
			if !containsAll(text, words) {
				continue
			}
		}
		rows = append(rows, TxPageRow{Tx: t, Pos: domain.TxPosKey(nil, q.Sort, t)})
	}
	slices.SortFunc(rows, func(a, b TxPageRow) int { return bytes.Compare(a.Pos, b.Pos) })
	if q.Desc {
		slices.Reverse(rows)
	}
	from, to := window(len(rows), func(i int) []byte { return rows[i].Pos }, &q)
	p := TxPage{Total: len(rows), Less: from > 0, More: to < len(rows)}
	if to > from {
		p.Rows = rows[from:to:to]
	}
	return p
}

// The transaction list's buckets on bbolt (schema 7), like the
// reservations' (pagebolt.go). A kind (State) is a range of the kind
// index, in creation order within it.
var (
	bTxIdx = [TxSortCount][]byte{
		TxSortCreated:  []byte("txidx.created"),
		TxSortKind:     []byte("txidx.kind"),
		TxSortInvoice:  []byte("txidx.invoice"),
		TxSortCustomer: []byte("txidx.customer"),
		TxSortAmount:   []byte("txidx.amount"),
		TxSortStatus:   []byte("txidx.status"),
	}
	bTxRow  = []byte("txrow")  // key → row ID (4 bytes)
	bTxText = []byte("txtext") // row ID / 64 → text block
	bTxGram = []byte("txgram") // row ID / 64 → the block's sketch
	// bTxGroup is the gift card groups: group key 0x00 member key → nil
	// (the transaction detail's group, without reading every transaction).
	bTxGroup = []byte("txgroup")
)

var txPageBuckets = append(bTxIdx[:], bTxRow, bTxText, bTxGram, bTxGroup)

// txBolt is the transaction list on bbolt.
var txBolt = &boltList{
	records: bTransaction, idx: bTxIdx[:], row: bTxRow, text: bTxText, gram: bTxGram, count: kTransactionCount,
	pos: func(dst []byte, col SortBy, v []byte) ([]byte, error) {
		t, err := kvlayout.DecodeTx(v)
		if err != nil {
			return nil, err
		}
		return domain.TxPosKey(dst, col, t), nil
	},
	keep: func(v []byte, q *PageQuery, f *fold.Folder) bool {
		t, err := kvlayout.DecodeTx(v)
		return err == nil && keepTxWhere(t, q, f)
	},
	stateRange: func(tx Tx, st State) (Cursor, []byte) {
		return tx.Bucket(bTxIdx[TxSortKind]).Cursor(), domain.AppendSortString(nil, string(st))
	},
}

// TransactionPage returns one window of the transaction list, sorted and
// filtered in the store (q.Sort is a TxSort order, q.State a Kind or "").
func (db *DB) TransactionPage(ctx context.Context, q PageQuery) (TxPage, error) {
	if err := q.Where.Check(TransactionFilter); err != nil {
		return TxPage{}, fmt.Errorf("transaction list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.TransactionPage(ctx, q)
	}
	p, err := txList.memPage(ctx, db, q)
	return TxPage{Rows: p.rows, Total: p.total, More: p.more, Less: p.less}, err
}

// TransactionCount counts the transactions that pass q's filter and
// state, up to q.Limit when it is > 0 (see ReservationCount).
func (db *DB) TransactionCount(ctx context.Context, q PageQuery) (int, error) {
	if err := q.Where.Check(TransactionFilter); err != nil {
		return 0, fmt.Errorf("transaction list: %w", err)
	}
	if ls := db.repo.Capabilities().Lists; ls != nil {
		return ls.TransactionCount(ctx, q)
	}
	return txList.memCount(ctx, db, q)
}

// txList is the transaction list.
var txList = &storeList[TxPageRow, *Transaction]{
	name: "transaction", sorts: TxSortCount, bolt: txBolt, pg: pgTransactions,
	cache: func(db *DB) *pageCache { return &db.txPages },
	dec:   kvlayout.DecodeTx,
	row:   func(t *Transaction, pos []byte) TxPageRow { return TxPageRow{Tx: t, Pos: pos} },
	mem: func(ctx context.Context, db *DB, q PageQuery) (listPage[TxPageRow], error) {
		all, err := db.Transactions(ctx)
		p := PageTransactions(all, q)
		return listPage[TxPageRow]{rows: p.Rows, total: p.Total, more: p.More, less: p.Less}, err
	},
}

// writeTxRecord writes a transaction's record and, on bbolt, brings the
// list's indexes in line with it (from the record it replaces). Every
// write of a transaction record goes through here. On PostgreSQL the list
// table follows the transactions bucket by itself (pagepg.go).
func writeTxRecord(tx Tx, t *Transaction) error {
	k := []byte(t.Key)
	b := tx.Bucket(bTransaction)
	_, bolt := tx.(boltTx)
	var old *Transaction
	if bolt {
		if v := b.Get(k); v != nil {
			o, err := kvlayout.DecodeTx(v)
			if err != nil {
				return fmt.Errorf("transaction %s: %w", k, err)
			}
			old = o
		}
	}
	if err := b.Put(k, kvlayout.EncodeTx(t)); err != nil {
		return err
	}
	if !bolt {
		return nil
	}
	return indexTx(tx, old, t)
}

// indexTx moves a transaction's index entries from old's to t's.
func indexTx(tx Tx, old, t *Transaction) error {
	rows := tx.Bucket(bTxRow)
	if rows == nil {
		return nil // a file before schema 7, being migrated
	}
	key := []byte(t.Key)
	id, fresh, err := rowID(rows, key, true)
	if err != nil {
		return err
	}
	if fresh {
		old = nil
	}
	val := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(key)), id)
	val = append(val, key...)
	var pos, opos []byte
	for col := SortBy(0); col < TxSortCount; col++ {
		pos = domain.TxPosKey(pos[:0], col, t)
		var op []byte
		if old != nil {
			opos = domain.TxPosKey(opos[:0], col, old)
			op = opos
		}
		b := tx.Bucket(bTxIdx[col])
		if col == TxSortCreated {
			// New transactions come in time order: this index grows at
			// its end, so its pages are filled before they split.
			fillPages(b)
		}
		if err := moveEntry(b, op, pos, val); err != nil {
			return err
		}
	}
	if err := indexTxGroup(tx, old, t); err != nil {
		return err
	}
	var f fold.Folder
	text := append(AppendTxSearchText(nil, t, &f), '\n')
	if old != nil && bytes.Equal(text, append(AppendTxSearchText(nil, old, &f), '\n')) {
		return nil
	}
	tb := tx.Bucket(bTxText)
	fillPages(tb) // blocks are numbered by row ID, which only grows
	return setListRowText(tb, bTxGram, id, key, text)
}

// indexTxGroup keeps the group index: a gift card payment under its
// group, and the group's own payment under itself.
func indexTxGroup(tx Tx, old, t *Transaction) error {
	gb := tx.Bucket(bTxGroup)
	if gb == nil {
		return nil
	}
	if old != nil && old.Group != "" && old.Group != t.Group {
		if err := gb.Delete(pairKey(old.Group, old.Key)); err != nil {
			return err
		}
	}
	if t.Group == "" {
		return nil
	}
	if err := gb.Put(pairKey(t.Group, t.Key), nil); err != nil {
		return err
	}
	return nil
}

// txListFillName names the fill of the transaction list's indexes.
const txListFillName = "transaction-list"

// migrateTxList makes the transaction list's buckets (schema 7); a file
// that has transactions gets its indexes from the fill at open, in
// chunks (pagefill.go), not in the migration's one transaction.
func migrateTxList(tx Tx) error {
	if _, ok := tx.(boltTx); !ok {
		return nil // PostgreSQL: no list table for transactions yet
	}
	for _, b := range txPageBuckets {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if tb := tx.Bucket(bTransaction); tb != nil {
		if k, _ := tb.Cursor().First(); k != nil {
			return startFill(tx, txListFillName)
		}
	}
	return nil
}

// txListFill is the fill of the transaction list's indexes: row IDs,
// search text and groups in the records' key order, then each sort index.
func txListFill() []fillStep {
	steps := []fillStep{{
		name: "rows and search text",
		run: func(tx Tx, after []byte, n int, _ any) ([]byte, error) {
			rows, tb := tx.Bucket(bTxRow), tx.Bucket(bTxText)
			var f fold.Folder
			var text []byte
			return walkFrom(tx.Bucket(bTransaction), after, n, func(k, v []byte) error {
				if kvlayout.IsPushIndexKey(k) {
					return nil
				}
				t, err := kvlayout.DecodeTx(v)
				if err != nil {
					return fmt.Errorf("transaction %s: %w", k, err)
				}
				id, fresh, err := rowID(rows, k, true)
				if err != nil || !fresh {
					return err // a chunk done again after a cut: done already
				}
				if err := indexTxGroup(tx, nil, t); err != nil {
					return err
				}
				text = append(AppendTxSearchText(text[:0], t, &f), '\n')
				return setListRowText(tb, bTxGram, id, k, text)
			})
		},
	}}
	for col := SortBy(0); col < TxSortCount; col++ {
		steps = append(steps, indexStep("index "+string(bTxIdx[col]), bTxIdx[col], func(tx Tx, add func(k, v []byte)) error {
			rows := tx.Bucket(bTxRow)
			var pos, val []byte
			return tx.Bucket(bTransaction).ForEach(func(k, v []byte) error {
				if kvlayout.IsPushIndexKey(k) {
					return nil
				}
				t, err := kvlayout.DecodeTx(v)
				if err != nil {
					return fmt.Errorf("transaction %s: %w", k, err)
				}
				pos = domain.TxPosKey(pos[:0], col, t)
				val = append(append(val[:0], rows.Get(k)...), k...)
				add(pos, val)
				return nil
			})
		}))
	}
	return steps
}

// pgTransactions is the transaction list's table (0006).
var pgTransactions = (&pgList{
	table: "paydesk_txlist", fill: "paydesk_txlist_fill", bucket: bTransaction, count: kTransactionCount,
	columns: []string{"k", "created", "kind", "invoice", "customer", "amount", "status", "grp", "search", "v"},
	sortCols: []string{
		TxSortCreated:  "created, k",
		TxSortKind:     "kind, created, k",
		TxSortInvoice:  "invoice, created, k",
		TxSortCustomer: "customer, created, k",
		TxSortAmount:   "amount, created, k",
		TxSortStatus:   "status, created, k",
	},
	kinds: []domain.ColKind{TxSortCreated: domain.ColNone, TxSortKind: domain.ColString, TxSortInvoice: domain.ColString, TxSortCustomer: domain.ColString,
		TxSortAmount: domain.ColInt64, TxSortStatus: domain.ColInt64},
	skip: kvlayout.IsPushIndexKey,
	args: func(k, v []byte, f *fold.Folder) []any {
		t, err := kvlayout.DecodeTx(v)
		if err != nil {
			return nil
		}
		return []any{k, t.Created.UnixNano(), sortBytes(string(t.Kind)), sortBytes(t.Invoice), sortBytes(strings.ToLower(t.CustomerName)),
			t.Amount.Shift(2).IntPart(), int64(t.Status.Code), []byte(t.Group), postgres.SearchText(AppendTxSearchText(nil, t, f)), v}
	},
	pos: txBolt.pos,
	state: func(st State, arg func(any) string) string {
		return "kind = " + arg(sortBytes(string(st)))
	},
	whereCols: &postgres.SQLCols{Amount: "amount", Created: "created", Cents: true, Nanos: true,
		Customer: domain.TxFieldCustomer, Email: -1, Service: domain.TxFieldService},
}).init()

// txGroup reads a gift card group from the list table, in the
// transaction: the payment whose key is group and the ones whose group
// it is.
func (t *pgTx) txGroup(group string) ([]*Transaction, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT v FROM paydesk_txlist WHERE grp = $1 OR k = $1`, []byte(group))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Transaction
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		tr, err := kvlayout.DecodeTx(v)
		if err != nil {
			return nil, fmt.Errorf("transaction: %w", err)
		}
		out = append(out, tr)
	}
	return out, rows.Err()
}
