package store

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
	"paydesk/store/kvlayout"
)

// BenchmarkInboxDrain measures the applier alone: b.N pushes ingested
// first, then applied from the inbox (DrainInbox), in pushes a second and,
// when the server runs on this machine, the server's CPU a push.
func BenchmarkInboxDrain(b *testing.B) {
	url := pgtest.Fresh(b)
	db, err := Open(url, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ps := inboxPushes(b.N)
	for _, p := range ps {
		body, _ := p.Encode()
		if _, err := db.IngestPush(context.Background(), PushRecord{Body: body}, p, nil); err != nil {
			b.Fatal(err)
		}
	}
	server := pgtest.ServerCPU(b, url)
	var cpu0 time.Duration
	if server != nil {
		cpu0 = server()
	}
	b.ResetTimer()
	start := time.Now()
	n, err := db.DrainInbox(context.Background())
	if err != nil || n != b.N {
		b.Fatalf("drained %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "pushes/s")
	if server != nil && n > 0 {
		b.ReportMetric(float64((server()-cpu0).Microseconds())/float64(n), "server-µs/push")
	}
}

// BenchmarkInboxIngestStatement compares the two ways the issue names of
// writing a batch of pushes to the inbox, on one connection, b.N batches
// of 512 pushes as a listener builds them: one INSERT … SELECT FROM
// unnest(…) ON CONFLICT DO NOTHING RETURNING (what IngestPush does), and
// COPY into a temporary staging table followed by INSERT … SELECT … ON
// CONFLICT DO NOTHING RETURNING from it, in one transaction.
func BenchmarkInboxIngestStatement(b *testing.B) {
	const batch = 512
	for _, how := range []string{"unnest", "copy"} {
		b.Run(how, func(b *testing.B) {
			url := pgtest.Fresh(b)
			db, err := Open(url, Options{Now: func() time.Time { return t0 }})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			conn, err := db.conn.Pool().Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Release()
			if _, err := conn.Exec(ctx, `CREATE TEMP TABLE inbox_stage (key bytea, hash bytea, rec bytea) ON COMMIT DELETE ROWS`); err != nil {
				b.Fatal(err)
			}
			ps := inboxPushes(b.N * batch)
			rows := make([][]any, len(ps))
			for i, p := range ps {
				body, _ := p.Encode()
				pp := db.preparePush(PushRecord{Body: body, Method: "POST", URL: "/push"}, p)
				stored := pp.enc.Bytes() // as IngestPush: the native engine leaves the tail to the inbox
				if stored == nil {
					stored = kvlayout.EncodePushTail(&pp.rec)
				}
				rows[i] = []any{[]byte(pp.rec.Key), append([]byte(nil), pp.rec.Hash[:]...), kvlayout.EncodePushHead(&pp.rec, stored)}
			}
			b.ResetTimer()
			start := time.Now()
			for n := 0; n < b.N; n++ {
				part := rows[n*batch : (n+1)*batch]
				got := 0
				switch how {
				case "unnest":
					keys, hashes, recs := make([][]byte, batch), make([][]byte, batch), make([][]byte, batch)
					for i, r := range part {
						keys[i], hashes[i], recs[i] = r[0].([]byte), r[1].([]byte), r[2].([]byte)
					}
					rs, err := conn.Query(ctx, qIngest, keys, hashes, recs)
					if err != nil {
						b.Fatal(err)
					}
					for rs.Next() {
						got++
					}
					rs.Close()
					if rs.Err() != nil {
						b.Fatal(rs.Err())
					}
				case "copy":
					tx, err := conn.Begin(ctx)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := tx.CopyFrom(ctx, pgx.Identifier{"inbox_stage"}, []string{"key", "hash", "rec"}, pgx.CopyFromRows(part)); err != nil {
						b.Fatal(err)
					}
					rs, err := tx.Query(ctx, `INSERT INTO paydesk_push_inbox (key, hash, rec) SELECT key, hash, rec FROM inbox_stage ORDER BY key, hash
						ON CONFLICT (key, hash) DO NOTHING RETURNING id, key, hash`)
					if err != nil {
						b.Fatal(err)
					}
					for rs.Next() {
						got++
					}
					rs.Close()
					if rs.Err() != nil {
						b.Fatal(rs.Err())
					}
					if err := tx.Commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
				if got != batch {
					b.Fatalf("inserted %d of %d", got, batch)
				}
			}
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "pushes/s")
		})
	}
}
