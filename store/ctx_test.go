package store

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"paydesk/api"
)

// cancelAfter is a context that reports itself cancelled from its
// (n+1)th look at Err on: a read that looks once before it begins and
// again between chunks of rows is stopped half-way, at the same row on
// every run, without a timer.
type cancelAfter struct {
	context.Context
	left  atomic.Int64
	looks atomic.Int64
}

func newCancelAfter(n int64) *cancelAfter {
	c := &cancelAfter{Context: context.Background()}
	c.left.Store(n)
	return c
}

func (c *cancelAfter) Err() error {
	c.looks.Add(1)
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// onFile reports whether db is a bbolt file (the bucket engine on a file,
// not PostgreSQL).
func onFile(db *DB) bool { return db.bk != nil && db.bk.File() != nil }

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// longReads are the reads that walk a whole list or log: each is run
// with a live context (it must work), with one already cancelled, and on
// a file stopped half-way.
var longReads = []struct {
	name string
	read func(ctx context.Context, db *DB) error
}{
	{"ReservationCount filtered", func(ctx context.Context, db *DB) error {
		_, err := db.ReservationCount(ctx, PageQuery{Filter: "example"})
		return err
	}},
	{"ReservationPage filtered", func(ctx context.Context, db *DB) error {
		_, err := db.ReservationPage(ctx, PageQuery{Filter: "example.com", Sort: SortAmount, Limit: 50})
		return err
	}},
	{"LoadReservationSummaries", func(ctx context.Context, db *DB) error {
		_, err := db.LoadReservationSummaries(ctx)
		return err
	}},
	{"Transactions", func(ctx context.Context, db *DB) error {
		_, err := db.Transactions(ctx)
		return err
	}},
	{"TransactionCount", func(ctx context.Context, db *DB) error {
		_, err := db.TransactionCount(ctx, PageQuery{Filter: "INV"})
		return err
	}},
	{"VerifyAudit", func(ctx context.Context, db *DB) error {
		_, err := db.VerifyAudit(ctx)
		return err
	}},
}

// longData fills db with more rows than a walk of a file reads between
// two looks at its context: a search looks every 64 blocks of 64 rows, a
// walk of a log every 1,024 entries. PostgreSQL gets a few (its queries
// stop at once when the context is done; what is checked there is that
// the context reaches them).
func longData(t *testing.T, db *DB) {
	t.Helper()
	n, audits := 4200, 1100
	if !onFile(db) {
		n, audits = 100, 10
	}
	pageData(t, db, n)
	var ts []*Transaction
	for i := range n {
		ts = append(ts, &Transaction{Key: "T" + itoa(100000+i), Kind: KindCapture, Invoice: "INV-" + itoa(i), Currency: "EUR",
			Amount: dec("1.00"), Created: t0, Status: Status{Code: api.StatusSuccess, Time: t0}})
	}
	if err := db.PutTransactions(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	for i := range audits {
		if _, err := db.AppendAudit(t.Context(), AuditEntry{Time: t0, Operator: "test", Action: "note", Target: itoa(i), Result: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCancelledContextStopsALongRead: a read whose context is done
// returns the context's error, wrapped; one that is live answers. On
// either engine (PAYDESK_STORE_BACKEND=postgres). On a file a long read
// also looks at its context between chunks of rows, so a context
// cancelled while it walks stops it there (cancelAfter cancels at the
// second look, after the one before the read begins); PostgreSQL stops a
// query itself when its context is cancelled.
func TestCancelledContextStopsALongRead(t *testing.T) {
	db := openTest(t)
	longData(t, db)
	for _, c := range longReads {
		t.Run(c.name, func(t *testing.T) {
			// Half-way first: a live read would leave its search in the
			// list's cache, which the next read of the file answers from.
			if onFile(db) {
				ctx := newCancelAfter(1)
				err := c.read(ctx, db)
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled half-way: %v, want context.Canceled (looked %d times)", err, ctx.looks.Load())
				}
				if ctx.looks.Load() < 2 {
					t.Fatalf("looked at the context %d times: it never looked while walking", ctx.looks.Load())
				}
			}
			if err := c.read(cancelled(), db); !errors.Is(err, context.Canceled) {
				t.Fatalf("with a cancelled context: %v, want context.Canceled", err)
			}
			if err := c.read(t.Context(), db); err != nil {
				t.Fatalf("with a live context: %v", err)
			}
		})
	}
}

// TestCancelledContextWritesNothing: a write whose context is done before
// it begins returns the context's error and leaves the store as it was.
func TestCancelledContextWritesNothing(t *testing.T) {
	writes := []struct {
		name  string
		write func(ctx context.Context, db *DB) error
	}{
		{"PutReservations", func(ctx context.Context, db *DB) error {
			return db.PutReservations(ctx, []*Reservation{{Key: "K1", ReservationNumber: "R1", Invoice: "INV-1", Currency: "EUR", Created: t0,
				Status: Status{Code: api.StatusSuccess, Time: t0}}})
		}},
		{"PutTransactions", func(ctx context.Context, db *DB) error {
			return db.PutTransactions(ctx, []*Transaction{{Key: "T1", Kind: KindCapture, Currency: "EUR", Amount: dec("1.00"), Created: t0,
				Status: Status{Code: api.StatusSuccess, Time: t0}}})
		}},
		{"AppendAudit", func(ctx context.Context, db *DB) error {
			_, err := db.AppendAudit(ctx, AuditEntry{Time: t0, Operator: "test", Action: "note", Result: "ok"})
			return err
		}},
		{"BeginOp", func(ctx context.Context, db *DB) error {
			_, err := db.BeginOp(ctx, PendingOp{Action: api.ActionCancelReservation, Target: "R1", Created: t0})
			return err
		}},
		{"ApplyPush", func(ctx context.Context, db *DB) error {
			g := &gw{clock: t0}
			_, err := db.ApplyPush(ctx, PushRecord{ReceivedAt: t0}, dataPush(g.key(), "INV-1", api.ActionCancelReservation, g.status(api.StatusSuccess, "")))
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			db := openTest(t)
			before, err := db.Counts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.write(cancelled(), db); !errors.Is(err, context.Canceled) {
				t.Fatalf("write with a cancelled context: %v, want context.Canceled", err)
			}
			after, err := db.Counts(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			audit, err := db.Audit(t.Context(), 0)
			if err != nil {
				t.Fatal(err)
			}
			ops, err := db.Ops(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if after != before || len(audit) != 0 || len(ops) != 0 {
				t.Fatalf("a cancelled write wrote: counts %+v → %+v, %d audit entries, %d operations", before, after, len(audit), len(ops))
			}
			// The same write with a live context does write (the check
			// above is not of a write that never writes).
			if err := w.write(t.Context(), db); err != nil {
				t.Fatalf("write with a live context: %v", err)
			}
		})
	}
}

// TestCancelledContextStopsACopy: a copy whose context is done copies
// nothing (it stops before its first chunk; a copy cut short later
// resumes).
func TestCancelledContextStopsACopy(t *testing.T) {
	src, dst := openTest(t), openTest(t)
	if !onFile(src) {
		t.Skip("a key-by-key copy is between files or kv databases")
	}
	pageData(t, src, 50)
	if err := src.CopyTo(cancelled(), dst, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("copy with a cancelled context: %v, want context.Canceled", err)
	}
	if n, err := dst.Counts(t.Context()); err != nil || n.Reservations != 0 {
		t.Fatalf("a cancelled copy copied: %+v, %v", n, err)
	}
	if err := src.CopyTo(t.Context(), dst, nil); err != nil {
		t.Fatalf("copy with a live context: %v", err)
	}
	if n, err := dst.Counts(t.Context()); err != nil || n.Reservations != 50 {
		t.Fatalf("the copy has %+v, %v; want 50 reservations", n, err)
	}
}
