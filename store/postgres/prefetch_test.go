package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"paydesk/internal/pgtest"
	"paydesk/store/domain"
)

// TestPrefetchAnswersAbsentKeysWithoutStatements: after the applier's
// read-ahead (PrefetchForPushes) a rule's read of a key the batch named and
// that has no such row — a push, a transaction, refunds — and the open
// operations are answered without a statement (the transaction's context
// is cancelled: any statement would fail); a key that has rows, or that the
// transaction wrote since, is read from the database.
func TestPrefetchAnswersAbsentKeysWithoutStatements(t *testing.T) {
	e, err := Open(context.Background(), pgtest.Fresh(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	if err := e.UpdateTx(ctx, func(tx *Tx) error {
		if _, err := tx.AppendPush(&domain.PushRecord{Key: "OLD", Hash: [32]byte{1}}, domain.PushEncoding{}); err != nil {
			return err
		}
		if _, err := tx.PutTransaction(&domain.Transaction{Key: "OLD", Kind: domain.KindCapture, Amount: decimal.RequireFromString("5")}); err != nil {
			return err
		}
		return tx.LinkRefund("OLD", "R1")
	}); err != nil {
		t.Fatal(err)
	}
	batch := []string{"OLD", "NEW"}
	for _, c := range []struct {
		name          string
		read          func(tx *Tx) (found bool, err error)
		wantStatement bool
	}{
		{"no push under the key", func(tx *Tx) (bool, error) { id, err := tx.PushDuplicate("NEW", [32]byte{1}); return id != 0, err }, false},
		{"no transaction", func(tx *Tx) (bool, error) { x, err := tx.Transaction("NEW"); return x != nil, err }, false},
		{"no refunds", func(tx *Tx) (bool, error) { r, err := tx.RefundKeys("NEW"); return len(r) > 0, err }, false},
		{"open operations", func(tx *Tx) (bool, error) { ops, err := tx.OpenOps(); return len(ops) > 0, err }, false},
		{"a push under the key", func(tx *Tx) (bool, error) { id, err := tx.PushDuplicate("OLD", [32]byte{1}); return id != 0, err }, true},
		{"a transaction", func(tx *Tx) (bool, error) { x, err := tx.Transaction("OLD"); return x != nil, err }, true},
		{"refunds", func(tx *Tx) (bool, error) { r, err := tx.RefundKeys("OLD"); return len(r) > 0, err }, true},
		{"a key not in the batch", func(tx *Tx) (bool, error) { x, err := tx.Transaction("OTHER"); return x != nil, err }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var readErr error
			_ = e.ViewTx(ctx, func(tx *Tx) error {
				if err := tx.PrefetchForPushes(batch, nil, len(batch)); err != nil {
					t.Fatalf("PrefetchForPushes: %v", err)
				}
				cancelled, cancel := context.WithCancel(ctx)
				cancel()
				tx.ctx = cancelled
				found, err := c.read(tx)
				if err == nil && found {
					t.Errorf("found a row without a statement")
				}
				readErr = err
				return nil
			})
			if got := readErr != nil; got != c.wantStatement {
				t.Errorf("went to the database: %v (%v), want %v", got, readErr, c.wantStatement)
			}
		})
	}
}

// TestPrefetchFollowsTheTransactionsWrites: what the transaction writes
// after the read-ahead is read back, not answered from it.
func TestPrefetchFollowsTheTransactionsWrites(t *testing.T) {
	e, err := Open(context.Background(), pgtest.Fresh(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if err := e.UpdateTx(context.Background(), func(tx *Tx) error {
		if err := tx.PrefetchForPushes([]string{"K"}, nil, 1); err != nil {
			return err
		}
		id, err := tx.AppendPush(&domain.PushRecord{Key: "K", Hash: [32]byte{2}}, domain.PushEncoding{})
		if err != nil {
			return err
		}
		if dup, err := tx.PushDuplicate("K", [32]byte{2}); err != nil || dup != id {
			t.Errorf("PushDuplicate after AppendPush = %d, %v; want %d", dup, err, id)
		}
		if _, err := tx.PutTransaction(&domain.Transaction{Key: "K", Kind: domain.KindCapture, Amount: decimal.RequireFromString("5")}); err != nil {
			return err
		}
		if x, err := tx.Transaction("K"); err != nil || x == nil {
			t.Errorf("Transaction after PutTransaction = %v, %v; want the row", x, err)
		}
		if err := tx.LinkRefund("K", "R"); err != nil {
			return err
		}
		if r, err := tx.RefundKeys("K"); err != nil || len(r) != 1 {
			t.Errorf("RefundKeys after LinkRefund = %v, %v; want [R]", r, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPrefetchQueuesThePushWrites: after the read-ahead in a write
// transaction, a push's row in the push log and a new transaction are
// written without a statement of their own (the context is cancelled: any
// statement would fail), under rising push numbers; they reach the
// database, in order, with the next statement; a queued write the database
// refuses fails the transaction, naming the push.
func TestPrefetchQueuesThePushWrites(t *testing.T) {
	e, err := Open(context.Background(), pgtest.Fresh(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		keys    []string
		hashes  [][32]byte
		wantErr string // "" when the commit succeeds
	}{
		{"two new pushes and their transactions", []string{"A", "B"}, [][32]byte{{1}, {2}}, ""},
		{"the same push twice: the push log refuses the second", []string{"C", "C"}, [][32]byte{{3}, {3}}, "push C"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ids []uint64
			err := e.UpdateTx(ctx, func(tx *Tx) error {
				ids = ids[:0]
				if err := tx.PrefetchForPushes(c.keys, nil, len(c.keys)); err != nil {
					return err
				}
				live := tx.ctx
				cancelled, cancel := context.WithCancel(ctx)
				cancel()
				tx.ctx = cancelled
				for i, k := range c.keys {
					id, err := tx.AppendPush(&domain.PushRecord{Key: k, Hash: c.hashes[i]}, domain.PushEncoding{})
					if err != nil {
						t.Fatalf("AppendPush %s went to the database: %v", k, err)
					}
					ids = append(ids, id)
					if i > 0 && c.keys[i] == c.keys[i-1] {
						continue
					}
					created, err := tx.PutTransaction(&domain.Transaction{Key: k, Kind: domain.KindCapture, Amount: decimal.RequireFromString("5")})
					if err != nil || !created {
						t.Fatalf("PutTransaction %s = %v, %v; want created without a statement", k, created, err)
					}
				}
				tx.ctx = live
				return nil
			})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("commit: %v; want an error naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != 2 || ids[1] <= ids[0] {
				t.Fatalf("push numbers %v, want two rising", ids)
			}
			if err := e.ViewTx(ctx, func(tx *Tx) error {
				for i, k := range c.keys {
					if id, err := tx.PushDuplicate(k, c.hashes[i]); err != nil || id != ids[i] {
						t.Errorf("push %s: number %d (%v), want %d", k, id, err, ids[i])
					}
					if x, err := tx.Transaction(k); err != nil || x == nil {
						t.Errorf("transaction %s: %v, %v; want the row", k, x, err)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
