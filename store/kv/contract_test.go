package kv

import (
	"path/filepath"
	"testing"

	"paydesk/store/domain"
	"paydesk/store/postgres"
	"paydesk/store/repotest"
)

// TestContract holds the bucket engine to what store/domain/repo.go
// promises (the suite is store/repotest's; the native engine's package
// runs it too), on a file and on the kv tables of a PostgreSQL database,
// opened as the store opens them.
func TestContract(t *testing.T) {
	engines := []struct {
		name string
		open func(t *testing.T) domain.Repo
	}{
		{"bbolt", func(t *testing.T) domain.Repo { return openBoltAt(t, filepath.Join(t.TempDir(), "paydesk.db")).Repo() }},
		// The kv engine on PostgreSQL is only what the conversion reads
		// (and what the tests of the conversion write a layout-7 database
		// with): it keeps the contract as long as those tests build on
		// it. Skipped without PAYDESK_TEST_PG: from the repository root
		// run `. .ci/pg && go test -run TestContract ./store/kv/`.
		{"postgres-kv", func(t *testing.T) domain.Repo { return openPG(t).Repo() }},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { repotest.Run(t, e.open) })
	}
}

// openBoltAt opens the file at path as the store opens a cache, closed
// when the test ends.
func openBoltAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := OpenBolt(path, Options{File: FileOptions{NoSync: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// openPG opens the kv tables of a fresh database as the store opens a
// layout-7 database (skipped without a server), closed when the test
// ends.
func openPG(t testing.TB) *DB {
	t.Helper()
	rel, err := postgres.Open(t.Context(), template.Fresh(t), true)
	if err != nil {
		t.Fatal(err)
	}
	db := OnPostgres(rel, Options{})
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(nil); err != nil {
		t.Fatal(err)
	}
	return db
}
