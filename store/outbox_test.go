package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
)

// outboxEngines opens an empty store with forward endpoints on each
// engine: the file, and with a test server the kv and the native
// PostgreSQL engines.
func outboxEngines(t *testing.T, forward []string) map[string]func(t *testing.T) *DB {
	open := func(t *testing.T, where string, rel bool) *DB {
		t.Helper()
		db, err := Open(where, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: forward, kvEngine: !rel})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	return map[string]func(t *testing.T) *DB{
		"bolt":      func(t *testing.T) *DB { return open(t, filepath.Join(t.TempDir(), "paydesk.db"), false) },
		"pg-kv":     func(t *testing.T) *DB { return open(t, pgtest.Fresh(t), false) },
		"pg-native": func(t *testing.T) *DB { return open(t, freshNative(t), true) },
	}
}

func applyEncoded(t *testing.T, db *DB, p *api.Push) ApplyResult {
	t.Helper()
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ApplyPush(context.Background(), PushRecord{Body: body, Signature: SignatureValid}, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func dueIDs(t *testing.T, db *DB, now time.Time) ([]uint64, time.Time) {
	t.Helper()
	due, next, err := db.NextDeliveries(context.Background(), now, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, d := range due {
		if len(d.Body) == 0 {
			t.Fatalf("delivery %d due without a body", d.ID)
		}
		ids = append(ids, d.ID)
	}
	return ids, next
}

// A push stored records one delivery per endpoint in its own commit; a
// duplicate records none; a later push for the same key waits for the
// earlier one's delivery (per endpoint); a retry not yet due waits; a
// delivery given up lets the next go and is resent on request.
func TestOutboxDeliveriesFollowPushes(t *testing.T) {
	pgtest.OwnEngine(t)
	eps := []string{"http://shop.test/a", "http://shop.test/b"}
	for name, open := range outboxEngines(t, eps) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			g := &gw{clock: t0}
			k1, k2 := g.key(), g.key()
			first := txPush(k1, "INV-1", api.ServiceDeferred, api.TypeDeferredPay, dec("10"), g.status(api.StatusPendingProcessing, ""), nil)
			r1 := applyEncoded(t, db, first)
			applyEncoded(t, db, first) // the gateway again: a duplicate
			applyEncoded(t, db, txPush(k1, "INV-1", api.ServiceDeferred, api.TypeDeferredPay, dec("10"), g.status(api.StatusSuccess, ""), nil))
			applyEncoded(t, db, txPush(k2, "INV-2", api.ServiceDeferred, api.TypeDeferredPay, dec("5"), g.status(api.StatusSuccess, ""), nil))

			all, err := db.Deliveries(ctx, DeliveryQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 6 {
				t.Fatalf("deliveries = %d, want 6 (3 pushes × 2 endpoints; none for the duplicate)", len(all))
			}
			if d := all[len(all)-1]; d.PushID != r1.ID || d.Key != k1 || d.Endpoint != eps[0] || d.State != DeliveryPending {
				t.Fatalf("oldest delivery = %+v", d)
			}
			// IDs: 1,2 push 1 (a, b); 3,4 push 2 of k1; 5,6 k2.
			ids, _ := dueIDs(t, db, t0)
			if want := []uint64{1, 2, 5, 6}; !equalIDs(ids, want) {
				t.Fatalf("due = %v, want %v (k1's second push waits)", ids, want)
			}
			retry := t0.Add(10 * time.Second)
			if err := db.RecordAttempt(ctx, 1, Attempt{At: t0, Status: 500, Latency: time.Millisecond, Excerpt: "boom"}, AttemptOutcome{NextAt: retry}); err != nil {
				t.Fatal(err)
			}
			if err := db.RecordAttempt(ctx, 2, Attempt{At: t0, Status: 200}, AttemptOutcome{Delivered: true}); err != nil {
				t.Fatal(err)
			}
			ids, next := dueIDs(t, db, t0)
			if want := []uint64{4, 5, 6}; !equalIDs(ids, want) || !next.Equal(retry) {
				t.Fatalf("due = %v next %v, want %v next %v", ids, next, want, retry)
			}
			if ids, _ := dueIDs(t, db, retry); !equalIDs(ids, []uint64{1, 4, 5, 6}) {
				t.Fatalf("due at the retry = %v", ids)
			}
			failed, err := db.Deliveries(ctx, DeliveryQuery{Failed: true})
			if err != nil || len(failed) != 1 || failed[0].ID != 1 || failed[0].LastAttempt().Excerpt != "boom" {
				t.Fatalf("failed = %+v, %v", failed, err)
			}
			if err := db.RecordAttempt(ctx, 1, Attempt{At: retry, Error: "connection refused\x00"}, AttemptOutcome{GaveUp: true}); err != nil {
				t.Fatal(err)
			}
			if ids, _ := dueIDs(t, db, retry); !equalIDs(ids, []uint64{3, 4, 5, 6}) {
				t.Fatalf("after giving up on 1: due = %v", ids)
			}
			d1, err := db.Deliveries(ctx, DeliveryQuery{Failed: true})
			if err != nil || len(d1) != 1 || d1[0].State != DeliveryFailed || len(d1[0].Attempts) != 2 || d1[0].Attempts[1].Error != "connection refused\uFFFD" {
				t.Fatalf("given up = %+v, %v", d1, err)
			}
			n, err := db.Redeliver(ctx, ResendRequest{Query: DeliveryQuery{Failed: true}})
			if err != nil || n != 1 {
				t.Fatalf("resend = %d, %v", n, err)
			}
			if ids, _ := dueIDs(t, db, retry); !equalIDs(ids, []uint64{1, 4, 5, 6}) {
				t.Fatalf("after the resend: due = %v (1 goes before 3 again)", ids)
			}
			if _, err := db.Redeliver(ctx, ResendRequest{ID: 99}); err == nil {
				t.Fatal("resend of no delivery: no error")
			}
		})
	}
}

// Without endpoints nothing is recorded.
func TestOutboxNothingWithoutEndpoints(t *testing.T) {
	db := openTest(t)
	g := &gw{clock: t0}
	applyEncoded(t, db, txPush(g.key(), "INV-1", api.ServiceDeferred, api.TypeDeferredPay, dec("10"), g.status(api.StatusSuccess, ""), nil))
	all, err := db.Deliveries(context.Background(), DeliveryQuery{})
	if err != nil || len(all) != 0 {
		t.Fatalf("deliveries = %v, %v", all, err)
	}
}

func equalIDs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
