package batch

import (
	"context"
	"testing"

	"paydesk/store"
)

// TestMarkedHash: a marked set is named by its action and its keys, not
// their order or repeats; another set or another action is another batch.
func TestMarkedHash(t *testing.T) {
	none := func(string) (*store.Reservation, error) { return nil, store.ErrNotFound }
	hash := func(kind string, keys ...string) string {
		t.Helper()
		m, err := Marked(kind, keys, none)
		if err != nil {
			t.Fatal(err)
		}
		return m.Hash
	}
	base := hash(store.BatchCancelRest, "A", "B", "C")
	tests := []struct {
		name string
		got  string
		same bool
	}{
		{"another order", hash(store.BatchCancelRest, "C", "A", "B"), true},
		{"a key twice", hash(store.BatchCancelRest, "A", "B", "C", "A"), true},
		{"a key less", hash(store.BatchCancelRest, "A", "B"), false},
		{"another action", hash(store.BatchCapture, "A", "B", "C"), false},
	}
	for _, tt := range tests {
		if (tt.got == base) != tt.same {
			t.Errorf("%s: same hash %v, want %v", tt.name, tt.got == base, tt.same)
		}
	}
	if _, err := Marked("refund", []string{"A"}, none); err == nil {
		t.Error("an unknown kind is accepted")
	}
	if _, err := Marked(store.BatchCancelRest, nil, none); err == nil {
		t.Error("nothing marked is accepted")
	}
}

// TestMarkedCaptureRows: a capture of the marked reservations captures
// what remains of each line; one with nothing left is refused by the
// pre-flight, naming it.
func TestMarkedCaptureRows(t *testing.T) {
	open := testReservation("SHOP-1", "RES-1")
	done := testReservation("SHOP-2", "RES-2")
	for i := range done.Lines {
		done.Lines[i].Captured = done.Lines[i].Reserved
	}
	lookup := lookupOf(open, done)
	m, err := Marked(store.BatchCapture, []string{"RES-1", "RES-2"}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	pf := PlanCapture(m, One(lookup), open.Created, false)
	if len(pf.Items) != 1 || pf.Items[0].Reservation != "RES-1" || pf.RefusedReservations != 1 {
		t.Fatalf("items %+v refused %+v", pf.Items, pf.Refused)
	}
	if pf.Refused[0].Rule != RuleBadRow || pf.Refused[0].Ref != "RES-2" {
		t.Fatalf("refusal %+v", pf.Refused[0])
	}
	want := 0
	for _, l := range open.Lines {
		want += l.Remaining()
	}
	got := 0
	for _, l := range pf.Items[0].Lines {
		got += l.Quantity
	}
	if got != want {
		t.Fatalf("captures %d units, %d remain", got, want)
	}
}

// TestMarkedCancelRestKilledHalfWay: the rest of 50 marked reservations is
// cancelled through the pre-flight and the journal; the run stopped half
// way (the console closed) and started again from the same marks resumes
// its batch, and every reservation gets exactly one cancel.
func TestMarkedCancelRestKilledHalfWay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOpts{})
	const n = 50
	nums := e.reserveMany(ctx, n)
	// Shipped in part: cancel-rest needs something captured.
	_, b, items := startBatch(t, e, shipmentManifest(n))
	if out, err := (&Runner{Svc: e.svc, Store: e.db}).Run(ctx, b, items); err != nil || out.Counts[store.ItemSettled] != n {
		t.Fatalf("captures: %v %v", out.CountsText(), err)
	}
	keys := make([]string, n)
	for i, num := range nums {
		r, err := e.db.Reservation(ctx, num)
		if err != nil {
			t.Fatal(err)
		}
		keys[i] = r.Key
	}
	start := func() (*Preflight, store.Batch, []store.BatchItem, bool) {
		t.Helper()
		m, err := Marked(store.BatchCancelRest, keys, func(ref string) (*store.Reservation, error) { return e.db.Reservation(t.Context(), ref) })
		if err != nil {
			t.Fatal(err)
		}
		pf := PlanCancelRest(m, func(ref string) (*store.Reservation, error) { return e.db.Reservation(t.Context(), ref) })
		if prev, err := e.db.BatchByHash(ctx, store.BatchCancelRest, m.Hash); err == nil && prev != nil {
			b, its, err := e.db.Batch(ctx, prev.ID)
			if err != nil {
				t.Fatal(err)
			}
			return pf, *b, its, true
		}
		b, its, err := (&Runner{Svc: e.svc, Store: e.db}).Start(t.Context(), pf, "50 marked reservations")
		if err != nil {
			t.Fatal(err)
		}
		return pf, b, its, false
	}
	pf, b, items, resumed := start()
	if resumed || len(pf.Items) != n || len(pf.Refused) != 0 || len(items) != n {
		t.Fatalf("pre-flight: items %d refused %+v, resumed %v", len(pf.Items), pf.Refused, resumed)
	}
	// Stopped half way: the context ends after the 25th reservation (a
	// cancel on its way finishes, no new one starts).
	stop, cancel := context.WithCancel(ctx)
	rn := &Runner{Svc: e.svc, Store: e.db, Progress: func(ev Event) {
		if ev.Done == n/2 {
			cancel()
		}
	}}
	first, err := rn.Run(stop, b, items)
	cancel()
	if err != nil || !first.Interrupted || first.Sent >= n || first.Sent < n/2 {
		t.Fatalf("first run: %s sent %d interrupted %v err %v", first.CountsText(), first.Sent, first.Interrupted, err)
	}
	e.waitQuiet()

	// Marked again (another order): the same batch, resumed.
	for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
		keys[i], keys[j] = keys[j], keys[i]
	}
	_, b2, items2, resumed := start()
	if !resumed || b2.ID != b.ID {
		t.Fatalf("the same marks start batch %s (resumed %v), want %s", b2.ID, resumed, b.ID)
	}
	before := e.requests.Load()
	second, err := (&Runner{Svc: e.svc, Store: e.db}).Run(ctx, b2, items2)
	if err != nil {
		t.Fatal(err)
	}
	if second.Earlier != first.Sent || second.Sent != n-first.Sent || e.requests.Load()-before != int64(second.Sent) {
		t.Fatalf("resume: earlier %d sent %d requests %d (first run sent %d)", second.Earlier, second.Sent, e.requests.Load()-before, first.Sent)
	}
	if second.Counts[store.ItemSettled] != n {
		t.Fatalf("resume: %s", second.CountsText())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, num := range nums {
		if e.cancels[num] != 1 {
			t.Errorf("%s: %d cancels, want 1", num, e.cancels[num])
		}
	}
}
