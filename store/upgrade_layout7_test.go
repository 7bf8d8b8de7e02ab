package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
)

// The layout-7 fixtures (testdata/layout7, made once by
// testdata/layout7/make with the store before the relational redesign):
// a cache file and a team database's dump as that store left them. Opening
// a copy with this code and reading everything through the public API must
// give what that store read from them (want.json): an upgrade loses or
// changes nothing, and the audit chain still verifies.

var updateLayout7 = flag.Bool("layout7.update", false, "rewrite testdata/layout7/want.json from what the fixtures read now (only with the layout-7 store)")

const (
	layout7Dir    = "testdata/layout7"
	layout7Secret = "layout7-fixture-secret" // testdata/layout7/make's Secret
)

// layout7Clock is the moment the fixtures are opened at: after everything
// in them (the store's clock decides the shipment windows and what an
// open marks).
var layout7Clock = time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)

func TestUpgradeLayout7Bolt(t *testing.T) {
	pgtest.OwnEngine(t)
	// These tests wait on the server most of their time: they run side by
	// side.
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(layout7Dir, "layout7.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "paydesk.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	checkLayout7(t, "bolt", path)
}

func TestUpgradeLayout7Postgres(t *testing.T) {
	pgtest.OwnEngine(t)
	t.Parallel()
	u := pgtest.Fresh(t)
	restorePGDump(t, u, filepath.Join(layout7Dir, "layout7.sql"))
	checkLayout7(t, "postgres", u)
}

// checkLayout7 opens the fixture at where (twice: the second open finds
// whatever the first one migrated) and compares what it reads with
// want.json's engine entry.
func checkLayout7(t *testing.T, engine, where string) {
	t.Helper()
	key, err := AuditKeyFromSecret(layout7Secret)
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]byte
	for i := range got {
		db, err := Open(where, Options{AuditKey: key, Now: func() time.Time { return layout7Clock }})
		if err != nil {
			t.Fatalf("open %d of the layout-7 %s fixture: %v", i+1, engine, err)
		}
		snap, err := readLayout7(db)
		_ = db.Close()
		if err != nil {
			t.Fatalf("read the layout-7 %s fixture (open %d): %v", engine, i+1, err)
		}
		if got[i], err = json.MarshalIndent(snap, "", "  "); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("the second open reads something else than the first:\n%s", layout7Diff(got[0], got[1]))
	}

	wantPath := filepath.Join(layout7Dir, "want.json")
	all := map[string]map[string]json.RawMessage{}
	if b, err := os.ReadFile(wantPath); err == nil {
		if err := json.Unmarshal(b, &all); err != nil {
			t.Fatalf("%s: %v", wantPath, err)
		}
	} else if !*updateLayout7 {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(got[0], &fields); err != nil {
		t.Fatal(err)
	}
	if *updateLayout7 {
		// bolt holds the whole snapshot, every other engine what it
		// reads otherwise (its lease numbers, its words for an ended
		// process): the fixtures' content is one.
		if engine != "bolt" {
			if _, ok := all["bolt"]; !ok {
				t.Fatalf("update the bolt entry first")
			}
			for k, v := range fields {
				if layout7SameJSON(v, all["bolt"][k]) {
					delete(fields, k)
				}
			}
		}
		all[engine] = fields
		if err := os.WriteFile(wantPath, layout7EncodeWant(t, all), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string]json.RawMessage{}
	for k, v := range all["bolt"] {
		want[k] = v
	}
	if engine != "bolt" {
		extra, ok := all[engine]
		if !ok {
			t.Fatalf("%s has no %q entry (make it with -layout7.update on the layout-7 store)", wantPath, engine)
		}
		for k, v := range extra {
			want[k] = v
		}
	}
	wb, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	var w, g bytes.Buffer
	if err := json.Indent(&w, wb, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&g, gb, "", "  "); err != nil {
		t.Fatal(err)
	}
	wantText, gotText := w.String(), g.String()
	if engine == "postgres" {
		// The database opens on the native engine, which keeps a time's
		// instant (timestamptz), not the offset the gateway wrote it with,
		// and leaves a filtered page's Total to the count.
		wantText, gotText = listTotal.ReplaceAllString(utcTimes(wantText), ""), listTotal.ReplaceAllString(utcTimes(gotText), "")
	}
	if wantText != gotText {
		t.Errorf("the layout-7 %s fixture reads otherwise than it did at layout 7:\n%s", engine, layout7Diff([]byte(wantText), []byte(gotText)))
	}
}

func layout7SameJSON(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && bytes.Equal(x.Bytes(), y.Bytes())
}

// layout7EncodeWant writes want.json compactly, one field of a snapshot a line
// (a change shows as the lines of the fields it touches).
func layout7EncodeWant(t *testing.T, all map[string]map[string]json.RawMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, engine := range slices.Sorted(maps.Keys(all)) {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "%q: {", engine)
		for j, k := range slices.Sorted(maps.Keys(all[engine])) {
			if j > 0 {
				b.WriteString(",")
			}
			var c bytes.Buffer
			if err := json.Compact(&c, all[engine][k]); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "\n  %q: %s", k, c.Bytes())
		}
		b.WriteString("\n}")
	}
	b.WriteString("\n}\n")
	return b.Bytes()
}

// layout7Diff shows where two JSON texts part, with a little context.
func layout7Diff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			from := max(0, i-8)
			return fmt.Sprintf("line %d:\ncontext:\n%s\nwant: %s\ngot:  %s", i+1, strings.Join(wl[from:i], "\n"), w, g)
		}
	}
	return "(same lines)"
}

// layout7Snapshot is everything the store's public API reads: the records,
// the logs, the list pages in every order, the counts.
type layout7Snapshot struct {
	Counts         Counts
	Summaries      []Summary
	Reservations   []*Reservation
	ByNumber       map[string]string // reservation number → key, as Reservation resolves it
	ByInvoice      map[string]string // invoice → key (or the error naming several)
	Transactions   []*Transaction
	TxFor          map[string][]string // reservation key → its transactions' keys
	ReservationLst map[string]layout7List
	TransactionLst map[string]layout7List
	Pushes         []*PushRecord
	PushesForRes   map[string][]uint64
	Rejected       []*PushRecord
	Ops            []*PendingOp
	OpenOps        []uint64
	Audit          []AuditEntry
	AuditCheck     AuditCheck
	Orders         []*Order
	WaitingOrders  []string
	Conflicts      map[string][]*Order
	Batches        []Batch
	BatchItems     map[string][]BatchItem
	BatchByHash    string
	Exchanges      []Exchange
}

// layout7List is one query of a list: the keys in order and the total.
type layout7List struct {
	Keys  []string
	Total int
	Count int
}

func readLayout7(db *DB) (*layout7Snapshot, error) {
	s := &layout7Snapshot{ByNumber: map[string]string{}, ByInvoice: map[string]string{}, TxFor: map[string][]string{},
		ReservationLst: map[string]layout7List{}, TransactionLst: map[string]layout7List{}, PushesForRes: map[string][]uint64{},
		Conflicts: map[string][]*Order{}, BatchItems: map[string][]BatchItem{}}
	var err error
	if s.Counts, err = db.Counts(context.Background()); err != nil {
		return nil, err
	}
	if s.Summaries, err = db.LoadReservationSummaries(context.Background()); err != nil {
		return nil, err
	}
	for _, sum := range s.Summaries {
		r, err := db.Reservation(context.Background(), sum.Key)
		if err != nil {
			return nil, fmt.Errorf("reservation %s: %w", sum.Key, err)
		}
		s.Reservations = append(s.Reservations, r)
		if r.ReservationNumber != "" {
			if byNum, err := db.Reservation(context.Background(), r.ReservationNumber); err != nil {
				s.ByNumber[r.ReservationNumber] = "error: " + err.Error()
			} else {
				s.ByNumber[r.ReservationNumber] = byNum.Key
			}
		}
		if r.Invoice != "" {
			if byInv, err := db.Reservation(context.Background(), r.Invoice); err != nil {
				s.ByInvoice[r.Invoice] = "error: " + err.Error()
			} else {
				s.ByInvoice[r.Invoice] = byInv.Key
			}
		}
		txs, err := db.TransactionsFor(context.Background(), sum.Key)
		if err != nil {
			return nil, fmt.Errorf("transactions of %s: %w", sum.Key, err)
		}
		for _, t := range txs {
			s.TxFor[sum.Key] = append(s.TxFor[sum.Key], t.Key)
		}
		ps, err := db.PushesForReservation(context.Background(), sum.Key)
		if err != nil {
			return nil, fmt.Errorf("pushes of %s: %w", sum.Key, err)
		}
		for _, p := range ps {
			s.PushesForRes[sum.Key] = append(s.PushesForRes[sum.Key], p.ID)
		}
	}
	if s.Transactions, err = db.Transactions(context.Background()); err != nil {
		return nil, err
	}
	for _, t := range s.Transactions {
		one, err := db.Transaction(context.Background(), t.Key)
		if err != nil {
			return nil, fmt.Errorf("transaction %s: %w", t.Key, err)
		}
		if a, b := layout7JSON(one), layout7JSON(t); a != b {
			return nil, fmt.Errorf("transaction %s reads otherwise alone than in the list:\n%s\n%s", t.Key, a, b)
		}
	}

	// The lists, in every order both ways, by state or kind, filtered.
	resQueries := map[string]PageQuery{}
	for sort := SortCreated; sort <= SortState; sort++ {
		for _, desc := range []bool{false, true} {
			resQueries[fmt.Sprintf("sort %d desc %v", sort, desc)] = PageQuery{Sort: sort, Desc: desc}
		}
	}
	for _, st := range []State{StateAwaitingCustomer, StateReserved, StatePartlyCaptured, StateCaptured,
		StateCancelled, StateClosed, StateDeclined, StateOutcomeUnknown, StateOrderMissing} {
		resQueries["state "+string(st)] = PageQuery{State: st}
	}
	for _, f := range []string{"muller", "L7-1004", "shoes", "utrecht", "nothing-matches"} {
		resQueries["filter "+f] = PageQuery{Filter: f, Sort: SortInvoice}
	}
	for name, q := range resQueries {
		q.Limit = 1000
		p, err := db.ReservationPage(context.Background(), q)
		if err != nil {
			return nil, fmt.Errorf("reservation page %s: %w", name, err)
		}
		n, err := db.ReservationCount(context.Background(), q)
		if err != nil {
			return nil, fmt.Errorf("reservation count %s: %w", name, err)
		}
		v := layout7List{Total: p.Total, Count: n, Keys: []string{}}
		for _, r := range p.Rows {
			v.Keys = append(v.Keys, r.Summary.Key)
		}
		s.ReservationLst[name] = v
	}
	txQueries := map[string]PageQuery{}
	for sort := TxSortCreated; sort <= TxSortStatus; sort++ {
		for _, desc := range []bool{false, true} {
			txQueries[fmt.Sprintf("sort %d desc %v", sort, desc)] = PageQuery{Sort: sort, Desc: desc}
		}
	}
	for _, k := range []Kind{KindCapture, KindRefund, KindGiftCardPay, KindGiftCardRemainder, KindGiftCardRefund} {
		txQueries["kind "+string(k)] = PageQuery{State: State(k)}
	}
	for _, f := range []string{"jansen", "L7-GC", "INV-", "nothing-matches"} {
		txQueries["filter "+f] = PageQuery{Filter: f, Sort: TxSortInvoice}
	}
	for name, q := range txQueries {
		q.Limit = 1000
		p, err := db.TransactionPage(context.Background(), q)
		if err != nil {
			return nil, fmt.Errorf("transaction page %s: %w", name, err)
		}
		n, err := db.TransactionCount(context.Background(), q)
		if err != nil {
			return nil, fmt.Errorf("transaction count %s: %w", name, err)
		}
		v := layout7List{Total: p.Total, Count: n, Keys: []string{}}
		for _, r := range p.Rows {
			v.Keys = append(v.Keys, r.Tx.Key)
		}
		s.TransactionLst[name] = v
	}

	if s.Pushes, err = db.Pushes(context.Background(), 0, 0); err != nil {
		return nil, err
	}
	for _, p := range s.Pushes {
		one, err := db.Push(context.Background(), p.ID)
		if err != nil {
			return nil, fmt.Errorf("push %d: %w", p.ID, err)
		}
		if a, b := layout7JSON(one), layout7JSON(p); a != b {
			return nil, fmt.Errorf("push %d reads otherwise alone than in the list:\n%s\n%s", p.ID, a, b)
		}
	}
	if s.Rejected, err = db.RejectedPushes(context.Background(), 0); err != nil {
		return nil, err
	}
	if s.Ops, err = db.Ops(context.Background()); err != nil {
		return nil, err
	}
	open, err := db.Ops(context.Background(), OpPending, OpSent, OpOutcomeUnknown)
	if err != nil {
		return nil, err
	}
	for _, op := range open {
		s.OpenOps = append(s.OpenOps, op.ID)
	}
	if s.Audit, err = db.Audit(context.Background(), 0); err != nil {
		return nil, err
	}
	if s.AuditCheck, err = db.VerifyAudit(context.Background()); err != nil {
		return nil, err
	}
	if !s.AuditCheck.OK() || s.AuditCheck.KeyedFrom == 0 || s.AuditCheck.NoKey {
		return nil, fmt.Errorf("the audit chain does not verify as keyed: %+v", s.AuditCheck)
	}
	if s.Orders, err = db.Orders(context.Background(), false); err != nil {
		return nil, err
	}
	waiting, err := db.Orders(context.Background(), true)
	if err != nil {
		return nil, err
	}
	for _, o := range waiting {
		s.WaitingOrders = append(s.WaitingOrders, o.Invoice)
	}
	for _, o := range s.Orders {
		cs, err := db.OrderConflicts(context.Background(), o.Invoice)
		if err != nil {
			return nil, fmt.Errorf("conflicts of %s: %w", o.Invoice, err)
		}
		if len(cs) > 0 {
			s.Conflicts[o.Invoice] = cs
		}
	}
	if s.Batches, err = db.Batches(context.Background(), 0); err != nil {
		return nil, err
	}
	for _, b := range s.Batches {
		_, items, err := db.Batch(context.Background(), b.ID)
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", b.ID, err)
		}
		s.BatchItems[b.ID] = items
		if byHash, err := db.BatchByHash(context.Background(), b.Kind, b.Hash); err != nil {
			return nil, fmt.Errorf("batch %s by hash: %w", b.ID, err)
		} else if byHash != nil {
			s.BatchByHash = byHash.ID
		}
	}
	if s.Exchanges, err = db.Exchanges(context.Background(), 0); err != nil {
		return nil, err
	}
	return s, nil
}

func layout7JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// restorePGDump runs a plain pg_dump file against the database at u, the
// way psql would: statement by statement, skipping psql's own commands
// (a dump's \restrict line).
func restorePGDump(t *testing.T, u, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sql strings.Builder
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if !strings.HasPrefix(line, `\`) {
			sql.WriteString(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// One simple-protocol Exec runs the whole script as one implicit
	// transaction: a fixture that does not restore leaves nothing behind.
	if _, err := conn.Exec(ctx, sql.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("restore %s: %v", path, err)
	}
}
