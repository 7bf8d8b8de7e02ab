package store

import (
	"context"

	"paydesk/store/postgres"
)

// openPostgres opens a database's kv engine, for the tests that write or
// read a layout-7 database's buckets.
func openPostgres(ctx context.Context, url string, migrate bool) (*pgEngine, error) {
	rel, err := postgres.Open(ctx, url, migrate)
	if err != nil {
		return nil, err
	}
	return kvOn(rel), nil
}
