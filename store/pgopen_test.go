package store

import (
	"context"

	"paydesk/store/kv"
	"paydesk/store/postgres"
)

// openPostgres opens a database's kv engine, for the tests that write or
// read a layout-7 database's buckets.
func openPostgres(ctx context.Context, url string, migrate bool) (kv.Engine, error) {
	rel, err := postgres.Open(ctx, url, migrate)
	if err != nil {
		return nil, err
	}
	return kv.OnPostgres(rel, kv.Options{}).Engine(), nil
}
