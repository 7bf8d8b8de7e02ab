package store

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
	"paydesk/store/domain"
	"paydesk/store/postgres"
)

var testAuditKey, _ = AuditKeyFromSecret("merchant-secret")

// openAt opens the store at where (a file or a database) with the audit
// key given (nil: unkeyed), closed when the test ends.
func openAt(t *testing.T, where string, key []byte) *DB {
	t.Helper()
	db, err := Open(where, Options{NoSync: true, Now: func() time.Time { return t0 }, AuditKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// forge appends an entry the way someone with write access to the store
// but without the key would: the next number, chained to the last entry
// exactly as paydesk chains them, with whatever key fields the forger
// makes up.
func forge(t *testing.T, db *DB, e AuditEntry) uint64 {
	t.Helper()
	var id uint64
	// The forger writes the engine's own storage: the bucket, or the
	// table with psql (as paydesk's role, which may insert into it).
	if rel, ok := db.repo.(*postgres.Engine); ok {
		// The engine's own append, with a "key" that keeps whatever the
		// forger wrote: the row is what a psql INSERT would make.
		err := rel.Update(context.Background(), func(tx RepoTx) error {
			got, err := tx.AppendAudit(e, forgedSeal{})
			id = got.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	err := db.bk.Engine().Update(func(tx Tx) error {
		b := tx.Bucket(bAudit)
		_, last := b.Cursor().Last()
		var err error
		if id, err = b.NextSequence(); err != nil {
			return err
		}
		e.ID, e.Prev = id, domain.ChainHash(last)
		v, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return b.Put(u64(id), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestAuditForgedEntryIsNamed (issue 24): an entry added behind paydesk's
// back, correctly chained, is reported by name — not keyed, keyed with a
// made-up MAC, a real entry's MAC copied, keyed with another key — while
// the log paydesk wrote verifies. The old code said "intact": its chain has
// no key.
func TestAuditForgedEntryIsNamed(t *testing.T) {
	other := newAuditKeyring([]byte("another key"))
	cases := []struct {
		name  string
		entry func(real AuditEntry) AuditEntry
		want  string
	}{
		{"unkeyed", func(AuditEntry) AuditEntry {
			return AuditEntry{Time: t0, Operator: "alice@desk1", Action: "refund", Target: "R1", Amount: dec("999.00"), Currency: "EUR", Result: "190 Success"}
		}, "is forged: not keyed"},
		{"made-up MAC", func(real AuditEntry) AuditEntry {
			return AuditEntry{Time: t0, Operator: "alice@desk1", Action: "capture", Target: "R1", Result: "490 Failed", KeyID: real.KeyID, MAC: strings.Repeat("ab", 32)}
		}, "is forged: its key does not match"},
		{"a real entry's MAC", func(real AuditEntry) AuditEntry {
			real.Result, real.Completes = "490 Failed", 2
			return real
		}, "is forged: its key does not match"},
		{"another key", func(AuditEntry) AuditEntry {
			var e AuditEntry
			v, _ := other.seal(AuditEntry{Time: t0, Operator: "alice@desk1", Action: "refund", Target: "R1", Result: "190 Success"})
			_ = json.Unmarshal(v, &e)
			return e
		}, "is keyed with another key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := openAt(t, pgtest.StoreAt(t, filepath.Join(t.TempDir(), "c.db")), testAuditKey)
			auditLog(t, db, 3)
			if chk, err := db.VerifyAudit(t.Context()); err != nil || !chk.OK() || chk.KeyedFrom != 1 || chk.Unkeyed != 0 {
				t.Fatalf("the log paydesk wrote: %+v %v", chk, err)
			}
			var real AuditEntry
			if err := db.repo.View(context.Background(), func(tx RepoTx) error {
				e, err := tx.AuditEntry(2)
				if err == nil && e != nil {
					real = *e
				}
				return err
			}); err != nil || real.ID != 2 {
				t.Fatalf("entry 2: %+v %v", real, err)
			}
			id := forge(t, db, tc.entry(real))
			chk, err := db.VerifyAudit(t.Context())
			got := strings.Join(chk.Problems, "; ")
			if err != nil || chk.OK() || !strings.Contains(got, "entry "+strconv.FormatUint(id, 10)+" "+tc.want) {
				t.Fatalf("verify %+v %v, want entry %d %q", chk, err, id, tc.want)
			}
			// paydesk goes on writing after it; the forgery stays named
			auditLog(t, db, 1)
			if chk, _ := db.VerifyAudit(t.Context()); chk.OK() || !strings.Contains(strings.Join(chk.Problems, "; "), "entry "+strconv.FormatUint(id, 10)+" ") {
				t.Fatalf("after more entries: %+v", chk)
			}
		})
	}
}

// TestAuditUnkeyedLogIsAnchored: a log written before keying keeps its
// entries; they are reported as unkeyed, written before keying — not as
// keyed ones — and the first keyed write puts a keyed checkpoint after
// them that anchors them: one edited afterwards shows.
func TestAuditUnkeyedLogIsAnchored(t *testing.T) {
	where := pgtest.StoreAt(t, filepath.Join(t.TempDir(), "c.db"))
	old, err := Open(where, Options{NoSync: true, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	auditLog(t, old, 3) // entries 1–4 (4 completes 2)
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, where, testAuditKey)
	chk, err := db.VerifyAudit(t.Context())
	if err != nil || !chk.OK() || chk.Unkeyed != 4 || chk.KeyedFrom != 0 {
		t.Fatalf("before a keyed write: %+v %v", chk, err)
	}
	if _, err := db.AppendAudit(t.Context(), AuditEntry{Operator: "alice@desk1", Action: "capture", Target: "R2", Result: AuditPending}); err != nil {
		t.Fatal(err)
	}
	chk, err = db.VerifyAudit(t.Context())
	if err != nil || !chk.OK() || chk.Unkeyed != 4 || chk.KeyedFrom != 5 || chk.Last != 6 {
		t.Fatalf("after: %+v %v", chk, err)
	}
	es, _ := db.Audit(t.Context(), 0)
	if es[1].Action != AuditCheckpoint || !strings.Contains(es[1].Result, "entries up to 4 were written before the log was keyed") {
		t.Fatalf("the checkpoint: %+v", es[1])
	}
	forge(t, db, AuditEntry{Time: t0, Operator: "mallory", Action: "refund", Target: "R1", Result: "190 Success"})
	if chk, _ := db.VerifyAudit(t.Context()); chk.OK() || !strings.Contains(strings.Join(chk.Problems, "; "), "entry 7 is forged: not keyed") {
		t.Fatalf("a forgery after the checkpoint: %+v", chk)
	}
}

// TestAuditForgedWithSQL (issue 24): on PostgreSQL an operator's role that
// may write the store's other tables but has no INSERT on paydesk_audit
// cannot add an entry; the role that has it (paydesk's) can, and an entry
// it adds with psql, correctly chained but without the key, is named by
// --verify. UPDATE, DELETE and TRUNCATE are refused whoever asks (the
// table's triggers).
func TestAuditForgedWithSQL(t *testing.T) {
	pgtest.OwnEngine(t)
	url := freshNative(t)
	db := openAt(t, url, testAuditKey)
	auditLog(t, db, 2)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	// psql as a role that writes the tables but may not add to the audit log
	role := "paydesk_test_nonwriter_" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	role = role[:min(len(role), 60)]
	exec := func(q string, args ...any) error { _, err := conn.Exec(ctx, q, args...); return err }
	_ = exec(`DROP OWNED BY ` + role)
	_ = exec(`DROP ROLE IF EXISTS ` + role)
	if err := exec(`CREATE ROLE ` + role + `; GRANT SELECT, INSERT, UPDATE, DELETE ON paydesk_reservations, paydesk_lines, paydesk_transactions, paydesk_pushes TO ` + role +
		`; GRANT SELECT ON paydesk_audit TO ` + role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec(`DROP OWNED BY ` + role + `; DROP ROLE IF EXISTS ` + role) })

	var last string
	if err := conn.QueryRow(ctx, `SELECT entry::text FROM paydesk_audit ORDER BY id DESC LIMIT 1`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	forged := AuditEntry{ID: 4, Time: t0, Operator: "alice@desk1", Action: "refund", Target: "R1", Amount: dec("999.00"), Currency: "EUR", Result: "190 Success", Prev: domain.ChainHash([]byte(last))}
	text, _ := json.Marshal(forged)
	insert := `INSERT INTO paydesk_audit (id, time, operator, action, target, amount, currency, result, prev, entry) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
	args := []any{int64(forged.ID), forged.Time, forged.Operator, forged.Action, forged.Target, forged.Amount, forged.Currency, forged.Result, forged.Prev, string(text)}
	if err := exec(`SET ROLE ` + role); err != nil {
		t.Fatal(err)
	}
	err = exec(insert, args...)
	_ = exec(`RESET ROLE`)
	if err == nil || !strings.Contains(err.Error(), "paydesk_audit") {
		t.Fatalf("a role without INSERT on paydesk_audit added an entry: %v", err)
	}
	for _, q := range []string{`TRUNCATE paydesk_audit`, `TRUNCATE paydesk_audit CASCADE`, `DELETE FROM paydesk_audit`, `UPDATE paydesk_audit SET mac = ''`} {
		if err := exec(q); err == nil || !strings.Contains(err.Error(), "inserts only") {
			t.Errorf("%s: %v", q, err)
		}
	}

	// paydesk's role (here the owner) adds one with SQL, next in the chain
	if err := exec(insert, args...); err != nil {
		t.Fatal(err)
	}
	chk, err := db.VerifyAudit(ctx)
	if err != nil || chk.OK() || !strings.Contains(strings.Join(chk.Problems, "; "), "entry 4 is forged: not keyed") {
		t.Fatalf("verify %+v %v", chk, err)
	}
}

// forgedSeal stores an audit entry with the key fields it has, as a
// forger who writes the table does.
type forgedSeal struct{}

func (forgedSeal) SealEntry(e AuditEntry) (AuditEntry, []byte, error) {
	v, err := json.Marshal(e)
	return e, v, err
}
