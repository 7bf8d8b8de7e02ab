package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// outboxCache is a cache file that forwards to two endpoints, with four
// deliveries: one delivered, one waiting for a retry after a 500, two
// not tried yet.
func outboxCache(t *testing.T) (*DB, []string) {
	t.Helper()
	eps := []string{"http://shop.test/a", "https://user:pw@shop.test/b"}
	db, err := Open(filepath.Join(t.TempDir(), "paydesk.db"), Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: eps})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	g := &gw{clock: t0}
	applyEncoded(t, db, txPush(g.key(), "INV-1", api.ServiceDeferred, api.TypeDeferredPay, dec("10"), g.status(api.StatusSuccess, ""), nil))
	second := txPush(g.key(), "INV-2", api.ServiceDeferred, api.TypeDeferredPay, dec("5"), g.status(api.StatusSuccess, ""), nil)
	receive(t, db, second, t0.Add(time.Minute), "192.0.2.1:4000")
	// The gateway sends the second push again, more times than are kept
	// in full: the ring of slots has wrapped.
	for i := 1; i <= MaxPushReceipts+3; i++ {
		receive(t, db, second, t0.Add(time.Minute+time.Duration(i)*time.Second), fmt.Sprintf("192.0.2.%d:4000", i+1))
	}
	ctx := context.Background()
	if err := db.RecordAttempt(ctx, 1, Attempt{At: t0, Status: 200, Latency: time.Millisecond}, AttemptOutcome{Delivered: true}); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordAttempt(ctx, 2, Attempt{At: t0, Status: 500, Latency: time.Millisecond, Excerpt: "boom"}, AttemptOutcome{NextAt: t0.Add(10 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	return db, eps
}

// TestCopyCarriesTheOutbox: paydesk db copy keeps the store's forward
// endpoints, the pushes' repeated receipts (count, times, the newest in
// order) and every delivery — the ones still owed to the shop go out
// from the copy, in the same order, and the ones sent keep their
// attempts — into another cache file and into a team's database (the
// native engine's tables after the conversion). Before, the endpoints
// and the deliveries stayed behind: a cache copied while its shop was
// down never delivered what it owed.
func TestCopyCarriesTheOutbox(t *testing.T) {
	pgtest.OwnEngine(t)
	for _, tc := range copyTargets() {
		t.Run(tc.name, func(t *testing.T) {
			src, eps := outboxCache(t)
			dst := tc.copy(t, src)
			defer dst.Close()
			ctx := t.Context()
			if got, err := dst.ForwardTo(ctx); err != nil || !slices.Equal(got, eps) {
				t.Fatalf("endpoints after the copy: %v, %v; want %v", got, err, eps)
			}
			want, err := src.Deliveries(ctx, DeliveryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := dst.Deliveries(ctx, DeliveryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4 || len(got) != len(want) {
				t.Fatalf("deliveries after the copy: %d; want the 4 of the cache", len(got))
			}
			for i := range want {
				w, g := want[i], got[i]
				if g.ID != w.ID || g.PushID != w.PushID || g.Key != w.Key || g.Endpoint != w.Endpoint || g.State != w.State ||
					!g.NextAt.Equal(w.NextAt) || len(g.Attempts) != len(w.Attempts) {
					t.Errorf("delivery %d after the copy: %+v; want %+v", w.ID, g, w)
				}
			}
			// The receipts of every push, as the cache has them.
			wantPs, err := src.Pushes(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			gotPs, err := dst.Pushes(ctx, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			wantR, err := src.PushReceiptsOf(ctx, wantPs)
			if err != nil {
				t.Fatal(err)
			}
			gotR, err := dst.PushReceiptsOf(ctx, gotPs)
			if err != nil {
				t.Fatal(err)
			}
			if len(wantR) != 2 || wantR[2].Count != MaxPushReceipts+4 {
				t.Fatalf("the cache's receipts: %+v", wantR)
			}
			for id, w := range wantR {
				g := gotR[id]
				if g.Count != w.Count || g.Omitted != w.Omitted || !g.Last.Equal(w.Last) || len(g.Receipts) != len(w.Receipts) {
					t.Fatalf("push %d's receipts after the copy: count %d, omitted %d, last %v, %d listed; want %d, %d, %v, %d",
						id, g.Count, g.Omitted, g.Last, len(g.Receipts), w.Count, w.Omitted, w.Last, len(w.Receipts))
				}
				for i := range w.Receipts {
					if !g.Receipts[i].At.Equal(w.Receipts[i].At) || g.Receipts[i].RemoteAddr != w.Receipts[i].RemoteAddr {
						t.Fatalf("push %d's receipt %d after the copy: %+v; want %+v", id, i, g.Receipts[i], w.Receipts[i])
					}
				}
			}
			// What was owed is due from the copy as from the cache.
			wantDue, _ := dueIDs(t, src, t0.Add(time.Minute))
			gotDue, _ := dueIDs(t, dst, t0.Add(time.Minute))
			if !equalIDs(gotDue, wantDue) || len(gotDue) != 3 {
				t.Fatalf("due after the copy: %v; want %v", gotDue, wantDue)
			}
			// A push stored in the copy takes the next number and is
			// forwarded to the same endpoints.
			g := &gw{clock: t0.Add(time.Hour), n: 100}
			applyEncoded(t, dst, txPush(g.key(), "INV-3", api.ServiceDeferred, api.TypeDeferredPay, dec("7"), g.status(api.StatusSuccess, ""), nil))
			after, err := dst.Deliveries(ctx, DeliveryQuery{})
			if err != nil || len(after) != 6 || after[0].ID != 6 || after[1].ID != 5 {
				t.Fatalf("a push stored in the copy: %d deliveries (newest %+v), %v; want 6, numbered 5 and 6", len(after), after[0], err)
			}
		})
	}
}
