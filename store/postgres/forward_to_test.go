package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"testing"

	"github.com/jackc/pgx/v5"
)

// A database whose roles were granted table by table before 0020 (the
// README's roles: the listener's may insert pushes, the viewer's read
// them) gets the same on paydesk_forward_to from 0020, so its appliers,
// which read it with every push, keep working: the storing role may read
// and set it, the reading role only read it.
func TestForwardToGrantedOnUpgrade(t *testing.T) {
	url := template.Fresh(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var r [4]byte
	_, _ = rand.Read(r[:])
	app, view := "ftapp_"+hex.EncodeToString(r[:]), "ftview_"+hex.EncodeToString(r[:])
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for _, role := range []string{app, view} {
			_, _ = c.Exec(context.Background(), "DROP OWNED BY "+role)
			_, _ = c.Exec(context.Background(), "DROP ROLE "+role)
		}
	})
	sql, err := fs.ReadFile(migrationFiles, "migrations/0020_forward_to.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE ROLE " + app, "CREATE ROLE " + view,
		"GRANT SELECT, INSERT ON paydesk_pushes TO " + app, "GRANT SELECT ON paydesk_pushes TO " + view,
		"DROP TABLE paydesk_forward_to", // as it was before 0020
		string(sql),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	for _, c := range []struct {
		role, priv string
		want       bool
	}{
		{app, "SELECT", true}, {app, "INSERT", true}, {app, "DELETE", true}, {app, "UPDATE", false},
		{view, "SELECT", true}, {view, "INSERT", false}, {view, "DELETE", false},
	} {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT has_table_privilege($1, 'paydesk_forward_to', $2)`, c.role, c.priv).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s %s on paydesk_forward_to: %v, want %v", c.role, c.priv, got, c.want)
		}
	}
}
