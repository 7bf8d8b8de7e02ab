package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"paydesk/internal/pgtest"
)

// checkDueIndex compares what the worker is given from the due index with
// what a reading of every open delivery gives, at each instant of ats.
func checkDueIndex(t *testing.T, db *DB, step string, ats ...time.Time) {
	t.Helper()
	err := db.read(t.Context(), func(tx RepoTx) error {
		for _, at := range ats {
			want, wantNext, err := scanDueHeads(tx, at, 0)
			if err != nil {
				return err
			}
			got, gotNext, err := dueHeads(tx, at, 0)
			if err != nil {
				return err
			}
			if !sameHeads(got, want) || !gotNext.Equal(wantNext) {
				t.Fatalf("%s, at %v: due %v next %v; all open ones give %v next %v", step, at, got, gotNext, want, wantNext)
			}
			// With a limit, that many of them (the earliest due first),
			// ascending by ID.
			for _, limit := range []int{1, 3} {
				got, _, err := dueHeads(tx, at, limit)
				if err != nil {
					return err
				}
				all := map[uint64]bool{}
				for _, o := range want {
					all[o.ID] = true
				}
				ok := len(got) == min(limit, len(want))
				for i, o := range got {
					ok = ok && all[o.ID] && (i == 0 || got[i-1].ID < o.ID)
				}
				if !ok {
					t.Fatalf("%s, at %v, limit %d: due %v; of %v", step, at, limit, got, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sameHeads compares IDs, endpoints and keys (a next attempt at once is
// zero from the index and 1970 from the open ones: both due).
func sameHeads(a, b []OpenDelivery) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Endpoint != b[i].Endpoint || a[i].Key != b[i].Key {
			return false
		}
	}
	return true
}

// The due index gives exactly what reading every open delivery gave, the
// per-key order included, through random deliveries, attempts (delivered,
// retried, given up) and resends, on every engine.
func TestDueIndexAgreesWithOpenDeliveries(t *testing.T) {
	pgtest.OwnEngine(t)
	eps := []string{"http://shop.test/a", "http://shop.test/b"}
	keys := []string{"K1", "K2", "K3", "", "K3\x00x"}
	for name, open := range outboxEngines(t, eps) {
		t.Run(name, func(t *testing.T) {
			keys := keys
			if name == "pg-native" {
				keys = keys[:len(keys)-1] // a column of text holds no NUL
			}
			db := open(t)
			ctx := context.Background()
			r := rand.New(rand.NewPCG(26, 1))
			var ids []uint64
			for step := range 400 {
				now := t0.Add(time.Duration(r.IntN(100)) * time.Second)
				var what string
				switch op := r.IntN(10); {
				case op < 4 || len(ids) == 0:
					d := &Delivery{PushID: uint64(step + 1), Key: keys[r.IntN(len(keys))], Endpoint: eps[r.IntN(len(eps))], Created: t0,
						State: DeliveryPending, NextAt: t0}
					err := db.update(t.Context(), func(tx RepoTx, _ *Change) error { _, err := tx.AppendDelivery(d); return err })
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, d.ID)
					what = fmt.Sprintf("append %d (%q to %s)", d.ID, d.Key, d.Endpoint)
				case op < 9:
					id := ids[r.IntN(len(ids))]
					out := AttemptOutcome{NextAt: now.Add(time.Duration(r.IntN(60)) * time.Second)}
					switch r.IntN(3) {
					case 0:
						out = AttemptOutcome{Delivered: true}
					case 1:
						out = AttemptOutcome{GaveUp: true}
					}
					if err := db.RecordAttempt(ctx, id, Attempt{At: now, Status: 500}, out); err != nil {
						t.Fatal(err)
					}
					what = fmt.Sprintf("attempt on %d: %+v", id, out)
				default:
					id := ids[r.IntN(len(ids))]
					if _, err := db.Redeliver(ctx, ResendRequest{ID: id}); err != nil {
						t.Fatal(err)
					}
					what = fmt.Sprintf("resend %d", id)
				}
				checkDueIndex(t, db, fmt.Sprintf("step %d, %s", step, what), t0, now, t0.Add(time.Minute), t0.Add(time.Hour))
			}
		})
	}
}

// A file whose open deliveries were recorded before the due index (an
// earlier paydesk) is read from its open deliveries until the next
// delivery written builds the index.
func TestDueIndexBuiltForAnEarlierFile(t *testing.T) {
	pgtest.OwnEngine(t)
	path := filepath.Join(t.TempDir(), "paydesk.db")
	eps := []string{"http://shop.test/a"}
	db, err := Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: eps})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"K1", "K2", "K1", "K3"} {
		d := &Delivery{PushID: uint64(i + 1), Key: k, Endpoint: eps[0], Created: t0, State: DeliveryPending, NextAt: t0.Add(time.Duration(i) * time.Second)}
		if err := db.update(t.Context(), func(tx RepoTx, _ *Change) error { _, err := tx.AppendDelivery(d); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The earlier layout: deliveries and the open ones, no indexes.
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bDeliveryChain); err != nil {
			return err
		}
		return tx.DeleteBucket(bDeliveryDue)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{NoSync: true, Now: func() time.Time { return t0 }, ForwardTo: eps})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	late := t0.Add(time.Minute)
	due, _, err := db.NextDeliveries(context.Background(), late, 0)
	if err != nil || len(due) != 3 || due[0].ID != 1 || due[1].ID != 2 || due[2].ID != 4 {
		t.Fatalf("before the index: due %+v, %v; want 1, 2, 4 (3 waits for 1)", due, err)
	}
	if err := db.RecordAttempt(context.Background(), 1, Attempt{At: late, Status: 200}, AttemptOutcome{Delivered: true}); err != nil {
		t.Fatal(err)
	}
	err = db.read(t.Context(), func(tx RepoTx) error {
		_, _, ok, err := tx.(dueIndex).DueDeliveries(late, 0)
		if !ok || err != nil {
			t.Fatalf("no index after a write: ok %v, %v", ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkDueIndex(t, db, "after the first write", t0, t0.Add(2*time.Second), late)
	due, _, err = db.NextDeliveries(context.Background(), late, 0)
	if err != nil || !reflect.DeepEqual([]uint64{due[0].ID, due[1].ID, due[2].ID}, []uint64{2, 3, 4}) {
		t.Fatalf("after the index: due %+v, %v; want 2, 3, 4", due, err)
	}
}
