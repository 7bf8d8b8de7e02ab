package store

import (
	"errors"
	"strings"
	"testing"

	"paydesk/internal/pgtest"
)

// usersAuditCases: every change to the users is an audit entry naming
// who made it, the user and what changed, in the log's chain.
func usersAuditCases(t *testing.T, db *DB) {
	t.Helper()
	steps := []struct {
		name       string
		do         func() error
		wantErr    error
		wantAction string // "" means no entry
		wantOp     string
		wantResult string
	}{
		{"add", func() error { return db.AddUser(t.Context(), testUser("alice", "a")) }, nil,
			"user-add", "root", "added: role agent, key SHA256:a"},
		{"role", func() error {
			_, err := db.SetUserRole(t.Context(), "alice", "finance", "admin (SHA256:z)")
			return err
		}, nil,
			"user-role", "admin (SHA256:z)", "role finance, was agent (key SHA256:a)"},
		{"the same role", func() error { _, err := db.SetUserRole(t.Context(), "alice", "finance", "root"); return err }, nil,
			"", "", ""},
		{"role of nobody", func() error { _, err := db.SetUserRole(t.Context(), "zed", "admin", "root"); return err }, ErrNoUser,
			"", "", ""},
		{"remove", func() error { return db.RemoveUser(t.Context(), "alice", "bob (SHA256:b)") }, nil,
			"user-remove", "bob (SHA256:b)", "removed: was role finance, key SHA256:a"},
		{"remove nobody", func() error { return db.RemoveUser(t.Context(), "alice", "root") }, ErrNoUser,
			"", "", ""},
	}
	seen := 0
	for _, st := range steps {
		err := st.do()
		if st.wantErr == nil && err != nil || st.wantErr != nil && !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: %v; want %v", st.name, err, st.wantErr)
		}
		es, err := db.Audit(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var users []AuditEntry
		for _, e := range es {
			if strings.HasPrefix(e.Action, "user-") {
				users = append(users, e)
			}
		}
		if st.wantAction == "" {
			if len(users) != seen {
				t.Errorf("%s: %d user entries; want %d (nothing written)", st.name, len(users), seen)
			}
			continue
		}
		seen++
		if len(users) != seen {
			t.Fatalf("%s: %d user entries; want %d", st.name, len(users), seen)
		}
		e := users[0] // newest first
		if e.Action != st.wantAction || e.Operator != st.wantOp || e.Target != "user alice" || e.Result != st.wantResult {
			t.Errorf("%s: entry %+v; want %s by %s on user alice: %s", st.name, e, st.wantAction, st.wantOp, st.wantResult)
		}
	}
	if ck, err := db.VerifyAudit(t.Context()); err != nil || !ck.OK() {
		t.Errorf("VerifyAudit after the user changes: %+v, %v", ck, err)
	}
}

// TestUsersAudited: on the test run's engine.
func TestUsersAudited(t *testing.T) {
	usersAuditCases(t, openTest(t))
}

// TestUsersAuditedRelational: the same on the native engine.
func TestUsersAuditedRelational(t *testing.T) {
	pgtest.OwnEngine(t)
	db, err := Open(freshNative(t), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	usersAuditCases(t, db)
}
