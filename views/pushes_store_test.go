package views

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// storePushes writes n pushes into a bbolt store, one a minute from t0:
// even ones Transaction, odd ones DataRequest; every third a failure.
func storePushes(t testing.TB, n int, t0 time.Time) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "pushes.db"), store.Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for i := range n {
		writePush(t, db, i, t0.Add(time.Duration(i)*time.Minute))
	}
	return db
}

func writePush(t testing.TB, db *store.DB, i int, at time.Time) {
	t.Helper()
	code := []int{api.StatusSuccess, api.StatusSuccess, 490}[i%3]
	st := api.Status{Code: api.Code{Code: code}, DateTime: api.NewDateTime(at, true)}
	key := fmt.Sprintf("%032X", i+1)
	var p *api.Push
	if i%2 == 0 {
		p = &api.Push{Transaction: &api.TransactionPush{Key: key, Invoice: fmt.Sprintf("INV-%05d", i), ServiceCode: "customgiftcard",
			IsTest: true, Currency: "EUR", TransactionType: api.TypeGiftCardPay, Status: st,
			AmountDebit: api.NewAmount(decimal.New(1000, -2)), MutationType: api.MutationDeferred}}
	} else {
		p = &api.Push{DataRequest: &api.DataRequestPush{Key: key, Invoice: fmt.Sprintf("INV-%05d", i), ServiceCode: api.ServiceDeferred,
			ActionCode: api.ActionReserve, Status: st, IsTest: true, Currency: "EUR", MutationType: api.MutationDataRequest}}
	}
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyPush(context.Background(), store.PushRecord{ReceivedAt: at, Body: body, Method: "POST", URL: "/push"}, p); err != nil {
		t.Fatal(err)
	}
}

// TestPushLogPagesFromTheStore: given the store, the push log reads only
// the window on screen (store.DB.PushPage), newest first; t, v and the
// filter language narrow it in the store, with the whole log counted
// apart; a push stored later comes in at the top when the log hears of
// it; S reverses the order.
func TestPushLogPagesFromTheStore(t *testing.T) {
	const n = 3000
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	db := storePushes(t, n, t0)
	ctx := NewContext(func() time.Time { return t0.Add(30 * 24 * time.Hour) })
	s := NewPushes(ctx, "")
	s.SetSize(140, 20)
	finish(s.Update(PushSourceMsg{Source: db}), s)
	sel := func() string {
		r, ok := s.list.selected()
		if !ok {
			t.Fatal("no row under the cursor")
		}
		return (*r).Push.Invoice
	}
	if s.list.len() != n || len(s.list.rows) >= n/2 || sel() != fmt.Sprintf("INV-%05d", n-1) {
		t.Fatalf("start: %d rows, %d read, first %s; want %d paged, the newest first", s.list.len(), len(s.list.rows), sel(), n)
	}
	for i, st := range []struct {
		keys  []string
		count int
		first int
	}{
		{[]string{"t"}, n / 2, n - 1},                       // DataRequest: the odd ones
		{[]string{"v"}, n / 3, n - 3},                       // and success: not 2 mod 3
		{append([]string{"/"}, typed("02997")...), 1, 2997}, // a word of the invoice
		{[]string{"esc"}, n / 3, n - 3},
		{[]string{"t", "t", "v", "v", "v", "v", "v"}, n, n - 1}, // back to all
	} {
		press(s, st.keys...)
		finish(s.list.ensure(), s)
		if s.list.len() != st.count || st.count > 0 && sel() != fmt.Sprintf("INV-%05d", st.first) {
			t.Fatalf("step %d %v: %d rows, first %s; want %d, INV-%05d", i, st.keys, s.list.len(), sel(), st.count, st.first)
		}
		if s.list.all != n {
			t.Fatalf("step %d: of %d pushes, want %d", i, s.list.all, n)
		}
	}
	// A push stored now: the log hears of it and reads its window again.
	writePush(t, db, n, t0.Add(time.Duration(2*n)*time.Minute))
	finish(s.Update(PushRowsMsg{}), s)
	if s.list.len() != n+1 || sel() != fmt.Sprintf("INV-%05d", n) {
		t.Fatalf("live push: %d rows, first %s; want %d, the new one first", s.list.len(), sel(), n+1)
	}
	press(s, "S")
	finish(s.list.ensure(), s)
	if sel() != "INV-00000" {
		t.Fatalf("reversed: %s first, want the oldest", sel())
	}
}
