package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BenchmarkNextDeliveriesShopDownPG is BenchmarkNextDeliveriesShopDown on
// the native PostgreSQL engine: a shop down, open deliveries piled up, none
// due. The look picks the oldest pending delivery of each endpoint and key
// in the database (DISTINCT ON); perKey open deliveries wait per key.
func BenchmarkNextDeliveriesShopDownPG(b *testing.B) {
	for _, tc := range []struct{ open, perKey int }{{1000, 1}, {100000, 1}, {100000, 10}} {
		b.Run(fmt.Sprintf("open=%d/perkey=%d", tc.open, tc.perKey), func(b *testing.B) {
			ep := "http://shop.example.test/push"
			dsn := freshNative(b)
			ctx := context.Background()
			retry := t0.Add(time.Hour)
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			// Written in the database at once: the engine's own appends
			// would take two round trips each.
			if _, err := conn.Exec(ctx, `INSERT INTO paydesk_deliveries (id, push_id, key, endpoint, created, state, next_at)
				SELECT g, g, lpad(upper(to_hex(g % $1)), 32, '0'), $2, $3, 'pending', $4 FROM generate_series(1, $5::bigint) g`,
				int64(tc.open/tc.perKey), ep, t0, retry, int64(tc.open)); err != nil {
				b.Fatal(err)
			}
			if _, err := conn.Exec(ctx, `ANALYZE paydesk_deliveries`); err != nil {
				b.Fatal(err)
			}
			_ = conn.Close(ctx)
			db, err := Open(dsn, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: []string{ep}})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			b.ResetTimer()
			for b.Loop() {
				due, next, err := db.NextDeliveries(ctx, t0, 256)
				if err != nil || len(due) != 0 || !next.Equal(retry) {
					b.Fatalf("due %d next %v, %v", len(due), next, err)
				}
			}
		})
	}
}
