package store

import (
	"path/filepath"
	"testing"
	"time"

	"paydesk/internal/pgtest"
	"paydesk/store/postgres"
	"paydesk/store/repotest"
)

// repoEngines are the engines the contract test runs on: need skips the
// engine when what it runs on is missing, open opens an empty store. An
// engine joins the test with one line here.
var repoEngines = []struct {
	name string
	need func(t *testing.T)
	open func(t *testing.T) Repo
}{
	{"bbolt", func(*testing.T) {}, func(t *testing.T) Repo { return openRepoAt(t, filepath.Join(t.TempDir(), "paydesk.db"), false) }},
	// Skipped without PAYDESK_TEST_PG: from the repository root run
	// `. .ci/pg && go test -run TestRepoContract ./store/`.
	{"postgres", func(t *testing.T) { pgtest.URL(t) }, func(t *testing.T) Repo { return openRepoAt(t, freshNative(t), true) }},
	// The kv engine on PostgreSQL is only what the conversion reads (and
	// what the tests of the conversion write a layout-7 database with):
	// it keeps the contract as long as those tests build on it.
	{"postgres-kv", func(t *testing.T) { pgtest.URL(t) }, func(t *testing.T) Repo { return openRepoAt(t, pgtest.Fresh(t), false) }},
}

// openRepoAt opens where on the engine native says (a file is always
// bbolt's): on PostgreSQL the native engine, Open's default, or the kv
// engine the conversion reads.
func openRepoAt(t *testing.T, where string, native bool) Repo {
	t.Helper()
	db, err := Open(where, Options{NoSync: true, Now: func() time.Time { return t0 }, kvEngine: !native})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, rel := db.repo.(*postgres.Engine); rel != native {
		t.Fatalf("opened on %T", db.repo)
	}
	return db.repo
}

// TestRepoContract holds every engine, opened as Open opens it, to what
// store/domain/repo.go promises (the suite is store/repotest's; the native
// engine's own package runs it too).
func TestRepoContract(t *testing.T) {
	for _, e := range repoEngines {
		t.Run(e.name, func(t *testing.T) {
			e.need(t)
			repotest.Run(t, e.open)
		})
	}
}
