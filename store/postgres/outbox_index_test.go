package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
)

// TestDueHeadsReadTheChainIndex: the worker's two looks (the due heads,
// and the next attempt of the others) read the pending deliveries through
// paydesk_deliveries_pending_chain in (endpoint, key, id) order instead of
// sorting every pending row — on a table of 20,000 pending deliveries (a
// shop down) and as many delivered, analysed as autovacuum would.
func TestDueHeadsReadTheChainIndex(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Fresh(t)
	e, err := Open(ctx, dsn, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	now := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	if _, err := conn.Exec(ctx, `INSERT INTO paydesk_deliveries (id, push_id, key, endpoint, created, state, next_at)
		SELECT g, g, lpad(upper(to_hex(g % 5000)), 32, '0'), 'http://shop' || (g % 2) || '.example.test/push', $1,
			CASE WHEN g % 2 = 0 THEN 'pending' ELSE 'delivered' END, CASE WHEN g % 2 = 0 THEN $2::timestamptz END
		FROM generate_series(1, 40000) g`, now.Add(-time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// ANALYZE samples 300 rows per unit of the statistics target: at the
	// default (100) it read 30,000 of the 40,000 rows at random, so the
	// statistics, and with them the plan, changed from run to run (it
	// chose another plan once under load). At 1000 it reads them all.
	if _, err := conn.Exec(ctx, `SET default_statistics_target = 1000`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE paydesk_deliveries`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sql string
		args      []any
	}{
		{"due heads", pgDueHeads, []any{now, int64(256)}},
		{"next head", pgNextHead, []any{now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := conn.Query(ctx, "EXPLAIN "+tc.sql, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan []string
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, line)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			text := strings.Join(plan, "\n")
			if !strings.Contains(text, "using paydesk_deliveries_pending_chain") {
				t.Errorf("the look does not read the chain index:\n%s", text)
			}
			if strings.Contains(text, "Sort Key: paydesk_deliveries.endpoint") {
				t.Errorf("the look sorts the pending deliveries:\n%s", text)
			}
			t.Logf("EXPLAIN %s:\n%s", tc.name, text)
		})
	}
}
