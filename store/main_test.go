package store

import (
	"os"
	"testing"

	"paydesk/internal/pgtest"
)

// storeTemplate is the migrated database the PostgreSQL runs of this
// package copy their fresh databases from (pgtest.Template): migrating each
// one anew cost the CI minutes.
var storeTemplate = pgtest.NewTemplate(func(url string) error {
	db, err := Open(url, Options{NoSync: true})
	if err != nil {
		return err
	}
	return db.Close()
})

// freshNative is an empty store on the native PostgreSQL engine, its
// schema copied from the template (skipped without a server).
func freshNative(t testing.TB) string {
	t.Helper()
	return storeTemplate.Fresh(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	storeTemplate.Drop()
	os.Exit(code)
}
