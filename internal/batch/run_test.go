package batch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"paydesk/store"
)

func startBatch(t testing.TB, e *env, csv string) (*Preflight, store.Batch, []store.BatchItem) {
	t.Helper()
	m, err := ReadManifest(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	pf := PlanCapture(m, Ledgers(e.db), e.svc.Now(), false)
	pf.Source = "shipments.csv"
	rn := &Runner{Svc: e.svc, Store: e.db}
	b, items, err := rn.Start(t.Context(), pf, pf.Source)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return pf, b, items
}

// TestBatch500Rows: a 500-row manifest captures exactly what it says (the
// ledger checked per line), and the same manifest again sends nothing.
func TestBatch500Rows(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{})
	nums := e.reserveMany(ctx, 100)
	csv := shipmentManifest(100)
	pf, b, items := startBatch(t, e, csv)
	if pf.Rows != 500 || len(pf.Items) != 100 || len(pf.Refused) != 0 || pf.Totals[0].Amount.StringFixed(2) != "15385.00" {
		t.Fatalf("pre-flight: rows %d items %d refused %+v totals %+v", pf.Rows, len(pf.Items), pf.Refused, pf.Totals)
	}
	before := e.requests.Load()
	var events int
	rn := &Runner{Svc: e.svc, Store: e.db, Progress: func(Event) { events++ }}
	out, err := rn.Run(ctx, b, items)
	if err != nil {
		t.Fatal(err)
	}
	if out.Counts[store.ItemSettled] != 100 || out.Sent != 100 || events != 100 || e.requests.Load()-before != 100 {
		t.Fatalf("run: %s, sent %d, events %d, requests %d", out.CountsText(), out.Sent, events, e.requests.Load()-before)
	}
	for _, n := range nums {
		r, err := e.db.Reservation(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if got := ledger(r); got != wantShipped || e.paysOf(n) != 1 {
			t.Fatalf("%s: %s (pays %d), want %s", n, got, e.paysOf(n), wantShipped)
		}
	}

	// The same manifest again: the batch is found by its hash, nothing is sent.
	m, _ := ReadManifest(strings.NewReader(csv))
	if _, _, err := rn.Start(t.Context(), PlanCapture(m, Ledgers(e.db), e.svc.Now(), false), "again.csv"); !errors.Is(err, store.ErrBatchExists) {
		t.Fatalf("second Start: %v, want ErrBatchExists", err)
	}
	again, err := e.db.BatchByHash(ctx, store.BatchCapture, m.Hash)
	if err != nil || again == nil || again.ID != b.ID {
		t.Fatalf("BatchByHash: %+v %v", again, err)
	}
	_, items, _ = e.db.Batch(ctx, again.ID)
	before = e.requests.Load()
	out, err = rn.Run(ctx, *again, items)
	if err != nil || out.Sent != 0 || out.Earlier != 100 || e.requests.Load() != before {
		t.Fatalf("second run: %v sent %d earlier %d requests %d", err, out.Sent, out.Earlier, e.requests.Load()-before)
	}

	// The audit log has the batch and each capture with the operator.
	audit, _ := e.db.Audit(ctx, 0)
	var batchEntries, captures int
	for _, a := range audit {
		if a.Operator != "batcher" {
			t.Fatalf("audit operator %q", a.Operator)
		}
		switch a.Action {
		case "batch-capture":
			batchEntries++
		case "capture":
			if !strings.Contains(a.Reason, "batch "+b.ID+" rows ") || !strings.Contains(a.Reason, "tracking TT") {
				t.Fatalf("capture audit reason %q", a.Reason)
			}
			captures++
		}
	}
	if batchEntries != 2 || captures != 100 {
		t.Fatalf("audit: %d batch entries, %d captures", batchEntries, captures)
	}
}

// TestBatchRowFailures: a 500, a 503 and a dropped connection mark their
// rows (failed, outcome unknown), not the batch; a rerun sends none of them
// again and lists the unknown ones.
func TestBatchRowFailures(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{})
	nums := e.reserveMany(ctx, 8)
	e.breakFor[nums[1]] = http.StatusInternalServerError
	e.breakFor[nums[3]] = http.StatusServiceUnavailable
	e.breakFor[nums[5]] = -1
	_, b, items := startBatch(t, e, shipmentManifest(8))
	rn := &Runner{Svc: e.svc, Store: e.db, Concurrency: 3}
	out, err := rn.Run(ctx, b, items)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]store.BatchItemState{nums[1]: store.ItemFailed, nums[3]: store.ItemOutcomeUnknown, nums[5]: store.ItemOutcomeUnknown}
	for _, it := range out.Items {
		w, ok := want[it.Reservation]
		if !ok {
			w = store.ItemSettled
		}
		if it.State != w {
			t.Errorf("%s: %s (%s), want %s", it.Reservation, it.State, it.Message, w)
		}
	}
	if len(out.Unknown()) != 2 || len(out.Failed()) != 1 || out.Counts[store.ItemSettled] != 5 {
		t.Fatalf("outcome %s", out.CountsText())
	}
	var report strings.Builder
	WriteOutcome(&report, out)
	if !strings.Contains(report.String(), "Outcome unknown") || !strings.Contains(report.String(), "paydesk resolve") {
		t.Fatalf("report:\n%s", report.String())
	}
	// The dropped one reached the sandbox once; the rerun sends nothing.
	if e.paysOf(nums[5]) != 1 || e.paysOf(nums[1]) != 0 {
		t.Fatalf("pays: dropped %d, 500 %d", e.paysOf(nums[5]), e.paysOf(nums[1]))
	}
	delete(e.breakFor, nums[1])
	delete(e.breakFor, nums[3])
	delete(e.breakFor, nums[5])
	before := e.requests.Load()
	_, items, _ = e.db.Batch(ctx, b.ID)
	out, err = rn.Run(ctx, b, items)
	if err != nil || out.Sent != 0 || e.requests.Load() != before {
		t.Fatalf("rerun: %v, sent %d, requests %d", err, out.Sent, e.requests.Load()-before)
	}
}

// TestBatchKilledAfterJournal: a run killed after the operation was
// journaled but before the batch wrote its outcome (the window a kill -9
// can hit) is found by its operation on resume and never sent again.
func TestBatchKilledAfterJournal(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{})
	nums := e.reserveMany(ctx, 3)
	_, b, items := startBatch(t, e, shipmentManifest(3))
	// What ops.Capture does first for item 1: journal it. Then the process
	// dies; reopening the cache marks the pending operation unknown.
	id, err := e.db.BeginOp(ctx, store.PendingOp{Operator: "batcher", Action: "Pay", Service: "deferredkp", Target: items[1].Reservation,
		Invoice: items[1].Invoice, Currency: "EUR", Amount: items[1].Amount})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	e.db = nil
	e.live.Store(nil)
	db, err := store.Open(e.dbPath, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	e.live.Store(db)
	if op, _ := db.Op(ctx, id); op.State != store.OpOutcomeUnknown {
		t.Fatalf("after reopen the journaled op is %s", op.State)
	}
	e.svc = rebind(t, e, db)
	rn := &Runner{Svc: e.svc, Store: db}
	before := e.requests.Load()
	out, err := rn.Run(ctx, b, items)
	if err != nil {
		t.Fatal(err)
	}
	if out.Sent != 2 || e.requests.Load()-before != 2 || out.Items[1].State != store.ItemOutcomeUnknown || out.Items[1].OpID != id {
		t.Fatalf("resume: sent %d requests %d item1 %+v", out.Sent, e.requests.Load()-before, out.Items[1])
	}
	if e.paysOf(nums[1]) != 0 || e.paysOf(nums[0]) != 1 || e.paysOf(nums[2]) != 1 {
		t.Fatalf("pays %d %d %d", e.paysOf(nums[0]), e.paysOf(nums[1]), e.paysOf(nums[2]))
	}
	// Resolved by the operator, the item shows it on the next run.
	if err := e.svc.Resolve(ctx, id, "not in the back office: never arrived"); err != nil {
		t.Fatal(err)
	}
	_, items, _ = db.Batch(ctx, b.ID)
	out, _ = rn.Run(ctx, b, items)
	if out.Items[1].State != store.ItemResolved || out.Sent != 0 {
		t.Fatalf("after resolve: %+v sent %d", out.Items[1], out.Sent)
	}
}
