package store

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestForwardToReadOnlyNeverWrites: a process whose config says read-only
// and names endpoints leaves a store that keeps none as it is — no
// endpoints, no audit entry — and is still refused by a store that keeps
// others. Before, its first open wrote them (and an audit entry) into the
// file.
func TestForwardToReadOnlyNeverWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "paydesk.db")
	open := func(ro bool, forward ...string) (*DB, error) {
		return Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: forward, ForwardToReadOnly: ro})
	}
	db, err := open(true, "http://shop.test/a")
	if err != nil {
		t.Fatal(err)
	}
	eps, err := db.ForwardTo(t.Context())
	if err != nil || len(eps) != 0 {
		t.Fatalf("after a read-only open: endpoints %v, %v; want none", eps, err)
	}
	audit, err := db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range audit {
		if e.Action == AuditForwardTo {
			t.Fatalf("a read-only open wrote an audit entry: %+v", e)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = open(false, "http://shop.test/b")
	if err != nil {
		t.Fatal(err)
	}
	if eps, _ := db.ForwardTo(t.Context()); !slices.Equal(eps, []string{"http://shop.test/b"}) {
		t.Fatalf("a writing process's endpoints: %v", eps)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := open(true, "http://shop.test/a"); !errors.Is(err, ErrForwardToDiffers) {
		t.Fatalf("a read-only open given other endpoints: %v; want refused", err)
	}
}
