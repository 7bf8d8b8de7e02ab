package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// freshPostgres makes an empty database on the server at $PAYDESK_TEST_PG
// (dropped when the test ends) and returns its URL; without the variable
// the test is skipped, saying how to run it.
func freshPostgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PAYDESK_TEST_PG")
	if base == "" {
		t.Skip("PostgreSQL tests need a server: `. .ci/pg` starts a throwaway one and sets PAYDESK_TEST_PG")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "paydesk_t_" + hex.EncodeToString(b[:])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("PostgreSQL at $PAYDESK_TEST_PG: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(context.Background())
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
