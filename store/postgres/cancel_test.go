package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"paydesk/internal/pgtest"
)

// TestGivenUpQueryStopsOnTheServer: a query whose context is cancelled is
// stopped by the server (a cancel request: it answers 57014), and its
// connection serves the next query. pgx's default dropped the connection
// and left the server to run the query to its end (a console's count of a
// filter typed over ran on beside the next key's reads).
func TestGivenUpQueryStopsOnTheServer(t *testing.T) {
	pgtest.URL(t)
	e := openNative(t)
	conn, err := e.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	pid := conn.Conn().PgConn().PID()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "SELECT pg_sleep(600)")
		done <- err
	}()
	// Cancel once the server runs it (the other connection asks the
	// server, no clock involved).
	for {
		var running bool
		if err := e.pool.QueryRow(t.Context(),
			`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%')`, pid).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running {
			break
		}
	}
	cancel()
	err = <-done
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("the given-up query ended with %v, want the server's cancel (57014)", err)
	}
	if !IsTimeout(err) {
		t.Errorf("IsTimeout(%v) = false", err)
	}
	var one int
	if err := conn.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("the connection after the cancel: %v", err)
	}
	if got := conn.Conn().PgConn().PID(); got != pid {
		t.Fatalf("the connection was replaced (pid %d, was %d)", got, pid)
	}
}
