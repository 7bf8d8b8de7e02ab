package postgres

import (
	"context"
	"os"
	"testing"

	"paydesk/internal/pgtest"
)

// template is the migrated database this package's tests copy their
// fresh ones from (pgtest.Template): migrating each anew runs every
// migration file again.
var template = pgtest.NewTemplate(func(url string) error {
	e, err := Open(context.Background(), url, true)
	if err != nil {
		return err
	}
	return e.Close()
})

// openNative opens a fresh, migrated database on the native engine
// (skipped without a server), closed when the test ends.
func openNative(t testing.TB) *Engine {
	t.Helper()
	e, err := Open(t.Context(), template.Fresh(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func TestMain(m *testing.M) {
	code := m.Run()
	template.Drop()
	os.Exit(code)
}
