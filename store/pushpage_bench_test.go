package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/query"
)

// BenchmarkPushLogFirstPage measures the push log's first page (what the
// console's Pushes tab and `paydesk pushes` read first) on a log of
// 100,000 pushes, on the engine under test (bbolt; the native PostgreSQL
// engine with PAYDESK_STORE_BACKEND=postgres): unfiltered, narrowed by a
// status, by a word of one invoice (found near the end of the walk), and
// beside it what the log read before the store paged it: the newest
// 5,000 stored and rejected pushes, whole.
//
//	go test -run '^$' -bench PushLogFirstPage -benchtime 20x ./store/
func BenchmarkPushLogFirstPage(b *testing.B) {
	const n = 100_000
	db := openTest(b)
	g := &gw{clock: t0}
	ctx := context.Background()
	for i := 0; i < n; {
		err := db.repo.Update(ctx, func(tx RepoTx) error {
			var c Change
			for j := 0; j < 1000 && i < n; j, i = j+1, i+1 {
				code := api.StatusSuccess
				if i%10 == 0 {
					code = 490
				}
				p := txPush(fmt.Sprintf("%032X", i+1), fmt.Sprint("GC-", i), "customgiftcard", api.TypeGiftCardPay,
					decimal.New(int64(100+i%5000), -2), g.status(code, ""), nil)
				body, _ := p.Encode()
				pp := db.preparePush(PushRecord{Body: body, Method: "POST", URL: "/push", ReceivedAt: t0.Add(time.Duration(i) * time.Second)}, p)
				var res ApplyResult
				if err := db.applyPush(tx, pp, p, &res, &c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	word, err := query.Parse("GC-123", t0)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		q    PushQuery
	}{
		{"all", PushQuery{PageQuery: PageQuery{Desc: true, Limit: 100}}},
		{"failed", PushQuery{PageQuery: PageQuery{Desc: true, Limit: 100}, Status: "failed"}},
		{"word GC-123", PushQuery{PageQuery: PageQuery{Desc: true, Limit: 100, Where: word}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				p, err := db.PushPage(ctx, tc.q)
				if err != nil || len(p.Rows) == 0 {
					b.Fatal(len(p.Rows), err)
				}
			}
		})
	}
	b.Run("before: newest 5000 whole", func(b *testing.B) {
		for b.Loop() {
			ps, err := db.Pushes(ctx, 5000, 0)
			if err != nil || len(ps) != 5000 {
				b.Fatal(len(ps), err)
			}
			if _, err := db.RejectedPushes(ctx, 5000); err != nil {
				b.Fatal(err)
			}
		}
	})
}
