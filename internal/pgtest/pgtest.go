package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Env names the variable holding the URL of the test server's database.
const Env = "PAYDESK_TEST_PG"

// KeepEnv, when set, keeps the databases Fresh creates (for a post-mortem).
const KeepEnv = "PAYDESK_TEST_PG_KEEP"

// URL returns $PAYDESK_TEST_PG, or skips the test, saying how to run it.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		t.Skip("needs PostgreSQL: " + Env + " is not set; from the repository root run " +
			"`. .ci/pg && go test ./...` (starts a throwaway server, stopped on exit), " +
			"or set " + Env + "=postgres://USER@HOST:PORT/DB?sslmode=disable " +
			"(a role that may CREATE DATABASE)")
	}
	return u
}

// Fresh returns the URL of a brand-new, empty database on the test server
// (skipping like URL without one), dropped when the test and its subtests
// end, so tests never see each other's data. Close what uses it in an
// earlier-registered Cleanup or before returning; the drop forces out
// whatever is still connected.
func Fresh(t testing.TB) string {
	t.Helper()
	// template0: never connected to, so concurrent creates cannot trip over
	// "source database is being accessed by other users".
	return fresh(t, URL(t), "template0")
}

// fresh creates a database copied from template, dropped when the test ends.
func fresh(t testing.TB, base, template string) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("pgtest: random name: %v", err)
	}
	name := "paydesk_t_" + hex.EncodeToString(b[:])
	fresh, err := withDatabase(base, name)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", Env, err)
	}

	if err := createFrom(base, name, template); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if os.Getenv(KeepEnv) != "" {
			t.Logf("pgtest: kept database %s (%s set)", name, KeepEnv)
			return
		}
		if err := exec(base, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return fresh
}

// exec runs one statement on its own connection to the database at u.
func exec(u, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns the connection string u pointing at database name
// instead: a postgres:// URL gets a new path, a keyword/value string a
// trailing dbname (the last one wins).
func withDatabase(u, name string) (string, error) {
	if strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		pu, err := url.Parse(u)
		if err != nil {
			return "", err
		}
		pu.Path = "/" + name
		pu.RawPath = ""
		return pu.String(), nil
	}
	if _, err := pgx.ParseConfig(u); err != nil {
		return "", err
	}
	return u + " dbname=" + name, nil
}

// BackendEnv, set to "postgres", makes StoreAt hand out fresh databases
// instead of files: the same flow tests then run on the team's engine.
const BackendEnv = "PAYDESK_STORE_BACKEND"

// StoreAt returns where a test keeps its store: file, or with
// PAYDESK_STORE_BACKEND=postgres a fresh database on the test server (see
// Fresh; the test is skipped without one). With a Template it is a copy of
// the template's prepared database.
func StoreAt(t testing.TB, file string) string {
	t.Helper()
	if os.Getenv(BackendEnv) == "postgres" {
		return Fresh(t)
	}
	return file
}

// OwnEngine marks a test that opens the engines it is about itself (a
// file, a database of its own, every engine in turn) instead of the one
// PAYDESK_STORE_BACKEND names: it runs in the pass without that variable
// and is skipped in the pass with it, which would only run it again. The
// mark sits on the test, so a pass over the engine a variable names needs
// no list of the tests to leave out.
func OwnEngine(t testing.TB) {
	t.Helper()
	if os.Getenv(BackendEnv) != "" {
		t.Skip("opens its engines itself: it runs in the pass without " + BackendEnv)
	}
}

// createFrom creates database name as a copy of template. It asks for
// the file copy: PostgreSQL 15's default (WAL_LOG) writes every block of
// the template to the WAL, about three times as slow for databases this
// small (20 copies of the store's migrated schema on the 2-core VM: 21 s
// against 7.6 s), and the suites make hundreds. A server older than 15
// knows no strategy and copies files anyway.
func createFrom(base, name, template string) error {
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	err := exec(base, create+" STRATEGY FILE_COPY")
	if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) && pgErr.Code == "42601" {
		err = exec(base, create) // syntax error: no STRATEGY before 15
	}
	return err
}

// Template is a database prepared once (the store's schema migrated into
// it) that fresh databases are copied from: CREATE DATABASE … TEMPLATE
// copies the files, where migrating every fresh database runs a hundred
// statements (about half a second each on a busy machine, hundreds of
// times in the store's suite). A test package makes one in TestMain and
// drops it after m.Run.
type Template struct {
	prepare func(url string) error
	once    sync.Once
	name    string
	err     error
}

// NewTemplate makes a template that prepare readies (it must close every
// connection it opened: a database with one cannot be copied).
func NewTemplate(prepare func(url string) error) *Template { return &Template{prepare: prepare} }

// StoreAt is pgtest.StoreAt with the database copied from the template.
func (tp *Template) StoreAt(t testing.TB, file string) string {
	t.Helper()
	if os.Getenv(BackendEnv) != "postgres" {
		return file
	}
	return tp.Fresh(t)
}

// Fresh is pgtest.Fresh with the database copied from the template: for
// the tests that always run on PostgreSQL (skipped without a server).
func (tp *Template) Fresh(t testing.TB) string {
	t.Helper()
	base := URL(t)
	tp.once.Do(func() {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			tp.err = err
			return
		}
		name := "paydesk_tmpl_" + hex.EncodeToString(b[:])
		u, err := withDatabase(base, name)
		if err == nil {
			err = createFrom(base, name, "template0")
		}
		if err == nil {
			tp.name = name
			err = tp.prepare(u)
		}
		tp.err = err
	})
	if tp.err != nil {
		t.Fatalf("pgtest: template: %v", tp.err)
	}
	return fresh(t, base, tp.name)
}

// Drop removes the template's database, if one was made.
func (tp *Template) Drop() {
	if tp.name == "" {
		return
	}
	if u := os.Getenv(Env); u != "" {
		_ = exec(u, "DROP DATABASE IF EXISTS "+pgx.Identifier{tp.name}.Sanitize()+" WITH (FORCE)")
	}
}
