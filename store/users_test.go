package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"paydesk/internal/pgtest"
	"paydesk/store/postgres"
)

func testUser(name, fp string) User {
	return User{Name: name, Role: "agent", Key: "ssh-ed25519 AAAA" + name, Fingerprint: "SHA256:" + fp,
		Added: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), AddedBy: "root"}
}

// usersCases runs the users' rules on db: added once, a key names one
// user, removed ones are gone, invalid ones refused.
func usersCases(t *testing.T, db *DB) {
	t.Helper()
	if us, err := db.Users(t.Context()); err != nil || len(us) != 0 {
		t.Fatalf("a new store's users = %v, %v; want none", us, err)
	}
	for _, tc := range []struct {
		name string
		u    User
		want string // "" means added
	}{
		{"bob", testUser("bob", "b"), ""},
		{"alice", testUser("alice", "a"), ""},
		{"a name twice", testUser("alice", "z"), "exists already"},
		{"a key twice", testUser("carol", "a"), "is alice's already"},
		{"a bad name", testUser("Al ice", "q"), "the name must be"},
		{"no role", func() User { u := testUser("dave", "d"); u.Role = ""; return u }(), "role: must be set"},
		{"no fingerprint", func() User { u := testUser("dave", "d"); u.Fingerprint = "MD5:x"; return u }(), "fingerprint"},
		{"two lines", func() User { u := testUser("dave", "d"); u.Key = "a\nb"; return u }(), "one authorized_keys line"},
	} {
		err := db.AddUser(t.Context(), tc.u)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: AddUser = %v; want %q", tc.name, err, tc.want)
		}
	}
	us, err := db.Users(t.Context())
	if err != nil || len(us) != 2 || us[0].Name != "alice" || us[1].Name != "bob" {
		t.Fatalf("Users = %+v, %v; want alice, bob", us, err)
	}
	if want := testUser("alice", "a"); !us[0].Added.Equal(want.Added) || us[0].Key != want.Key || us[0].Role != "agent" || us[0].AddedBy != "root" {
		t.Errorf("alice read back as %+v; want %+v", us[0], want)
	}
	if u, err := db.UserByKey(t.Context(), "SHA256:b"); err != nil || u.Name != "bob" {
		t.Errorf("UserByKey(b) = %+v, %v", u, err)
	}
	if err := db.RemoveUser(t.Context(), "bob", "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UserByKey(t.Context(), "SHA256:b"); !errors.Is(err, ErrNoUser) {
		t.Errorf("a removed user's key: %v; want ErrNoUser", err)
	}
	if err := db.RemoveUser(t.Context(), "bob", "root"); !errors.Is(err, ErrNoUser) {
		t.Errorf("removing bob twice: %v; want ErrNoUser", err)
	}
	// The key of a removed user may be given to someone else.
	if err := db.AddUser(t.Context(), testUser("carol", "b")); err != nil {
		t.Errorf("carol with bob's old key: %v", err)
	}
}

// TestUsers: on the test run's engine (bbolt, or the kv PostgreSQL with
// PAYDESK_STORE_BACKEND=postgres).
func TestUsers(t *testing.T) {
	usersCases(t, openTest(t))
}

// TestUsersRelational: the same rules on the native engine (0012).
func TestUsersRelational(t *testing.T) {
	pgtest.OwnEngine(t)
	url := freshNative(t)
	db, err := Open(url, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	usersCases(t, db)
	// The rows are the table a person reads with psql.
	e, err := postgres.Open(context.Background(), url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var n int
	if err := e.Pool().QueryRow(context.Background(), `SELECT count(*) FROM paydesk_users WHERE name IN ('alice', 'carol')`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("paydesk_users holds %d of alice and carol, %v", n, err)
	}
}

// A users bucket written by the bucket engine survives a reopen, and a
// cache written before users read as having none.
func TestUsersReopen(t *testing.T) {
	pgtest.OwnEngine(t)
	path := t.TempDir() + "/paydesk.db"
	db, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if us, err := db.Users(t.Context()); err != nil || len(us) != 0 {
		t.Fatalf("users of a cache without the bucket = %v, %v", us, err)
	}
	if err := db.AddUser(t.Context(), testUser("alice", "a")); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if u, err := db.UserByKey(t.Context(), "SHA256:a"); err != nil || u.Name != "alice" {
		t.Fatalf("alice after reopen: %+v, %v", u, err)
	}
}
