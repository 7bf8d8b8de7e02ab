package kv

import (
	"context"
	"os"
	"testing"

	"paydesk/internal/pgtest"
	"paydesk/store/postgres"
)

// template is the database this package's PostgreSQL tests copy theirs
// from (pgtest.Template): the schema migrated and the kv layout made, as
// the store's open leaves a layout-7 database.
var template = pgtest.NewTemplate(func(url string) error {
	rel, err := postgres.Open(context.Background(), url, true)
	if err != nil {
		return err
	}
	db := OnPostgres(rel, Options{})
	if err := db.Migrate(nil); err != nil {
		_ = db.Close()
		return err
	}
	return db.Close()
})

func TestMain(m *testing.M) {
	code := m.Run()
	template.Drop()
	os.Exit(code)
}
