package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
	"paydesk/internal/pushload"
	"paydesk/store"
)

// readmeRolesSQL is the SQL of the README's team-mode block (the here
// document fed to psql).
func readmeRolesSQL(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)psql -d paydesk <<'SQL'\n(.*?)\nSQL\n`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the README's team mode has no roles block (psql -d paydesk <<'SQL' … SQL)")
	}
	return string(m[1])
}

// TestREADMERolesSQL runs the README's roles SQL on a fresh database the
// way the README says (schema migrated by its owner first), then works as
// the roles it makes: the listener role stores a push through the inbox
// and applies it (recording its delivery to the database's shop endpoint), an operator journals and audits an operation, and the
// viewer reads both lists and is told it may not write.
//
// The database is on the native engine (the owner's open creates its
// typed relations): the grants the README gives on its tables are enough,
// and what the operator was not granted is refused: changing a stored
// push, removing an audit entry.
func TestREADMERolesSQL(t *testing.T) {
	base := pgtest.Fresh(t)
	sql := readmeRolesSQL(t)

	const shop = "http://shop.test/push"
	owner, err := store.Open(base, store.Options{ForwardTo: []string{shop}}) // `paydesk db migrate` by the owner, who sets the shop's endpoint
	if err != nil {
		t.Fatal(err)
	}
	_ = owner.Close()

	// Roles belong to the whole server: this run's get a suffix of their own.
	var r [4]byte
	_, _ = rand.Read(r[:])
	suffix := "_" + hex.EncodeToString(r[:])
	for _, name := range []string{"paydesk_operator", "paydesk_viewer", "alice", "listener", "carol"} {
		sql = regexp.MustCompile(`\b`+name+`\b`).ReplaceAllString(sql, name+suffix)
	}
	sql = strings.ReplaceAll(sql, "PASSWORD '…'", "") // the test server trusts local connections
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("the README's roles SQL: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		for _, role := range []string{"alice", "listener", "carol", "paydesk_operator", "paydesk_viewer"} {
			_, _ = c.Exec(context.Background(), `DROP OWNED BY `+role+suffix+`; DROP ROLE IF EXISTS `+role+suffix)
		}
	})
	as := func(role string) *store.DB {
		t.Helper()
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role + suffix)
		db, err := store.Open(u.String(), store.Options{NoMigrate: true})
		if err != nil {
			t.Fatalf("open as %s: %v", role, err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}

	listener := as("listener")
	listener.StartApplier(func(string, ...any) {})
	p := pushload.GiftCardPush(1, 1250)
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listener.IngestPush(ctx, store.PushRecord{Body: body, Method: "POST", URL: "/push"}, p, nil); err != nil {
		t.Fatalf("the listener role stores a push: %v", err)
	}
	deadline := time.Now().Add(2 * time.Minute) // only a stuck test
	for {
		n, err := listener.InboxWaiting(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener role's applier left %d pushes waiting", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ds, err := listener.Deliveries(ctx, store.DeliveryQuery{}); err != nil || len(ds) != 1 || ds[0].Endpoint != shop {
		t.Fatalf("the listener role records the push's delivery to the database's endpoint: %d deliveries, %v", len(ds), err)
	}

	alice := as("alice")
	if role, canWrite, err := alice.Identity(ctx); err != nil || !canWrite || role != "alice"+suffix {
		t.Fatalf("alice: role %q, may write %v, %v", role, canWrite, err)
	}
	id, err := alice.BeginOp(ctx, store.PendingOp{Operator: "alice@desk", Action: "Refund", Target: p.Key(),
		Audit: &store.AuditEntry{Operator: "alice@desk", Action: "refund", Target: p.Key()}})
	if err != nil {
		t.Fatalf("an operator journals an operation: %v", err)
	}
	if err := alice.ResolveOp(ctx, id, "test"); err != nil {
		t.Fatalf("an operator resolves it: %v", err)
	}

	{
		u, _ := url.Parse(base)
		u.User = url.User("alice" + suffix)
		ac, err := pgx.Connect(ctx, u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer ac.Close(ctx)
		for _, q := range []string{`UPDATE paydesk_pushes SET applied = false`, `DELETE FROM paydesk_audit`, `DELETE FROM paydesk_pushes`} {
			if _, err := ac.Exec(ctx, q); err == nil {
				t.Errorf("the operator may %s", q)
			}
		}
		var n int
		if err := ac.QueryRow(ctx, `SELECT count(*) FROM paydesk_transactions`).Scan(&n); err != nil || n != 1 {
			t.Errorf("the operator reads paydesk_transactions: %d rows, %v", n, err)
		}
	}

	carol := as("carol")
	if _, canWrite, err := carol.Identity(ctx); err != nil || canWrite {
		t.Fatalf("carol (viewer) may write %v, %v; want read-only", canWrite, err)
	}
	if pg, err := carol.TransactionPage(ctx, store.PageQuery{Limit: 10}); err != nil || len(pg.Rows) != 1 {
		t.Fatalf("the viewer reads the transactions: %d rows, %v", len(pg.Rows), err)
	}
	if _, err := carol.ReservationPage(ctx, store.PageQuery{Limit: 10}); err != nil {
		t.Fatalf("the viewer reads the reservations: %v", err)
	}
	if eps, err := carol.ForwardTo(ctx); err != nil || len(eps) != 1 {
		t.Fatalf("the viewer reads the shop's endpoints: %v, %v", eps, err)
	}
	if _, err := carol.BeginOp(ctx, store.PendingOp{Operator: "carol@desk", Action: "Refund", Target: "X"}); err == nil {
		t.Fatal("the viewer journaled an operation")
	} else if !errors.Is(err, store.ErrReadOnlyRole) || !strings.Contains(err.Error(), "may only read") || strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("the viewer's write says %q; want that the role may only read", err)
	}
}

// TestREADMEPsqlReachesCIServer: after `. .ci/pg` the README's psql lines
// (no host, port or user of their own) reach the throwaway server: .ci/pg
// exports PGHOST, PGPORT and PGUSER for the server PAYDESK_TEST_PG names,
// and psql run with nothing but the environment answers there.
func TestREADMEPsqlReachesCIServer(t *testing.T) {
	dsn := os.Getenv("PAYDESK_TEST_PG")
	if dsn == "" {
		t.Skip("PAYDESK_TEST_PG not set (. .ci/pg starts a server)")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"PGHOST": u.Hostname(), "PGPORT": u.Port(), "PGUSER": u.User.Username()} {
		if got := os.Getenv(name); got != want {
			t.Errorf("$%s = %q, want %q (the server of PAYDESK_TEST_PG): the README's psql lines go elsewhere", name, got, want)
		}
	}
	bin := os.Getenv("PAYDESK_TEST_PG_BIN")
	if bin == "" {
		return
	}
	out, err := exec.Command(filepath.Join(bin, "psql"), "-X", "-w", "-At", "-d", strings.TrimPrefix(u.Path, "/"), "-c", "SELECT current_setting('port')").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != u.Port() {
		t.Fatalf("psql with the environment only: %v %s", err, out)
	}
}
