package store

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/store/domain"
	"paydesk/store/kv"
)

// listIndexNames are both lists' sort indexes on bbolt.
func listIndexNames() [][]byte {
	return append(kv.ListIndexes(), kv.TxListIndexes()...)
}

// checkShortEntries: every list index entry is position → row ID and the
// length of the packed key the position ends with (layout 11), and that
// key is a record's.
func checkShortEntries(t *testing.T, db *DB) {
	t.Helper()
	err := db.bk.File().Bolt().View(func(tx *bolt.Tx) error {
		for _, name := range listIndexNames() {
			records := tx.Bucket(bReservation)
			if slices.ContainsFunc(kv.TxListIndexes(), func(b []byte) bool { return string(b) == string(name) }) {
				records = tx.Bucket(bTransaction)
			}
			n := 0
			err := tx.Bucket(name).ForEach(func(k, v []byte) error {
				n++
				l, m := binary.Uvarint(v[min(4, len(v)):])
				if len(v) < 5 || m <= 0 || 4+m != len(v) || l > uint64(len(k)) {
					t.Errorf("index %s: entry %x → %x is not a row ID and a key length", name, k, v)
					return nil
				}
				key, err := domain.DecodeSortKey(k[uint64(len(k))-l:])
				if err != nil {
					t.Errorf("index %s: entry %x: %v", name, k, err)
				} else if records.Get([]byte(key)) == nil {
					t.Errorf("index %s: entry %x names key %q, which has no record", name, k, key)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if n == 0 && string(name) != "sumpos.unknown" && string(name) != "sumpos.missing" {
				t.Errorf("index %s is empty", name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeIndexEntries: a file whose list index entries end their
// position with the row's key unpacked and repeat it in their value
// (layout 8), or name it by its length (layouts 9 and 10), is upgraded at
// open — in one chunk, in many, and in many cut short and finished by the
// next open — to positions that end with the packed key and entries that
// name it by its length; every page of both lists reads as before, and
// new writes use the packed form too.
func TestUpgradeIndexEntries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		layout   uint64
		chunk    int
		cutAfter []int
	}{
		{name: "layout 8, one chunk", layout: 8},
		{name: "layout 8, chunks of 9", layout: 8, chunk: 9},
		{name: "layout 8, chunks of 60, cut short", layout: 8, chunk: 60, cutAfter: []int{1, 5, 2}},
		{name: "layout 10, one chunk", layout: 10},
		{name: "layout 10, chunks of 60, cut short", layout: 10, chunk: 60, cutAfter: []int{1, 5, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "layout8.db")
			db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			pageData(t, db, 300)
			txPageData(t, db, 300)
			checkShortEntries(t, db)
			res := []PageQuery{{Sort: SortCustomer, Limit: 1000}, {Sort: SortAmount, Desc: true, Limit: 1000},
				{Sort: SortInvoice, Limit: 1000}, {Sort: SortState, Limit: 1000}, {Limit: 1000},
				{Filter: "muller", Limit: 1000}, {State: StateCancelled, Limit: 1000}, {State: StateOrderMissing, Limit: 1000},
				{Filter: "muller", Sort: SortAmount, Limit: 7}}
			txq := []PageQuery{{Sort: TxSortCustomer, Limit: 1000}, {Sort: TxSortAmount, Desc: true, Limit: 1000},
				{Sort: TxSortKind, Limit: 1000}, {Sort: TxSortStatus, Limit: 1000}, {Limit: 1000},
				{Filter: "muller", Limit: 1000}, {State: State(KindGiftCardPay), Limit: 1000}, {Filter: "muller", Sort: TxSortInvoice, Limit: 5}}
			pages := func() (out [][]string) {
				for _, q := range res {
					p, err := db.ReservationPage(t.Context(), q)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, posList(p))
				}
				for _, q := range txq {
					p, err := db.TransactionPage(t.Context(), q)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, txKeyed(p).keys)
				}
				return out
			}
			want := pages()

			// Back to the old layout: each position ends with the key
			// itself; the entry's value is the row ID and the key (layout
			// 8) or its length (layout 10).
			err = db.bk.File().Bolt().Update(func(tx *bolt.Tx) error {
				for _, names := range kv.OldListIndexes() {
					b := tx.Bucket(names[1])
					type entry struct{ k, v []byte }
					var old []entry
					if err := b.ForEach(func(k, v []byte) error {
						l, _ := binary.Uvarint(v[4:])
						key, err := domain.DecodeSortKey(k[uint64(len(k))-l:])
						if err != nil {
							return err
						}
						pos := append(slices.Clone(k[:uint64(len(k))-l]), key...)
						val := append(slices.Clone(v[:4]), key...)
						if tc.layout == 10 {
							val = binary.AppendUvarint(slices.Clone(v[:4]), uint64(len(key)))
						}
						old = append(old, entry{pos, val})
						return nil
					}); err != nil {
						return err
					}
					if err := tx.DeleteBucket(names[1]); err != nil {
						return err
					}
					b, err := tx.CreateBucket(names[0])
					if err != nil {
						return err
					}
					for _, e := range old {
						if err := b.Put(e.k, e.v); err != nil {
							return err
						}
					}
				}
				return tx.Bucket(bMeta).Put(kSchema, u64(tc.layout))
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Close()

			db = openCutThenWhole(t, path, tc.chunk, tc.cutAfter)
			checkShortEntries(t, db)
			err = db.bk.File().Bolt().View(func(tx *bolt.Tx) error {
				for _, names := range kv.OldListIndexes() {
					if tx.Bucket(names[0]) != nil {
						t.Errorf("index %s of layout %d is still in the file", names[0], tc.layout)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := pages(); !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("pages after the upgrade differ from before:\n got %q\nwant %q", got, want)
			}
			// Written after the upgrade: short entries, in the same lists.
			txPageData(t, db, 40)
			checkShortEntries(t, db)
		})
	}
}

// TestUpgradingSaysWhatOnce: Options.Upgrading hears of a fill due at
// open once, before it runs, with what it does; an open with nothing to do
// says nothing.
func TestUpgradingSaysWhatOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "up.db")
	var told []string
	upgrading := func(what string) { told = append(told, what) }
	// A new file is no upgrade: paydesk listen's first start on it said
	// it was "from an older paydesk" and built the push log's index.
	db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, Upgrading: upgrading})
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 0 {
		t.Fatalf("a new file: told %q, want nothing", told)
	}
	txPageData(t, db, 50)
	_ = db.Close()
	reopen := func() {
		t.Helper()
		db, err := Open(path, Options{NoSync: true, fillChunk: 7, Upgrading: upgrading})
		if err != nil {
			t.Fatal(err)
		}
		_ = db.Close()
	}
	reopen()
	if len(told) != 0 {
		t.Fatalf("a current file: told %q, want nothing", told)
	}
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error { return tx.Bucket(bMeta).Put(kv.FillKey(kv.TxListFill), []byte{0}) })
	_ = b.Close()
	if err != nil {
		t.Fatal(err)
	}
	reopen() // 50 rows in chunks of 7: one notice
	if want := []string{"building the transaction list's indexes"}; !slices.Equal(told, want) {
		t.Fatalf("told %q, want %q", told, want)
	}
	reopen()
	if len(told) != 1 {
		t.Fatalf("the fill done: told %q again", told[1:])
	}
}
