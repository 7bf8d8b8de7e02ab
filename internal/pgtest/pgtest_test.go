package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
)

func connect(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), u)
	if err != nil {
		t.Fatalf("connect %s: %v", u, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func one[T any](t *testing.T, conn *pgx.Conn, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

const userTables = `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`

// Two Fresh databases are distinct and empty, and one's data is not the
// other's; both are gone once their test ends.
func TestFreshGivesTwoDifferentEmptyDatabases(t *testing.T) {
	ctx := context.Background()
	admin := connect(t, pgtest.URL(t))

	var names [2]string
	t.Run("fresh", func(t *testing.T) {
		a, b := pgtest.Fresh(t), pgtest.Fresh(t)
		if a == b {
			t.Fatalf("Fresh returned the same URL twice: %s", a)
		}
		ca, cb := connect(t, a), connect(t, b)
		names[0] = one[string](t, ca, "SELECT current_database()")
		names[1] = one[string](t, cb, "SELECT current_database()")
		if names[0] == names[1] {
			t.Fatalf("both URLs lead to database %s", names[0])
		}
		for i, c := range []*pgx.Conn{ca, cb} {
			if n := one[int64](t, c, userTables); n != 0 {
				t.Errorf("database %s is not empty: %d relations", names[i], n)
			}
		}
		if _, err := ca.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		if n := one[int64](t, ca, "SELECT count(*) FROM t"); n != 1 {
			t.Errorf("rows in t = %d, want 1", n)
		}
		if n := one[int64](t, cb, userTables); n != 0 {
			t.Errorf("a table created in %s shows in %s", names[0], names[1])
		}
	})
	if t.Failed() {
		return
	}
	for _, name := range names {
		if n := one[int64](t, admin, "SELECT count(*) FROM pg_database WHERE datname = $1", name); n != 0 {
			t.Errorf("database %s still exists after its test ended", name)
		}
	}
}

// Fresh from many parallel tests at once: each gets its own database.
func TestFreshInParallel(t *testing.T) {
	pgtest.URL(t)
	for i := range 6 {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			c := connect(t, pgtest.Fresh(t))
			if _, err := c.Exec(context.Background(), "CREATE TABLE mine (x int)"); err != nil {
				t.Fatalf("parallel test %d: %v", i, err)
			}
		})
	}
}
