package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pushload"
)

// ServerCPU returns a function that reads the CPU the PostgreSQL server
// behind url has used so far (pushload.ServerCPU), or nil when the server
// is not on this machine or its data directory cannot be read. A
// benchmark reads it before and after the work it measures: on a shared
// machine the server's CPU a row travels between runs, where the rows a
// second follow the machine's minute.
func ServerCPU(tb testing.TB, url string) func() time.Duration {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil
	}
	defer conn.Close(ctx)
	var dir string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir); err != nil {
		return nil
	}
	pm := pushload.Postmaster(dir)
	if pm == 0 {
		return nil
	}
	return func() time.Duration { return pushload.ServerCPU(pm) }
}
