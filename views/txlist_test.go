package views

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/shopspring/decimal"

	"paydesk/store"
	"paydesk/store/storetest"
)

// The transactions tab reads pages from a real store like the
// reservations: it holds a window, pages to the end, filters in the store
// and takes live changes.
func TestTransactionsHoldAWindow(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "c.db"), store.Options{NoSync: true, Now: func() time.Time { return listNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := storetest.Generate(db, 4000, 3); err != nil {
		t.Fatal(err)
	}
	n, err := db.TransactionCount(t.Context(), store.PageQuery{})
	if err != nil || n < 1000 {
		t.Fatalf("%d transactions generated (%v): too few for the test", n, err)
	}
	s := NewTransactions(NewContext(func() time.Time { return listNow }))
	s.SetSize(120, 20)
	finish(s.Update(TransactionSourceMsg{Source: db}), s)
	if want := countText(n, n, "transactions"); !strings.Contains(s.View(), want) {
		t.Fatalf("no %q:\n%s", want, s.View())
	}
	for range n/17 + 10 {
		finish(s.Update(tea.KeyPressMsg{Code: tea.KeyPgDown}), s)
		if len(s.list.rows) > windowMax {
			t.Fatalf("the window holds %d rows", len(s.list.rows))
		}
	}
	if s.list.table.Cursor() != n-1 || strings.Contains(s.View(), "…  ") {
		t.Fatalf("cursor %d after paging to the end of %d:\n%s", s.list.table.Cursor(), n, s.View())
	}
	finish(s.Update(tea.KeyPressMsg{Code: tea.KeyHome}), s)
	top, ok := s.list.selected()
	if !ok || s.list.base != 0 {
		t.Fatalf("home: window at %d", s.list.base)
	}
	// Live: a new transaction comes in on top with the count.
	fresh := &store.Transaction{Key: "FRESHTX", Kind: store.KindGiftCardPay, Invoice: "INV-FRESH", Currency: "EUR",
		Amount: decimal.NewFromInt(5), Status: store.Status{Code: 190, Time: listNow}, Created: top.Tx.Created.Add(time.Hour)}
	if err := db.PutTransactions(t.Context(), []*store.Transaction{fresh}); err != nil {
		t.Fatal(err)
	}
	finish(s.Update(TransactionRowsMsg{Rows: []*TransactionRow{NewTransactionRow(fresh)}}), s)
	if got, _ := s.list.selected(); got.Tx.Key != "FRESHTX" || !strings.Contains(s.View(), countText(n+1, n+1, "transactions")) {
		t.Fatalf("the new row is not on top with the count (was %s):\n%s", top.Tx.Key, s.View())
	}
	// The filter asks the store.
	press(s, "/", "f", "r", "e", "s", "h", "t")
	if !strings.Contains(s.View(), "1 of "+thousands(n+1)+" transactions") {
		t.Fatalf("filter:\n%s", s.View())
	}
}
