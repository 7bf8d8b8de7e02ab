package store

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/internal/query"
	"paydesk/store/kv"
)

// txPageData writes n transactions of every kind: captures and their
// refunds (which change the capture's record: refunded, refunds), gift
// card payments in groups, names that fold, ties of time and amount;
// then changes some (a customer joins, a status moves): the indexes must
// follow.
func txPageData(t *testing.T, db *DB, n int) {
	t.Helper()
	rng := rand.New(rand.NewSource(11))
	names := []string{"Anna Müller", "Jan de Vries", "", "Émile Zola", "anna muller"}
	var ts []*Transaction
	var captures []string
	for i := range n {
		created := t0.Add(-time.Duration(rng.Intn(n/2+1)) * time.Minute)
		tr := &Transaction{Key: fmt.Sprintf("%032X", rng.Uint64()), Invoice: fmt.Sprintf("INV-%05d", rng.Intn(n*2)),
			Currency: "EUR", Amount: decimal.New(int64(100*(1+rng.Intn(5))), -2), CustomerName: names[rng.Intn(len(names))],
			Status: Status{Code: api.StatusSuccess, Time: created}, Created: created}
		switch k := rng.Intn(6); {
		case k <= 1 || len(captures) == 0:
			tr.Kind, tr.TransactionType, tr.ServiceCode = KindCapture, api.TypeDeferredPay, "deferredkp"
			tr.ReservationNumber, tr.InvoiceNumber = fmt.Sprintf("R%07d", i), fmt.Sprintf("PI%08d", i)
			captures = append(captures, tr.Key)
		case k == 2:
			tr.Kind, tr.TransactionType, tr.ServiceCode = KindRefund, api.TypeDeferredRefund, "deferredkp"
			tr.Original = captures[rng.Intn(len(captures))]
		case k == 3:
			tr.Kind, tr.TransactionType, tr.ServiceCode = KindGiftCardPay, api.TypeGiftCardPay, "giftcard"
			tr.Group = fmt.Sprintf("G%031d", rng.Intn(n/10+1))
		case k == 4:
			tr.Kind, tr.TransactionType, tr.ServiceCode = KindGiftCardRemainder, api.TypeGiftCardPay, "giftcard"
			tr.Group = fmt.Sprintf("G%031d", rng.Intn(n/10+1))
		default:
			tr.Kind, tr.TransactionType, tr.ServiceCode = KindGiftCardRefund, api.TypeGiftCardRefund, "giftcard"
		}
		if i%9 == 0 {
			tr.Status = Status{Code: api.StatusPendingProcessing, Time: created}
		}
		ts = append(ts, tr)
	}
	if err := db.PutTransactions(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	var again []*Transaction
	for i, tr := range ts {
		switch i % 5 {
		case 0:
			tr.Status = Status{Code: api.StatusRejected, Time: tr.Created.Add(time.Hour)}
			again = append(again, tr)
		case 2:
			tr.CustomerName = "Østergaard"
			again = append(again, tr)
		case 3:
			again = append(again, tr)
		}
	}
	if err := db.PutTransactions(t.Context(), again); err != nil {
		t.Fatal(err)
	}
}

func txKeyed(p TxPage) keyedPage {
	k := keyedPage{total: p.Total, more: p.More, less: p.Less}
	for _, r := range p.Rows {
		k.keys = append(k.keys, r.Tx.Key)
		k.pos = append(k.pos, r.Pos)
	}
	return k
}

// TestTransactionPage pages through the transaction list in every order,
// with filters and kinds, and compares each page with the in-memory
// reference over all transactions; on bbolt also with the thresholds
// lowered so that every path of a big file is taken.
func TestTransactionPage(t *testing.T) {
	for _, small := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("small=%v", small), func(t *testing.T) {
			db := openTest(t)
			switch small {
			case 1:
				db.bk.SetListPaths(1, 10, 0)
			case 2:
				db.bk.SetListPaths(1, 10, 5)
			}
			txPageData(t, db, 500)
			all, err := db.Transactions(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name   string
				filter string
				state  State
				where  string // the filter language (query.Parse)
			}{
				{name: "all"},
				{name: "common word", filter: "a"},
				{name: "folded", filter: "MULLER"},
				{name: "kind words", filter: "giftcard rem"},
				{name: "two words", filter: "anna capture"},
				{name: "rare", filter: all[17].Key[:12]},
				{name: "provider invoice", filter: "pi0000004"},
				{name: "refund of", filter: all[3].Key},
				{name: "none", filter: "no such thing"},
				{name: "like characters", filter: "%_"},
				{name: "kind", state: State(KindGiftCardRemainder)},
				{name: "kind and word", state: State(KindCapture), filter: "anna"},
				{name: "kind and created", state: State(KindGiftCardPay), where: "created:<2h"},
				{name: "created", where: "created:>3h"},
				{name: "created between", where: "created:2026-03-02"},
				{name: "kind, created and customer", state: State(KindCapture), where: "created:<3h customer:muller"},
				{name: "kind, created and amount", state: State(KindRefund), where: "created:>1h amount:>2"},
			}
			i := 0
			for _, c := range cases {
				for sort := SortBy(0); sort < TxSortCount; sort++ {
					for _, desc := range []bool{false, true} {
						if i++; !sampled(i) {
							continue
						}
						w, err := query.Parse(c.where, t0)
						if err != nil {
							t.Fatal(err)
						}
						t.Run(fmt.Sprintf("%s/sort%d/desc=%v", c.name, sort, desc), func(t *testing.T) {
							checkPaging(t, PageQuery{Sort: sort, Desc: desc, Filter: c.filter, State: c.state, Where: w, Limit: 37},
								func(q PageQuery) (keyedPage, error) {
									p, err := db.TransactionPage(t.Context(), q)
									return txKeyed(p), err
								},
								func(q PageQuery) keyedPage { return txKeyed(PageTransactions(all, q)) },
								func(q PageQuery) (int, error) { return db.TransactionCount(t.Context(), q) })
						})
					}
				}
			}
			checkGroups(t, db, all)
		})
	}
}

// TestTransactionListFill: a file from before the transaction list's
// indexes (schema 6) gets them on open, from the chunked fill — in one
// chunk, in many, and in many cut short and finished by the next open —
// and they answer like the reference; the group index too.
func TestTransactionListFill(t *testing.T) {
	pgtest.OwnEngine(t)
	for _, tc := range []struct {
		name     string
		chunk    int
		cutAfter []int
	}{
		{name: "one chunk"},
		{name: "chunks of 7", chunk: 7},
		{name: "chunks of 50, cut short", chunk: 50, cutAfter: []int{1, 4, 11, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			txPageData(t, db, 400)
			all, _ := db.Transactions(t.Context())
			err = db.bk.File().Bolt().Update(func(tx *bolt.Tx) error {
				for _, b := range kv.TxListBuckets() {
					if err := tx.DeleteBucket(b); err != nil {
						return err
					}
				}
				return tx.Bucket(bMeta).Put(kSchema, u64(6))
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = db.Close()
			db = openCutThenWhole(t, path, tc.chunk, tc.cutAfter)
			for _, q := range []PageQuery{{Sort: TxSortCustomer, Limit: 1000}, {Sort: TxSortAmount, Desc: true, Limit: 1000},
				{Sort: TxSortKind, Limit: 1000}, {Sort: TxSortStatus, Limit: 1000}, {Limit: 1000},
				{Filter: "muller", Limit: 1000}, {State: State(KindGiftCardPay), Limit: 1000}, {Filter: all[7].Invoice, Limit: 1000}} {
				p, err := db.TransactionPage(t.Context(), q)
				if err != nil {
					t.Fatal(err)
				}
				if w := txKeyed(PageTransactions(all, q)); !slices.Equal(txKeyed(p).keys, w.keys) || len(w.keys) == 0 {
					t.Fatalf("%+v: %d rows, want %d", q, len(p.Rows), len(w.keys))
				}
			}
			checkGroups(t, db, all)
			err = db.bk.File().Bolt().View(func(tx *bolt.Tx) error {
				for _, b := range kv.TxListIndexes() {
					if n := tx.Bucket(b).Stats().KeyN; n != len(all) {
						t.Errorf("index %s holds %d entries, want %d", b, n, len(all))
					}
				}
				if tx.Bucket(bMeta).Get(kv.FillKey(kv.TxListFill)) != nil {
					t.Error("the fill's state is still there")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkGroups: every gift card group's members come from the index.
func checkGroups(t *testing.T, db *DB, all []*Transaction) {
	t.Helper()
	groups := map[string][]string{}
	for _, tr := range all {
		if tr.Group != "" {
			groups[tr.Group] = append(groups[tr.Group], tr.Key)
		}
	}
	if len(groups) == 0 {
		t.Fatal("no groups in the data")
	}
	for g, want := range groups {
		got, err := db.TransactionGroup(t.Context(), g)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, tr := range got {
			if tr.Key != g {
				keys = append(keys, tr.Key)
			}
		}
		slices.Sort(keys)
		slices.Sort(want)
		if !slices.Equal(keys, want) {
			t.Fatalf("group %s: %q, want %q", g, keys, want)
		}
	}
}
