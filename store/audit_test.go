package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
)

// auditLog writes n entries, and completes the second one, as operations do.
func auditLog(t *testing.T, db *DB, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := db.AppendAudit(t.Context(), AuditEntry{Operator: "alice@desk1", Action: "capture", Target: "R1", Result: AuditPending}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.update(t.Context(), func(tx RepoTx, c *Change) error { return completeAudit(tx, 2, "190 S001 Success", true, c) }); err != nil {
		t.Fatal(err)
	}
}

// The log only grows: a completion is an entry of its own, folded into the
// entry it completes when read.
func TestAuditCompletionIsAnEntry(t *testing.T) {
	db := openTest(t)
	auditLog(t, db, 3)
	es, err := db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 || es[1].ID != 2 || es[1].Result != "190 S001 Success" || es[0].Result != AuditPending {
		t.Fatalf("entries %+v", es)
	}
	chk, err := db.VerifyAudit(t.Context())
	if err != nil || !chk.OK() || chk.Entries != 4 || chk.ChainFrom != 1 {
		t.Fatalf("verify %+v %v", chk, err)
	}
}

// The chain shows an entry removed (in the middle, at the end) or edited.
func TestAuditChainDetectsTampering(t *testing.T) {
	pgtest.OwnEngine(t)
	cases := []struct {
		name   string
		tamper func(b Bucket) error
		want   string
	}{
		{"removed in the middle", func(b Bucket) error { return b.Delete(u64(2)) }, "entries 2–2 are missing"},
		{"removed at the end", func(b Bucket) error { return b.Delete(u64(5)) }, "entries 5–5 at the end are missing"},
		{"removed at the start", func(b Bucket) error { return b.Delete(u64(1)) }, "entries before 2 are missing"},
		{"edited", func(b Bucket) error {
			var e AuditEntry
			_ = json.Unmarshal(b.Get(u64(3)), &e)
			e.Amount = e.Amount.Add(dec("100"))
			v, _ := json.Marshal(e)
			return b.Put(u64(3), v)
		}, "entry 3 is not as it was written"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			auditLog(t, db, 4)
			if err := db.bk.Engine().Update(func(tx Tx) error { return tc.tamper(tx.Bucket(bAudit)) }); err != nil {
				t.Fatal(err)
			}
			chk, err := db.VerifyAudit(t.Context())
			if err != nil || chk.OK() || !strings.Contains(strings.Join(chk.Problems, "; "), tc.want) {
				t.Fatalf("verify %+v %v, want %q", chk, err, tc.want)
			}
		})
	}
}

// On PostgreSQL the audit log (paydesk_audit, the native engine's table)
// refuses changes and removals, whoever asks: its triggers, not a grant.
func TestAuditInsertOnlyOnPostgres(t *testing.T) {
	pgtest.OwnEngine(t)
	url := freshNative(t)
	db, err := Open(url, Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	auditLog(t, db, 2)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		`UPDATE paydesk_audit SET operator = 'mallory'`,
		`UPDATE paydesk_audit SET entry = '{}' WHERE id = 1`,
		`DELETE FROM paydesk_audit`,
		`TRUNCATE paydesk_audit`,
		`TRUNCATE paydesk_audit CASCADE`,
	} {
		if _, err := conn.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "inserts only") {
			t.Errorf("%s: %v", q, err)
		}
	}
	if chk, err := db.VerifyAudit(ctx); err != nil || !chk.OK() {
		t.Fatalf("verify %+v %v", chk, err)
	}
}
