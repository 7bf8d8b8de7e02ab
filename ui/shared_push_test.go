package ui

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

func putPush(t *testing.T, db *store.DB, n int) {
	t.Helper()
	p := &api.Push{Transaction: &api.TransactionPush{Key: fmt.Sprintf("%032X", n), Invoice: fmt.Sprintf("GC-%d", n), ServiceCode: "customgiftcard",
		Status: api.Status{Code: api.Code{Code: api.StatusSuccess, Description: "Success"}, DateTime: api.NewDateTime(time.Date(2026, 11, 26, 9, 0, n, 0, time.UTC), true)},
		IsTest: true, Currency: "EUR", TransactionType: api.TypeGiftCardPay, AmountDebit: api.NewAmount(decimal.New(int64(100+n), -2)), MutationType: api.MutationGiftCard}}
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyPush(t.Context(), store.PushRecord{Body: body, Signature: store.SignatureValid, Method: "POST", URL: "/push"}, p); err != nil {
		t.Fatal(err)
	}
}

// TestSharedStoreSharesThePushLog: the push log's window, count and
// receipts, which every console over SSH reads again after each change,
// are read once per change for all of them (the records handed to each
// are the same), and a push stored after a read is in the next one.
func TestSharedStoreSharesThePushLog(t *testing.T) {
	db, s := sharedTestStore(t)
	ch, stop := s.Subscribe()
	defer stop()
	q := store.PushQuery{PageQuery: store.PageQuery{Desc: true, Limit: 50}}
	for round := 1; round <= 3; round++ {
		putPush(t, db, round)
		select {
		case <-ch:
		case <-time.After(sharedStuck):
			t.Fatal("no change handed on")
		}
		pages := make([]store.PushPage, 50)
		counts := make([]int, 50)
		receipts := make([]map[uint64]store.PushReceipts, 50)
		var wg sync.WaitGroup
		for i := range pages {
			wg.Go(func() {
				var err error
				if pages[i], err = s.PushPage(t.Context(), q); err != nil {
					t.Error(err)
					return
				}
				if counts[i], err = s.PushCount(t.Context(), q); err != nil {
					t.Error(err)
				}
				ps := make([]*store.PushRecord, len(pages[i].Rows))
				for j, r := range pages[i].Rows {
					ps[j] = r.Push
				}
				if receipts[i], err = s.PushReceiptsOf(t.Context(), ps); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for i, p := range pages {
			if len(p.Rows) != round || counts[i] != round {
				t.Fatalf("round %d, console %d: %d rows, count %d; want %d (a stale read?)", round, i, len(p.Rows), counts[i], round)
			}
			for j, r := range p.Rows {
				if r.Push != pages[0].Rows[j].Push {
					t.Fatalf("round %d: console %d got push %d read on its own, not the shared read", round, i, r.Push.ID)
				}
			}
			if len(receipts[i]) != len(receipts[0]) {
				t.Fatalf("round %d: receipts differ between consoles: %v and %v", round, receipts[i], receipts[0])
			}
		}
	}
}
