package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paydesk/internal/pgtest"
	"paydesk/store/postgres"
)

// peopleCache is a cache file with two users and three approval
// requests: one waiting, one approved (and sent), one denied.
func peopleCache(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "paydesk.db"), Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, u := range []User{testUser("alice", "a"), testUser("bob", "b")} {
		if err := db.AddUser(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SetUserRole(t.Context(), "bob", "finance", "root"); err != nil {
		t.Fatal(err)
	}
	for _, amount := range []string{"150.00", "200.00", "300.00"} {
		if _, err := db.RequestApproval(t.Context(), Approval{Created: t0, Expires: t0.Add(72 * time.Hour), Requester: "alice",
			RequesterRole: "agent", RequestedBy: "alice (SHA256:a)", Kind: "refund", Target: "K1", Amount: dec(amount),
			Currency: "EUR", Note: "return", Request: json.RawMessage(`{"Transaction":"K1","Amount":"` + amount + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.DecideApproval(t.Context(), 2, Decision{Decider: "bob", DecidedBy: "bob (SHA256:b)", Approve: true, Time: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := db.ApprovalSent(t.Context(), 2, 7, "refund settled"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DecideApproval(t.Context(), 3, Decision{Decider: "bob", Reason: "not ours", Time: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return db
}

// samePeople fails unless dst holds src's users and requests as src has
// them, and numbers its next request after them.
func samePeople(t *testing.T, src, dst *DB) {
	t.Helper()
	want, err := src.Users(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.Users(t.Context())
	if err != nil || len(got) != len(want) {
		t.Fatalf("users copied: %+v, %v; want %+v", got, err, want)
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Name != w.Name || g.Role != w.Role || g.Key != w.Key || g.Fingerprint != w.Fingerprint || !g.Added.Equal(w.Added) || g.AddedBy != w.AddedBy {
			t.Errorf("user %d copied as %+v; want %+v", i, g, w)
		}
	}
	if u, err := dst.UserByKey(t.Context(), "SHA256:b"); err != nil || u.Name != "bob" || u.Role != "finance" {
		t.Errorf("bob's key after the copy: %+v, %v", u, err)
	}
	wa, err := src.Approvals(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ga, err := dst.Approvals(t.Context())
	if err != nil || len(ga) != len(wa) {
		t.Fatalf("requests copied: %d, %v; want %d", len(ga), err, len(wa))
	}
	for i := range wa {
		w, g := wa[i], ga[i]
		if g.ID != w.ID || g.State != w.State || !g.Amount.Equal(w.Amount) || g.Requester != w.Requester || g.Decider != w.Decider ||
			g.Reason != w.Reason || g.OpID != w.OpID || g.Result != w.Result || !g.Expires.Equal(w.Expires) || !g.Decided.Equal(w.Decided) {
			t.Errorf("request %d copied as %+v; want %+v", w.ID, g, w)
		}
		var m map[string]any
		if err := json.Unmarshal(g.Request, &m); err != nil || m["Amount"] != w.Amount.StringFixed(2) {
			t.Errorf("request %d's operation copied as %s (%v)", w.ID, g.Request, err)
		}
	}
	next, err := dst.RequestApproval(t.Context(), Approval{Created: t0, Expires: t0.Add(time.Hour), Requester: "carol", Kind: "refund",
		Target: "K2", Amount: dec("120.00"), Currency: "EUR", Request: json.RawMessage(`{}`)})
	if err != nil || next.ID != uint64(len(wa))+1 {
		t.Errorf("the first request after the copy: %+v, %v; want ID %d", next, err, len(wa)+1)
	}
}

// copyTarget is where a test copies a cache: another file, or a team's
// database (converted to the native engine's tables by its first open).
type copyTarget struct {
	name string
	copy func(t *testing.T, src *DB) *DB
}

func copyTargets() []copyTarget {
	return []copyTarget{
		{"into a file", func(t *testing.T, src *DB) *DB {
			dst, err := Open(filepath.Join(t.TempDir(), "copy.db"), Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := src.CopyTo(t.Context(), dst, nil); err != nil {
				t.Fatal(err)
			}
			return dst
		}},
		{"into PostgreSQL, converted", func(t *testing.T, src *DB) *DB {
			dsn := pgtest.Fresh(t)
			if err := src.CopyInto(t.Context(), dsn, nil); err != nil {
				t.Fatal(err)
			}
			dst, err := Open(dsn, Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if _, native := dst.repo.(*postgres.Engine); !native {
				t.Fatalf("opened on %T; want the native engine", dst.repo)
			}
			return dst
		}},
	}
}

// TestCopyCarriesUsersAndApprovals: paydesk db copy keeps the users and
// the approval requests — into another cache file (the buckets) and into
// a team's database, converted there to paydesk_users and
// paydesk_approvals by the native engine's conversion.
func TestCopyCarriesUsersAndApprovals(t *testing.T) {
	pgtest.OwnEngine(t)
	for _, tc := range copyTargets() {
		t.Run(tc.name, func(t *testing.T) {
			src := peopleCache(t)
			dst := tc.copy(t, src)
			defer dst.Close()
			samePeople(t, src, dst)
		})
	}
}

// TestCopyRefusesAnotherUserUnderTheName: a database whose user of the
// same name is someone else (another cache copied in) is refused before
// anything is written.
func TestCopyRefusesAnotherUserUnderTheName(t *testing.T) {
	pgtest.OwnEngine(t)
	src := peopleCache(t)
	dst, err := Open(filepath.Join(t.TempDir(), "copy.db"), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	// Written straight to the bucket: AddUser's audit entry would clash
	// first.
	other := testUser("alice", "other")
	if err := dst.repo.Update(context.Background(), func(tx RepoTx) error { return tx.PutUser(&other) }); err != nil {
		t.Fatal(err)
	}
	if err := src.CopyTo(t.Context(), dst, nil); !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "copy users") {
		t.Fatalf("copy over another alice: %v; want ErrInUse", err)
	}
	if us, _ := dst.Users(t.Context()); len(us) != 1 || us[0].Fingerprint != "SHA256:other" {
		t.Errorf("after the refused copy the users are %+v; want the other alice alone", us)
	}
}
