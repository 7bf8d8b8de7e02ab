package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"paydesk/internal/pgtest"
)

// leaseDeadline only ends a stuck test.
const leaseDeadline = 2 * time.Minute

// TestHoldOutbox: on a file the outbox's lease is the process's at once;
// on a team's database one store holds it at a time — a second waits
// until the first gives it back, and a holder whose connection is ended
// (its process gone) loses it, its context ending, and the waiter gets it.
func TestHoldOutbox(t *testing.T) {
	pgtest.OwnEngine(t)
	ctx := context.Background()
	t.Run("file", func(t *testing.T) {
		db, err := Open(filepath.Join(t.TempDir(), "paydesk.db"), Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		held, release, err := db.HoldOutbox(ctx)
		if err != nil || held.Err() != nil {
			t.Fatalf("a file's lease: %v, %v", err, held.Err())
		}
		release()
		if held.Err() == nil {
			t.Fatal("released, its context goes on")
		}
	})
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, admin *pgx.Conn, release func())
	}{
		{"given back", func(_ *testing.T, _ *pgx.Conn, release func()) { release() }},
		{"session ended", func(t *testing.T, admin *pgx.Conn, _ func()) {
			// As when its process is killed: the server ends the session.
			var n int
			if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
				WHERE locktype = 'advisory' AND granted AND objid = $1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
				int64(outboxLockKey&0xffffffff)).Scan(&n); err != nil || n != 1 {
				t.Fatalf("ended %d sessions holding the lease: %v", n, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := freshNative(t)
			open := func() *DB {
				db, err := Open(dsn, Options{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = db.Close() })
				return db
			}
			a, b := open(), open()
			admin, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			heldA, releaseA, err := a.HoldOutbox(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseA()
			type got struct {
				held    context.Context
				release func()
				err     error
			}
			second := make(chan got, 1)
			go func() {
				h, r, err := b.HoldOutbox(ctx)
				second <- got{h, r, err}
			}()
			waitLease(t, "the second to wait for the lease", func() bool {
				var waiting int
				if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1
					AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
					int64(outboxLockKey&0xffffffff)).Scan(&waiting); err != nil {
					t.Fatal(err)
				}
				return waiting == 1
			})
			select {
			case g := <-second:
				t.Fatalf("a second store got the lease while the first held it: %v", g.err)
			default:
			}
			tc.end(t, admin, releaseA)
			select {
			case <-heldA.Done():
			case <-time.After(leaseDeadline):
				t.Fatal("the first holder's context goes on after its lease ended")
			}
			var g got
			select {
			case g = <-second:
			case <-time.After(leaseDeadline):
				t.Fatal("the second store never got the lease")
			}
			if g.err != nil || g.held.Err() != nil {
				t.Fatalf("the second's lease: %v", g.err)
			}
			g.release()
		})
	}
}

// waitLease polls cond until it holds; the deadline only ends a stuck test.
func waitLease(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(leaseDeadline); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}
