package kv

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

// The transaction list's buckets on bbolt (schema 7), like the
// reservations' (pagebolt.go). A kind (State) is a range of the kind
// index, in creation order within it.
var (
	bTxIdx = [TxSortCount][]byte{
		TxSortCreated:  []byte("txpos.created"),
		TxSortKind:     []byte("txpos.kind"),
		TxSortInvoice:  []byte("txpos.invoice"),
		TxSortCustomer: []byte("txpos.customer"),
		TxSortAmount:   []byte("txpos.amount"),
		TxSortStatus:   []byte("txpos.status"),
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
	pos: func(dst []byte, col SortBy, _, v []byte) ([]byte, error) {
		t, err := kvlayout.DecodeTx(v)
		if err != nil {
			return nil, err
		}
		return domain.TxPosKey(dst, col, t), nil
	},
	keep: func(_, v []byte, q *PageQuery, f *fold.Folder) bool {
		t, err := kvlayout.DecodeTx(v)
		return err == nil && keepTxWhere(t, q, f)
	},
	stateRange: func(tx Tx, st State) (Cursor, []byte) {
		return tx.Bucket(bTxIdx[TxSortKind]).Cursor(), domain.AppendSortString(nil, string(st))
	},
	fields:    domain.TxFields,
	amountCol: TxSortAmount,
}

// txList is the transaction list.
var txList = &storeList[TxPageRow, *Transaction]{
	name: "transaction", sorts: TxSortCount, bolt: txBolt, pg: pgTransactions,
	cache:   func(db *DB) *pageCache { return &db.txPages },
	dec:     kvlayout.DecodeTx,
	boltDec: func(_, v []byte) (*Transaction, error) { return kvlayout.DecodeTx(v) },
	row:     func(t *Transaction, pos []byte) TxPageRow { return TxPageRow{Tx: t, Pos: pos} },
}

// writeTxRecord writes a transaction's record and, on bbolt, brings the
// list's indexes in line with it (from the record it replaces). Every
// write of a transaction record goes through here. On PostgreSQL the list
// table follows the transactions bucket by itself (pagepg.go). created
// says the record is new (one look at the bucket for both).
func writeTxRecord(tx Tx, t *Transaction, own *ownedValues) (created bool, err error) {
	k := []byte(t.Key)
	b := tx.Bucket(bTransaction)
	_, bolt := tx.(boltTx)
	var old *Transaction
	v := b.Get(k)
	if bolt && v != nil {
		o, err := kvlayout.DecodeTx(v)
		if err != nil {
			return false, fmt.Errorf("transaction %s: %w", k, err)
		}
		old = o
	}
	if v == nil {
		own.fillAtEnd(b, k)
	}
	if err := b.Put(k, kvlayout.EncodeTx(t)); err != nil {
		return false, err
	}
	if !bolt {
		return v == nil, nil
	}
	return v == nil, indexTx(tx, old, t, own)
}

// indexTx moves a transaction's index entries from old's to t's.
// own, when set, holds the values the transaction wrote already.
func indexTx(tx Tx, old, t *Transaction, own *ownedValues) error {
	rows := tx.Bucket(bTxRow)
	if rows == nil {
		return nil // a file before schema 7, being migrated
	}
	key := []byte(t.Key)
	id, fresh, err := rowID(rows, key, true, own)
	if err != nil {
		return err
	}
	if fresh {
		old = nil
	}
	val := appendIndexValue(make([]byte, 0, 8), id, key)
	var pos, opos []byte
	for col := SortBy(0); col < TxSortCount; col++ {
		pos = domain.TxPosKey(pos[:0], col, t)
		var op []byte
		if old != nil {
			opos = domain.TxPosKey(opos[:0], col, old)
			op = opos
		}
		// New transactions come in time order: the created index grows
		// at its end, and moveEntry fills its pages while it does.
		b := tx.Bucket(bTxIdx[col])
		if err := moveEntry(b, op, pos, val, own, 0); err != nil {
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
	FillPages(tb) // blocks are numbered by row ID, which only grows
	return setListRowText(tb, bTxGram, id, key, text, own)
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
				id, fresh, err := rowID(rows, k, true, nil)
				if err != nil || !fresh {
					return err // a chunk done again after a cut: done already
				}
				if err := indexTxGroup(tx, nil, t); err != nil {
					return err
				}
				text = append(AppendTxSearchText(text[:0], t, &f), '\n')
				return setListRowText(tb, bTxGram, id, k, text, nil)
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
				v4 := rows.Get(k)
				if len(v4) != 4 {
					return fmt.Errorf("transaction %s: no row ID: %w", k, kvlayout.ErrCorrupt)
				}
				val = appendIndexValue(val[:0], binary.BigEndian.Uint32(v4), k)
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
	pos: func(dst []byte, col SortBy, v []byte) ([]byte, error) { return txBolt.pos(dst, col, nil, v) },
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
