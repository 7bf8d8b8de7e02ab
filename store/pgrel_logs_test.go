package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/store/domain"
	"paydesk/store/kv"
	"paydesk/store/postgres"
)

// relLogsDB restores the layout-7 dump into a fresh database, lets grant
// run on it as it was (at layout 7, before 0010), then opens it with this
// paydesk (which migrates it) on the kv engine, its conversion not begun,
// and returns the store and a connection.
func relLogsDB(t *testing.T, grant func(conn *pgx.Conn)) (*DB, *pgx.Conn, string) {
	t.Helper()
	u := pgtest.Fresh(t)
	restorePGDump(t, u, filepath.Join(layout7Dir, "layout7.sql"))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if grant != nil {
		grant(conn)
	}
	key, err := AuditKeyFromSecret(layout7Secret)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(u, Options{kvEngine: true, AuditKey: key, Now: func() time.Time { return layout7Clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db, conn, u
}

func queryOne[T any](t *testing.T, conn *pgx.Conn, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// The audit log of a layout-7 database is a table after the migration:
// every entry byte for byte as paydesk_kv held it, its columns readable
// with SQL, and what a paydesk still writing paydesk_kv adds shows there
// too, in the same transaction.
func TestRelationalAuditTableFromLayout7(t *testing.T) {
	pgtest.OwnEngine(t)
	db, conn, _ := relLogsDB(t, nil)
	if kind := queryOne[string](t, conn, `SELECT relkind::text FROM pg_class WHERE relname = 'paydesk_audit'`); kind != "r" {
		t.Fatalf("paydesk_audit is relkind %q, want a table (r)", kind)
	}
	kv := queryOne[int64](t, conn, `SELECT count(*) FROM paydesk_kv WHERE bucket = convert_to('audit', 'UTF8')`)
	same := queryOne[int64](t, conn, `SELECT count(*) FROM paydesk_kv kv JOIN paydesk_audit a
		ON a.id = ('x' || encode(kv.k, 'hex'))::bit(64)::bigint AND a.entry::text = convert_from(kv.v, 'UTF8')
		WHERE kv.bucket = convert_to('audit', 'UTF8')`)
	if kv == 0 || same != kv || queryOne[int64](t, conn, `SELECT count(*) FROM paydesk_audit`) != kv {
		t.Fatalf("%d audit entries in paydesk_kv, %d of them byte for byte in paydesk_audit", kv, same)
	}
	entries, err := db.Audit(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[:3] {
		var action, operator, keyID string
		var at time.Time
		if err := conn.QueryRow(context.Background(), `SELECT action, operator, time, key_id FROM paydesk_audit WHERE id = $1`, int64(e.ID)).
			Scan(&action, &operator, &at, &keyID); err != nil {
			t.Fatal(err)
		}
		if action != e.Action || operator != e.Operator || !at.Equal(e.Time) || keyID != e.KeyID || keyID == "" {
			t.Errorf("entry %d in SQL: %s %s %s %s; the store reads %s %s %s %s", e.ID, action, operator, at, keyID, e.Action, e.Operator, e.Time, e.KeyID)
		}
	}

	id, err := db.AppendAudit(t.Context(), AuditEntry{Operator: "dave@desk4", Action: "export", Target: "tx.csv", Result: "3 rows"})
	if err != nil {
		t.Fatal(err)
	}
	if got := queryOne[string](t, conn, `SELECT operator FROM paydesk_audit WHERE id = $1`, int64(id)); got != "dave@desk4" {
		t.Errorf("the entry written now reads %q in paydesk_audit", got)
	}
	if chk, err := db.VerifyAudit(t.Context()); err != nil || !chk.OK() {
		t.Errorf("verify after the migration: %+v %v", chk, err)
	}
}

// Nobody changes or removes an audit entry, not even the table's owner
// (the test's role owns everything).
func TestRelationalAuditInsertOnly(t *testing.T) {
	pgtest.OwnEngine(t)
	_, conn, _ := relLogsDB(t, nil)
	for _, q := range []string{
		`UPDATE paydesk_audit SET result = 'edited' WHERE id = 1`,
		`DELETE FROM paydesk_audit WHERE id = (SELECT max(id) FROM paydesk_audit)`,
		`TRUNCATE paydesk_audit`,
	} {
		_, err := conn.Exec(context.Background(), q)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" || !strings.Contains(pe.Message, "inserts only") {
			t.Errorf("%s: %v, want it refused (insufficient_privilege)", q, err)
		}
	}
}

// The roles granted on the audit view keep their grants on the table:
// paydesk's writer may still add entries, a viewer still reads, and a role
// without the grant still may not add to the log.
func TestRelationalAuditGrantsMove(t *testing.T) {
	pgtest.OwnEngine(t)
	suffix := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	writer, viewer := "pdw_"+suffix, "pdv_"+suffix
	var roles []string
	_, conn, _ := relLogsDB(t, func(conn *pgx.Conn) {
		for _, q := range []string{
			`CREATE ROLE ` + writer, `CREATE ROLE ` + viewer,
			`GRANT SELECT, INSERT ON paydesk_audit TO ` + writer,
			`GRANT SELECT ON paydesk_audit TO ` + viewer,
		} {
			if _, err := conn.Exec(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		roles = []string{writer, viewer}
	})
	t.Cleanup(func() {
		for _, r := range roles {
			_, _ = conn.Exec(context.Background(), `DROP OWNED BY `+r+`; DROP ROLE IF EXISTS `+r)
		}
	})
	for _, c := range []struct {
		role, priv string
		want       bool
	}{
		{writer, "INSERT", true}, {writer, "SELECT", true}, {viewer, "SELECT", true}, {viewer, "INSERT", false},
	} {
		if got := queryOne[bool](t, conn, `SELECT has_table_privilege($1, 'paydesk_audit', $2)`, c.role, c.priv); got != c.want {
			t.Errorf("%s %s on the paydesk_audit table: %v, want %v", c.role, c.priv, got, c.want)
		}
	}
}

// The journal's rule in the database: one open operation per action and
// target; a final one does not count.
func TestRelationalOneOpenOperationPerTarget(t *testing.T) {
	pgtest.OwnEngine(t)
	_, conn, _ := relLogsDB(t, nil)
	ctx := context.Background()
	ins := `INSERT INTO paydesk_operations (id, created, updated, action, target, state) VALUES ($1, now(), now(), $2, $3, $4)`
	for _, c := range []struct {
		id            int64
		action, state string
		target        string
		ok            bool
	}{
		{1001, "Pay", "pending", "RES-1", true},
		{1002, "Pay", "sent", "RES-1", false},            // a second open capture of RES-1
		{1003, "Pay", "outcome_unknown", "RES-1", false}, // likewise
		{1004, "CancelReservation", "pending", "RES-1", true},
		{1005, "Pay", "settled", "RES-1", true},
		{1006, "Pay", "pending", "RES-2", true},
		{1007, "Pay", "pending", "", true}, // no target: nothing to hold
		{1008, "Pay", "pending", "", true},
		{1009, "Pay", "waiting", "RES-3", false}, // no such state
	} {
		_, err := conn.Exec(ctx, ins, c.id, c.action, c.target, c.state)
		if (err == nil) != c.ok {
			t.Errorf("operation %d (%s %s %s): %v, want ok=%v", c.id, c.action, c.target, c.state, err, c.ok)
		}
	}
	// Once the first is final, the target is free.
	if _, err := conn.Exec(ctx, `UPDATE paydesk_operations SET state = 'settled' WHERE id = 1001`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, ins, int64(1010), "Pay", "RES-1", "pending"); err != nil {
		t.Errorf("a new capture after the first settled: %v", err)
	}
}

// A push's identity is its key and content hash: the database stores it
// once.
func TestRelationalPushIdentity(t *testing.T) {
	pgtest.OwnEngine(t)
	_, conn, _ := relLogsDB(t, nil)
	ctx := context.Background()
	ins := `INSERT INTO paydesk_pushes (id, received, key, hash, signature, body) VALUES ($1, now(), $2, $3, 'valid', '')`
	h1, h2 := make([]byte, 32), make([]byte, 32)
	h2[0] = 1
	for _, c := range []struct {
		id   int64
		key  string
		hash []byte
		ok   bool
	}{
		{1, "K1", h1, true}, {2, "K1", h1, false}, {3, "K1", h2, true}, {4, "K2", h1, true}, {5, "K3", h1[:31], false},
	} {
		if _, err := conn.Exec(ctx, ins, c.id, c.key, c.hash); (err == nil) != c.ok {
			t.Errorf("push %d (%s): %v, want ok=%v", c.id, c.key, err, c.ok)
		}
	}
}

// readLogs reads, through the contract, everything of the logs half that
// tx holds: the pushes and their identity, the rejected log and its
// groups, the gateway log, the journal, the audit log as stored, orders,
// conflicts, batches, numbers and counters — as one JSON text.
func readLogs(t *testing.T, tx RepoTx) string {
	t.Helper()
	out := map[string]any{}
	must := func(name string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = v
	}
	pushes, err := tx.PushesBefore(0, 0)
	must("pushes", pushes, err)
	for _, p := range pushes {
		one, err := tx.Push(p.ID)
		must(fmt.Sprintf("push %d", p.ID), one, err)
		ids, err := tx.PushIDsOf(p.Key)
		must("pushes of "+p.Key, ids, err)
		dup, err := tx.PushDuplicate(p.Key, p.Hash)
		must(fmt.Sprintf("duplicate of %d", p.ID), dup, err)
		other := p.Hash
		other[0] ^= 1
		dup, err = tx.PushDuplicate(p.Key, other)
		must(fmt.Sprintf("other content than %d", p.ID), dup, err)
	}
	older, err := tx.PushesBefore(10, 3)
	must("3 pushes before 10", older, err)
	rej, err := tx.RejectedNewest(0)
	must("rejected", rej, err)
	for _, r := range rej {
		one, err := tx.Rejected(r.ID)
		must(fmt.Sprintf("rejected %d", r.ID), one, err)
		id, err := tx.RejectedGroupEntry(RejectedSource(r.RemoteAddr), rejectedClass(r))
		must(fmt.Sprintf("group of rejected %d", r.ID), id, err)
	}
	n, err := tx.RejectedEntries()
	must("rejected entries", n, err)
	oldest, err := tx.OldestRejected()
	must("oldest rejected", oldest, err)
	xs, err := tx.Exchanges(0)
	must("exchanges", xs, err)
	xs, err = tx.Exchanges(2)
	must("2 exchanges", xs, err)
	ops, err := tx.Ops()
	must("ops", ops, err)
	for _, op := range ops {
		one, err := tx.Op(op.ID)
		must(fmt.Sprintf("op %d", op.ID), one, err)
	}
	open, err := tx.OpenOps()
	must("open ops", open, err)
	type stored struct {
		ID    uint64
		Entry *AuditEntry
		Text  string
	}
	var walk []stored
	if err := tx.WalkAudit(true, func(id uint64, e *AuditEntry, text []byte, err error) bool {
		if err != nil {
			t.Fatalf("audit %d: %v", id, err)
		}
		walk = append(walk, stored{id, e, string(text)})
		return true
	}); err != nil {
		t.Fatal(err)
	}
	out["audit"] = walk
	last, err := tx.LastAudit()
	must("last audit", last, err)
	seq, err := tx.AuditSequence()
	must("audit sequence", seq, err)
	e, err := tx.AuditEntry(3)
	must("audit 3", e, err)
	orders, err := tx.Orders()
	must("orders", orders, err)
	for _, o := range orders {
		one, err := tx.Order(o.Invoice)
		must("order "+o.Invoice, one, err)
		cs, err := tx.OrderConflicts(o.Invoice)
		must("conflicts of "+o.Invoice, cs, err)
	}
	cs, err := tx.OrderConflicts("")
	must("conflicts", cs, err)
	bs, err := tx.Batches()
	must("batches", bs, err)
	for _, b := range bs {
		one, err := tx.Batch(b.ID)
		must("batch "+b.ID, one, err)
		id, err := tx.BatchByHash(b.Kind, b.Hash)
		must("batch by hash "+b.ID, id, err)
		items, err := tx.BatchItems(b.ID)
		must("items of "+b.ID, items, err)
	}
	tally, err := tx.Tally()
	must("tally", tally, err)
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	// A database gives a time back in the local zone, the same instant
	// (postgres/ledger.go): compare instants.
	return pgTimeText.ReplaceAllStringFunc(string(b), func(s string) string {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return s
		}
		return at.UTC().Format(time.RFC3339Nano)
	})
}

// pgTimeText matches a time in a JSON text.
var pgTimeText = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// readKVLogs is readLogs on the bucket engine's records of the database.
func readKVLogs(t *testing.T, url string) string {
	t.Helper()
	eng, err := openPostgres(context.Background(), url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var s string
	if err := eng.View(func(tx Tx) error { s = readLogs(t, kv.TxRepo(tx)); return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

func readRelLogs(t *testing.T, e *postgres.Engine) string {
	t.Helper()
	var s string
	if err := e.ViewTx(context.Background(), func(tx *postgres.Tx) error { s = readLogs(t, tx); return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

// The layout-7 database's logs, converted into the tables, read through
// the native engine exactly as the bucket engine reads them from
// paydesk_kv: every push, rejected entry, exchange, operation, audit entry
// (its text byte for byte), order, conflict, batch and item, with the same
// IDs, look-ups, numbering and counts.
func TestRelationalLogsConvertReadsTheSame(t *testing.T) {
	pgtest.OwnEngine(t)
	db, _, u := relLogsDB(t, nil)
	_ = db.Close()
	want := readKVLogs(t, u)
	e, err := postgres.Open(context.Background(), u, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if pending, err := e.LogsConversionPending(context.Background()); err != nil || !pending {
		t.Fatalf("before the conversion: pending %v, %v", pending, err)
	}
	if err := e.ConvertLogs(context.Background(), 0, 0); err != nil {
		t.Fatal(err)
	}
	if pending, err := e.LogsConversionPending(context.Background()); err != nil || pending {
		t.Fatalf("after the conversion: pending %v, %v", pending, err)
	}
	if got := readRelLogs(t, e); got != want {
		t.Fatalf("the converted logs read otherwise:\n%s", layout7Diff([]byte(want), []byte(got)))
	}
	// Once done, a conversion again changes nothing.
	if err := e.ConvertLogs(context.Background(), 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := readRelLogs(t, e); got != want {
		t.Fatalf("a second conversion changed the logs:\n%s", layout7Diff([]byte(want), []byte(got)))
	}
}

// A conversion cut short (killed after some chunks) goes on where it
// stopped when run again, at every point it can stop, and ends with the
// same tables as one that ran through: nothing lost, nothing twice.
func TestRelationalLogsConvertCutShortGoesOn(t *testing.T) {
	pgtest.OwnEngine(t)
	db, _, u := relLogsDB(t, nil)
	_ = db.Close()
	want := readKVLogs(t, u)
	e, err := postgres.Open(context.Background(), u, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cuts := 0
	for {
		err := e.ConvertLogs(context.Background(), 4, 1)
		if err == nil {
			break
		}
		if !errors.Is(err, domain.ErrFillCut) {
			t.Fatal(err)
		}
		cuts++
		if cuts > 200 {
			t.Fatal("the conversion does not end")
		}
	}
	if cuts < 10 {
		t.Fatalf("cut %d times only: the fixture's logs should take more chunks of 4", cuts)
	}
	if got := readRelLogs(t, e); got != want {
		t.Fatalf("after %d cuts the converted logs read otherwise:\n%s", cuts, layout7Diff([]byte(want), []byte(got)))
	}
}

// relLogsEngine is the native engine on a fresh database (0009, 0010).
func relLogsEngine(t *testing.T) *postgres.Engine {
	t.Helper()
	e, err := postgres.Open(context.Background(), freshNative(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func relUpdate(t *testing.T, e *postgres.Engine, fn func(tx *postgres.Tx) error) {
	t.Helper()
	if err := e.UpdateTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// The native engine's writes of the logs half, read back through the
// contract as written; the rules the tables keep refuse what breaks them.
func TestRelationalLogsWrites(t *testing.T) {
	pgtest.OwnEngine(t)
	e := relLogsEngine(t)
	h := func(b byte) (x [32]byte) { x[0] = b; return x }
	relUpdate(t, e, func(tx *postgres.Tx) error {
		for i, rec := range []*PushRecord{
			{Key: "K1", Hash: h(1), Body: []byte(`{"Transaction":{"Key":"K1"}}`), Header: http.Header{"Content-Type": {"application/json"}},
				Signature: SignatureValid, Amount: dec("12.345"), HasAmount: true, ReceivedAt: t0, Status: Status{Code: 190, Time: t0}},
			{Key: "K1", Hash: h(2), Body: []byte("not json"), Signature: SignatureValid, ReceivedAt: t0},
			{Key: "K2", Hash: h(1), Signature: SignatureValid, ReceivedAt: t0},
		} {
			id, err := tx.AppendPush(rec, PushEncoding{})
			if err != nil || id != uint64(i+1) || rec.ID != id {
				t.Fatalf("push %d: id %d (rec %d), %v", i, id, rec.ID, err)
			}
		}
		if ids, err := tx.PushIDsOf("K1"); err != nil || len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
			t.Errorf("pushes of K1: %v %v", ids, err)
		}
		if id, err := tx.PushDuplicate("K2", h(1)); err != nil || id != 3 {
			t.Errorf("duplicate of K2: %d %v", id, err)
		}
		p, err := tx.Push(1)
		if err != nil || p == nil || !p.Amount.Equal(dec("12.345")) || p.Header.Get("Content-Type") != "application/json" || string(p.Body) != `{"Transaction":{"Key":"K1"}}` {
			t.Errorf("push 1 reads %+v %v", p, err)
		}
		if p, err := tx.Push(3); err != nil || p.Body != nil || p.Header != nil {
			t.Errorf("push 3 without body or header reads %q %v %v", p.Body, p.Header, err)
		}
		if before, err := tx.PushesBefore(3, 1); err != nil || len(before) != 1 || before[0].ID != 2 {
			t.Errorf("1 push before 3: %v %v", before, err)
		}
		return nil
	})
	// The same identity again: the database refuses it.
	if err := e.UpdateTx(context.Background(), func(tx *postgres.Tx) error {
		_, err := tx.AppendPush(&PushRecord{Key: "K1", Hash: h(1), Signature: SignatureValid}, PushEncoding{})
		return err
	}); err == nil || !strings.Contains(err.Error(), "paydesk_pushes_key_hash_key") {
		t.Errorf("the same push twice: %v", err)
	}
	var pushJSON, headerJSON string
	conn, err := e.Pool().Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if err := conn.QueryRow(context.Background(), `SELECT push->'Transaction'->>'Key', header->'Content-Type'->>0 FROM paydesk_pushes WHERE id = 1`).
		Scan(&pushJSON, &headerJSON); err != nil || pushJSON != "K1" || headerJSON != "application/json" {
		t.Errorf("push 1 in SQL: %q %q %v", pushJSON, headerJSON, err)
	}

	// The rejected log and its groups: a group's entry goes with it.
	relUpdate(t, e, func(tx *postgres.Tx) error {
		for i := range 3 {
			rec := &PushRecord{RemoteAddr: "198.51.100.7:1", Hash: h(byte(i)), Body: []byte("x"), BodySize: 1, Count: 2, Reason: "bad", Rejected: true,
				ReceivedAt: t0, LastSeen: t0.Add(time.Minute)}
			if _, err := tx.AppendRejected(rec); err != nil {
				return err
			}
		}
		if err := tx.SetRejectedGroupEntry("198.51.100.7", "mismatch\x00bad", 2); err != nil {
			return err
		}
		if id, err := tx.RejectedGroupEntry("198.51.100.7", "mismatch\x00bad"); err != nil || id != 2 {
			t.Errorf("group entry %d %v", id, err)
		}
		if err := tx.SetRejectedGroupEntry("198.51.100.7", "mismatch\x00bad", 3); err != nil {
			return err
		}
		if err := tx.DeleteRejected(3); err != nil {
			return err
		}
		if id, err := tx.RejectedGroupEntry("198.51.100.7", "mismatch\x00bad"); err != nil || id != 0 {
			t.Errorf("the group of a removed entry leads to %d %v", id, err)
		}
		if n, err := tx.RejectedEntries(); err != nil || n != 2 {
			t.Errorf("rejected entries %d %v", n, err)
		}
		if o, err := tx.OldestRejected(); err != nil || o.ID != 1 || o.Count != 2 || !o.Rejected || o.BodySize != 1 || !o.LastSeen.Equal(t0.Add(time.Minute)) {
			t.Errorf("oldest rejected %+v %v", o, err)
		}
		return nil
	})

	// The gateway log keeps the newest.
	relUpdate(t, e, func(tx *postgres.Tx) error {
		for i := range 5 {
			if _, err := tx.AppendExchange(&Exchange{Time: t0, Action: "Pay", Duration: time.Duration(i) * 1500 * time.Microsecond,
				RequestBody: []byte(`{"n":1}`)}, 3); err != nil {
				return err
			}
		}
		xs, err := tx.Exchanges(0)
		if err != nil || len(xs) != 3 || xs[0].ID != 5 || xs[2].ID != 3 || xs[0].Duration != 6*time.Millisecond {
			t.Errorf("gateway log %+v %v", xs, err)
		}
		return nil
	})
	var dur string
	if err := conn.QueryRow(context.Background(), `SELECT duration::text FROM paydesk_exchanges WHERE id = 5`).Scan(&dur); err != nil || dur != "00:00:00.006" {
		t.Errorf("duration in SQL %q %v", dur, err)
	}

	// The journal: numbers one after the other, the open ones listed, and
	// a second open operation on a target refused by the database.
	relUpdate(t, e, func(tx *postgres.Tx) error {
		for i := range 3 {
			id, err := tx.NextOpID()
			if err != nil || id != uint64(i+1) {
				t.Fatalf("op id %d %v", id, err)
			}
			state := []OpState{OpPending, OpSettled, OpOutcomeUnknown}[i]
			if err := tx.PutOp(&PendingOp{ID: id, Action: "Pay", Target: fmt.Sprintf("RES-%d", i), State: state, Amount: dec("10.00"),
				Lines: []api.CaptureLine{{ArticleNumber: "A", Quantity: 1}}, Created: t0, Updated: t0, ResultKey: "RK"}); err != nil {
				return err
			}
		}
		open, err := tx.OpenOps()
		if err != nil || len(open) != 2 || open[0].ID != 1 || open[1].ID != 3 || open[0].ResultKey != "RK" {
			t.Errorf("open ops %+v %v", open, err)
		}
		op, err := tx.Op(1)
		if err != nil || op == nil || len(op.Lines) != 1 || op.Parcels != nil || op.Request != nil || !op.Amount.Equal(dec("10")) {
			t.Errorf("op 1 reads %+v %v", op, err)
		}
		return nil
	})
	if err := e.UpdateTx(context.Background(), func(tx *postgres.Tx) error {
		return tx.PutOp(&PendingOp{ID: 9, Action: "Pay", Target: "RES-0", State: OpSent})
	}); err == nil || !strings.Contains(err.Error(), "paydesk_operations_one_open") {
		t.Errorf("a second open capture of RES-0: %v", err)
	}

	// The audit log: chained, keyed, numbered without a gap.
	keys := newAuditKeyring(testAuditKey)
	relUpdate(t, e, func(tx *postgres.Tx) error {
		var prev []byte
		for i := range 3 {
			got, err := tx.AppendAudit(AuditEntry{Time: t0, Operator: "op", Action: "refund", Amount: dec("1.50")}, keys)
			if err != nil || got.ID != uint64(i+1) || got.MAC == "" {
				t.Fatalf("audit %d: %+v %v", i, got, err)
			}
			if (prev == nil) != (got.Prev == "") || (prev != nil && got.Prev != domain.ChainHash(prev)) {
				t.Errorf("entry %d's prev %q is not the hash of the one before", got.ID, got.Prev)
			}
			if err := tx.WalkAudit(true, func(_ uint64, _ *AuditEntry, stored []byte, _ error) bool {
				prev = append([]byte(nil), stored...)
				return false
			}); err != nil {
				return err
			}
		}
		if last, err := tx.LastAudit(); err != nil || last.ID != 3 {
			t.Errorf("last audit %+v %v", last, err)
		}
		return nil
	})

	// Orders, conflicts, batches, counters.
	relUpdate(t, e, func(tx *postgres.Tx) error {
		o := &Order{Invoice: "INV-b", Currency: "EUR", Articles: []api.Article{{Number: "A", Price: dec("2.50"), Quantity: 2, Vat: dec("21")}},
			Billing: api.Address{FirstName: "Zoë", LastName: "Ångström"}, Received: t0, Hash: "h1"}
		for _, o := range []*Order{o, {Invoice: "INV-a", Received: t0, Hash: "h0"}} {
			if err := tx.PutOrder(o); err != nil {
				return err
			}
		}
		if err := tx.PutOrderConflict(&Order{Invoice: "INV-b", Hash: "h2", Received: t0}); err != nil {
			return err
		}
		if err := tx.PutOrderConflict(&Order{Invoice: "INV-b", Hash: "h2", Received: t0, Source: "again"}); err != nil {
			return err
		}
		os, err := tx.Orders()
		if err != nil || len(os) != 2 || os[0].Invoice != "INV-a" || os[1].Articles[0].Price.String() != "2.5" {
			t.Errorf("orders %+v %v", os, err)
		}
		if cs, err := tx.OrderConflicts("INV-b"); err != nil || len(cs) != 1 || cs[0].Source != "again" {
			t.Errorf("conflicts %+v %v", cs, err)
		}
		for range 10 {
			n, err := tx.NextBatchNumber()
			if err != nil {
				return err
			}
			if err := tx.PutBatch(&Batch{ID: fmt.Sprintf("B%d", n), Kind: BatchCapture, Hash: fmt.Sprintf("m%d", n), Created: t0, Total: dec("1")}); err != nil {
				return err
			}
		}
		if bs, err := tx.Batches(); err != nil || len(bs) != 10 || bs[0].ID != "B1" || bs[1].ID != "B10" || bs[2].ID != "B2" {
			t.Errorf("batches in ID order as text: %+v %v", bs, err)
		}
		if id, err := tx.BatchByHash(BatchCapture, "m7"); err != nil || id != "B7" {
			t.Errorf("batch by hash %q %v", id, err)
		}
		for _, it := range []BatchItem{{Index: 1, Rows: []int{3, 4}, State: ItemSent}, {Index: 0, State: ItemPlanned}} {
			if err := tx.PutBatchItem("B1", it); err != nil {
				return err
			}
		}
		if items, err := tx.BatchItems("B1"); err != nil || len(items) != 2 || items[0].Index != 0 || items[0].Rows != nil || items[1].Rows[1] != 4 {
			t.Errorf("items %+v %v", items, err)
		}
		if err := tx.AddTally(Tally{Pushes: 3, Reservations: 2}); err != nil {
			return err
		}
		if err := tx.AddTally(Tally{Pushes: 1, Reservations: -1}); err != nil {
			return err
		}
		if d, err := tx.Tally(); err != nil || d != (Tally{Pushes: 4, Reservations: 1}) {
			t.Errorf("tally %+v %v", d, err)
		}
		return nil
	})
	if err := e.UpdateTx(context.Background(), func(tx *postgres.Tx) error {
		return tx.PutBatch(&Batch{ID: "B99", Kind: BatchCapture, Hash: "m7", Created: t0})
	}); err == nil || !strings.Contains(err.Error(), "paydesk_batches_manifest") {
		t.Errorf("a second batch of one manifest: %v", err)
	}
}

// The conversion at open: pending on a layout-7 database, done by the
// first open that may write, cut short and finished by the next open;
// afterwards nothing is pending and a second open converts nothing.
func TestRelationalLogsConvertAtOpen(t *testing.T) {
	pgtest.OwnEngine(t)
	db, _, u := relLogsDB(t, nil)
	_ = db.Close()
	want := readKVLogs(t, u)
	e, err := postgres.Open(context.Background(), u, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.ConvertLogsAtOpen(context.Background(), 5, 3); !errors.Is(err, domain.ErrFillCut) {
		t.Fatalf("an open cut short: %v", err)
	}
	if pending, err := e.LogsConversionPending(context.Background()); err != nil || !pending {
		t.Fatalf("after an open cut short: pending %v, %v", pending, err)
	}
	if err := e.ConvertLogsAtOpen(context.Background(), 5, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.ConvertLogsAtOpen(context.Background(), 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := readRelLogs(t, e); got != want {
		t.Fatalf("converted at open, the logs read otherwise:\n%s", layout7Diff([]byte(want), []byte(got)))
	}
}

// Two processes opening a layout-7 database at once take turns over the
// logs' conversion: each chunk is converted once (no duplicate key), and
// both end with all of it.
func TestRelationalLogsConvertTwoAtOnce(t *testing.T) {
	pgtest.OwnEngine(t)
	db, _, u := relLogsDB(t, nil)
	_ = db.Close()
	want := readKVLogs(t, u)
	ctx := context.Background()
	var es [2]*postgres.Engine
	for i := range es {
		e, err := postgres.Open(ctx, u, true)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		es[i] = e
	}
	errs := make(chan error, len(es))
	for _, e := range es {
		go func() { errs <- e.ConvertLogsAtOpen(ctx, 2, 0) }()
	}
	for range es {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range es {
		if got := readRelLogs(t, e); got != want {
			t.Fatalf("converted by two at once, the logs read otherwise:\n%s", layout7Diff([]byte(want), []byte(got)))
		}
	}
}
