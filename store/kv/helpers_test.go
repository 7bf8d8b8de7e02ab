package kv

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
	"paydesk/store/domain"
	"paydesk/store/repotest"
)

// t0 is the time the tests' records are made at.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// put writes records as given through the contract, in one transaction:
// the engine keeps what it is handed (the rules that derive a
// reservation's amounts are the store's, and not what these tests check).
func put(t testing.TB, db *DB, rs []*Reservation, ts []*Transaction) {
	t.Helper()
	err := db.Repo().Update(t.Context(), func(tx RepoTx) error {
		for _, x := range ts {
			if _, err := tx.PutTransaction(x); err != nil {
				return err
			}
		}
		for _, r := range rs {
			if _, err := tx.PutReservation(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// listData writes n random reservations for the lists
// (repotest.ListData), then some of them again.
func listData(t testing.TB, db *DB, n int) {
	t.Helper()
	first, again := repotest.ListData(n)
	put(t, db, first, nil)
	put(t, db, again, nil)
}

// summaries is every reservation's list row, as the contract reads them.
func summaries(t testing.TB, db *DB) []Summary {
	t.Helper()
	var all []Summary
	err := db.Repo().View(t.Context(), func(tx RepoTx) (err error) {
		all, err = tx.Summaries()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// rowKeys are a page's reservation keys in order.
func rowKeys(p Page) []string {
	out := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		out[i] = r.Summary.Key
	}
	return out
}

// update runs fn in one write transaction through the contract.
func update(t testing.TB, db *DB, fn func(tx RepoTx) error) {
	t.Helper()
	if err := db.Repo().Update(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// capturedReservation is reservation i as the store leaves it after a
// capture of everything (and, for every third, a refund of part of it):
// the reservation with its lines and amounts, and its transactions.
func capturedReservation(i int) (*Reservation, []*Transaction) {
	key := fmt.Sprintf("%032X", 1<<32+i)
	inv := fmt.Sprintf("SHOP-%05d", i)
	st := Status{Code: api.StatusSuccess, Time: t0}
	r := &Reservation{Key: key, ReservationNumber: "RES-" + key[28:], Invoice: inv, Currency: "EUR", LinesKnown: true, Created: t0,
		CustomerName: "Anna Jansen", CustomerEmail: "anna@example.nl", Country: "NL", Status: st,
		Lines: []Line{
			{ArticleNumber: "SHOE-42", Title: "Running shoes", Type: api.ArticleTypeGeneral, Price: dec("89.95"), Vat: dec("21"), Reserved: 1, Captured: 1},
			{ArticleNumber: "SOCK-3P", Title: "Wool socks 3-pack", Type: api.ArticleTypeGeneral, Price: dec("14.50"), Vat: dec("21"), Reserved: 2, Captured: 2},
			{ArticleNumber: "CAP", Title: "Cap", Type: api.ArticleTypeGeneral, Price: dec("30.92"), Vat: dec("21"), Reserved: 1, Captured: 1},
		},
		CapturedAmount: dec("149.87")}
	capture := &Transaction{Key: fmt.Sprintf("%032X", 2<<32+i), Kind: KindCapture, Invoice: inv, Currency: "EUR", Amount: dec("149.87"),
		Status: st, Created: t0, ReservationKey: key, ReservationNumber: r.ReservationNumber}
	txs := []*Transaction{capture}
	if i%3 == 0 {
		txs = append(txs, &Transaction{Key: fmt.Sprintf("%032X", 3<<32+i), Kind: KindRefund, Invoice: inv, Currency: "EUR", Amount: dec("10.00"),
			Status: st, Created: t0, ReservationKey: key, ReservationNumber: r.ReservationNumber, Original: capture.Key})
		r.RefundedAmount = dec("10.00")
	}
	for _, x := range txs {
		r.Transactions = append(r.Transactions, x.Key)
	}
	return r, txs
}

// giftCardPush is gift card payment i and the push that told of it, as
// the listener stores them.
func giftCardPush(i int) (*Transaction, *PushRecord) {
	key := fmt.Sprintf("%032X", 4<<32+i)
	inv := fmt.Sprintf("GC-%d", i)
	st := api.Status{Code: api.Code{Code: api.StatusSuccess, Description: api.StatusText(api.StatusSuccess)}, DateTime: api.NewDateTime(t0, true)}
	p := &api.Push{Transaction: &api.TransactionPush{Key: key, Invoice: inv, ServiceCode: "customgiftcard", Status: st, IsTest: true,
		Currency: "EUR", TransactionType: api.TypeGiftCardPay, AmountDebit: api.NewAmount(dec("10.00")), MutationType: api.MutationDeferred}}
	body, err := p.Encode()
	if err != nil {
		panic(err) // a fixed value that always encodes
	}
	gc := &Transaction{Key: key, Kind: domain.KindGiftCardPay, Invoice: inv, Currency: "EUR", Amount: dec("10.00"),
		Status: Status{Code: api.StatusSuccess, Time: t0}, Created: t0}
	rec := &PushRecord{ReceivedAt: t0, Method: "POST", URL: "/push", Body: body, Envelope: api.EnvelopeTransaction, Key: key, Invoice: inv,
		Service: "customgiftcard", Kind: api.TypeGiftCardPay, Status: gc.Status, Currency: "EUR", Amount: gc.Amount, HasAmount: true,
		Applied: true, Hash: sha256.Sum256(body)}
	return gc, rec
}

// appendPush stores a push and its transaction in one transaction.
func appendPush(t testing.TB, db *DB, gc *Transaction, rec *PushRecord) {
	t.Helper()
	enc := db.Repo().EncodePush(rec)
	update(t, db, func(tx RepoTx) error {
		if _, err := tx.PutTransaction(gc); err != nil {
			return err
		}
		_, err := tx.AppendPush(rec, enc)
		return err
	})
}

// layout7Copy copies the layout-7 fixture (store/testdata/layout7) into a
// temporary file and opens it read-only with bbolt, to read what it says
// before any upgrade; the caller closes it before opening path.
func layout7Copy(t *testing.T) (string, *bolt.DB) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "layout7", "layout7.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "paydesk.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return path, db
}
