package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"paydesk/store/domain"
)

// LoadReservationSummaries returns the list row of every reservation, in key
// order. On a file each row is read from its reservation record
// (kvlayout.SummaryOf): 100,000 rows in about 160 ms
// (BenchmarkLoadSummaries).
func (db *DB) LoadReservationSummaries(ctx context.Context) ([]Summary, error) {
	var out []Summary
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.Summaries()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load reservations: %w", err)
	}
	return out, nil
}

// Reservation finds a reservation by key, reservation number or invoice
// (the newest reservation with that invoice). Not found names the three.
func (db *DB) Reservation(ctx context.Context, ref string) (*Reservation, error) {
	r, err := getOne(ctx, db, "reservation "+ref, func(tx RepoTx) (*Reservation, error) { return resolveReservation(tx, ref) })
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("reservation %s: %w (no reservation has it as key, reservation number or invoice)", ref, ErrNotFound)
	}
	return r, err
}

// resolveReservation finds a reservation by key, reservation number or
// invoice: what an operator may type. An invoice can name several
// reservations (a shop that reserved again after a decline, test
// reservations made within one second): then the one that can still be
// captured or cancelled is meant; with none or several of those the
// reference is refused, naming them, rather than guessed.
func resolveReservation(tx RepoTx, ref string) (*Reservation, error) {
	r, err := findReservation(tx, ref)
	if r != nil || err != nil || ref == "" {
		return r, err
	}
	keys, err := tx.ReservationKeysByInvoice(ref)
	if err != nil {
		return nil, err
	}
	var all, open []*Reservation
	for _, k := range keys {
		x, err := tx.Reservation(k)
		if err != nil {
			return nil, err
		}
		if x == nil {
			continue
		}
		all = append(all, x)
		if st := x.State(); st == StateReserved || st == StatePartlyCaptured {
			open = append(open, x)
		}
	}
	switch {
	case len(all) <= 1:
		if len(all) == 1 {
			return all[0], nil
		}
		return nil, nil
	case len(open) == 1:
		return open[0], nil
	}
	names := make([]string, 0, len(all))
	for _, x := range all {
		names = append(names, x.Ref()+" ("+string(x.State())+")")
	}
	return nil, fmt.Errorf("the invoice names %d reservations: %s; %w", len(all), strings.Join(names, ", "), ErrAmbiguous)
}

// ResolveTransaction finds a transaction by key or, for a deferred-invoice
// capture or refund, by the merchant's invoice when exactly one capture has
// it (a refund is for a capture: that is what an operator names). Several
// captures under one invoice are refused naming their keys.
func (db *DB) ResolveTransaction(ctx context.Context, ref string) (*Transaction, error) {
	var found *Transaction
	var candidates []string
	err := db.read(ctx, func(tx RepoTx) error {
		t, err := tx.Transaction(ref)
		if t != nil || err != nil {
			found = t
			return err
		}
		keys, err := tx.TransactionKeysByInvoice(ref)
		if err != nil {
			return err
		}
		for _, k := range keys {
			t, err := tx.Transaction(k)
			if err != nil {
				return err
			}
			if t != nil && t.Kind == KindCapture && t.Status.IsSuccess() {
				found = t
				candidates = append(candidates, t.Key+" ("+t.Amount.StringFixed(2)+" "+t.Currency+")")
			}
		}
		return nil
	})
	if err == nil && found == nil {
		// Gift card payments stay out of the invoice lookup (ingest speed):
		// look for one by invoice the slow way, for an operator's command.
		found, candidates, err = db.giftCardByInvoice(ctx, ref)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("transaction %s: %w", ref, err)
	case len(candidates) > 1:
		return nil, fmt.Errorf("transaction %s: the invoice has %d payments: %s; name one by its key", ref, len(candidates), strings.Join(candidates, ", "))
	case found == nil:
		return nil, fmt.Errorf("transaction %s: %w (no transaction has it as key, no capture or gift card payment as invoice)", ref, ErrNotFound)
	}
	return found, nil
}

// Transaction finds a transaction by key.
func (db *DB) Transaction(ctx context.Context, key string) (*Transaction, error) {
	return getOne(ctx, db, "transaction "+key, func(tx RepoTx) (*Transaction, error) { return tx.Transaction(key) })
}

// getOne reads one record in a read transaction: nothing found is
// ErrNotFound, and every error names what was looked up.
func getOne[T any](ctx context.Context, db *DB, what string, get func(RepoTx) (*T, error)) (*T, error) {
	var v *T
	err := db.read(ctx, func(tx RepoTx) (err error) {
		v, err = get(tx)
		return err
	})
	if err == nil && v == nil {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// TransactionsFor returns the captures and refunds of a reservation (by key or
// reservation number), oldest first.
func (db *DB) TransactionsFor(ctx context.Context, ref string) ([]*Transaction, error) {
	var out []*Transaction
	err := db.read(ctx, func(tx RepoTx) error {
		r, err := resolveReservation(tx, ref)
		if err != nil {
			return err
		}
		if r == nil {
			return ErrNotFound
		}
		for _, k := range r.Transactions {
			t, err := tx.Transaction(k)
			if err != nil {
				return err
			}
			if t != nil {
				out = append(out, t)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("transactions of %s: %w", ref, err)
	}
	sortTxOldestFirst(out)
	return out, nil
}

func sortTxOldestFirst(ts []*Transaction) {
	sort.SliceStable(ts, func(i, j int) bool {
		if !ts[i].Created.Equal(ts[j].Created) {
			return ts[i].Created.Before(ts[j].Created)
		}
		return ts[i].Key < ts[j].Key
	})
}

// Transactions returns every transaction, newest first.
func (db *DB) Transactions(ctx context.Context) ([]*Transaction, error) {
	var out []*Transaction
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.Transactions()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load transactions: %w", err)
	}
	sortTxOldestFirst(out)
	slices.Reverse(out)
	return out, nil
}

// TransactionGroup returns a gift card group: the payment whose key is
// group and the payments made as part of it, oldest first.
func (db *DB) TransactionGroup(ctx context.Context, group string) ([]*Transaction, error) {
	if group == "" {
		return nil, nil
	}
	var out []*Transaction
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.TransactionGroup(group)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("transaction group %s: %w", group, err)
	}
	sortTxOldestFirst(out)
	return out, nil
}

// Push returns one stored push by ID.
func (db *DB) Push(ctx context.Context, id uint64) (*PushRecord, error) {
	return getOne(ctx, db, "push "+strconv.FormatUint(id, 10), func(tx RepoTx) (*PushRecord, error) { return tx.Push(id) })
}

// Pushes returns up to limit stored pushes (0: all), newest first, with IDs
// below beforeID (0: from the newest).
func (db *DB) Pushes(ctx context.Context, limit int, beforeID uint64) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.PushesBefore(beforeID, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load pushes: %w", err)
	}
	return out, nil
}

// RejectedPushes returns up to limit rejected pushes, newest first (0: all
// kept).
func (db *DB) RejectedPushes(ctx context.Context, limit int) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.RejectedNewest(limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load rejected pushes: %w", err)
	}
	return out, nil
}

// PushesFor returns the pushes about any of the given keys, oldest first.
func (db *DB) PushesFor(ctx context.Context, keys ...string) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = pushesFor(tx, keys)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load pushes: %w", err)
	}
	return out, nil
}

func pushesFor(tx RepoTx, keys []string) ([]*PushRecord, error) {
	var ids []uint64
	for _, key := range keys {
		if key == "" {
			continue
		}
		of, err := tx.PushIDsOf(key)
		if err != nil {
			return nil, err
		}
		ids = append(ids, of...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]*PushRecord, 0, len(ids))
	for _, id := range ids {
		p, err := tx.Push(id)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// PushesForReservation returns the pushes of a reservation and of all its
// data requests and transactions, oldest first.
func (db *DB) PushesForReservation(ctx context.Context, ref string) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.read(ctx, func(tx RepoTx) error {
		r, err := findReservation(tx, ref)
		if err != nil {
			return err
		}
		if r == nil {
			return ErrNotFound
		}
		keys := []string{r.Key}
		for _, rq := range r.Requests {
			keys = append(keys, rq.Key)
		}
		keys = append(keys, r.Transactions...)
		out, err = pushesFor(tx, keys)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pushes of %s: %w", ref, err)
	}
	return out, nil
}

// Op returns one operation.
func (db *DB) Op(ctx context.Context, id uint64) (*PendingOp, error) {
	var op *PendingOp
	err := db.read(ctx, func(tx RepoTx) (err error) {
		op, err = getOp(tx, id)
		return err
	})
	return op, err
}

// Ops returns the operations in the given states (none: all), newest first.
// Asking only for open states reads just the open operations.
func (db *DB) Ops(ctx context.Context, states ...OpState) ([]*PendingOp, error) {
	onlyOpen := len(states) > 0
	for _, s := range states {
		onlyOpen = onlyOpen && s.IsOpen()
	}
	var out []*PendingOp
	err := db.read(ctx, func(tx RepoTx) error {
		var all []*PendingOp
		if onlyOpen {
			open, err := tx.OpenOps()
			if err != nil {
				return err
			}
			for i := len(open) - 1; i >= 0; i-- {
				op, err := getOp(tx, open[i].ID)
				if err != nil {
					return err
				}
				all = append(all, op)
			}
		} else {
			var err error
			if all, err = tx.Ops(); err != nil {
				return err
			}
		}
		for _, op := range all {
			if len(states) == 0 || slices.Contains(states, op.State) {
				out = append(out, op)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load operations: %w", err)
	}
	return out, nil
}

// Exchanges returns up to limit gateway log entries, newest first (0: all).
func (db *DB) Exchanges(ctx context.Context, limit int) ([]Exchange, error) {
	var out []Exchange
	err := db.read(ctx, func(tx RepoTx) (err error) {
		out, err = tx.Exchanges(limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load gateway log: %w", err)
	}
	return out, nil
}

// Counts returns the status bar figures.
func (db *DB) Counts(ctx context.Context) (Counts, error) {
	var n Counts
	err := db.read(ctx, func(tx RepoTx) error {
		t, err := tx.Tally()
		if err != nil {
			return err
		}
		n.Pushes, n.Rejected = uint64(t.Pushes), uint64(t.Rejected)
		n.Reservations, n.Transactions = int(t.Reservations), int(t.Transactions)
		open, err := tx.OpenOps()
		if err != nil {
			return err
		}
		for _, o := range open {
			op, err := getOp(tx, o.ID)
			if err != nil {
				return err
			}
			if op.State == OpOutcomeUnknown {
				n.OutcomeUnknown++
			}
		}
		return nil
	})
	if err != nil {
		return Counts{}, fmt.Errorf("counts: %w", err)
	}
	return n, nil
}

// giftCardByInvoice finds the successful gift card payments with the
// invoice: a search of the transaction list (the invoice among its words),
// kind by kind, keeping the exact matches.
func (db *DB) giftCardByInvoice(ctx context.Context, invoice string) (found *Transaction, candidates []string, err error) {
	for _, kind := range []Kind{KindGiftCardPay, KindGiftCardRemainder} {
		q := PageQuery{Filter: invoice, State: State(kind), Limit: domain.MaxPageLimit}
		for {
			p, err := db.TransactionPage(ctx, q)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range p.Rows {
				if t := r.Tx; t.Invoice == invoice && t.Status.IsSuccess() {
					found = t
					candidates = append(candidates, t.Key+" ("+t.Amount.StringFixed(2)+" "+t.Currency+")")
				}
			}
			if !p.More || len(p.Rows) == 0 {
				break
			}
			q.After = p.Rows[len(p.Rows)-1].Pos
		}
	}
	return found, candidates, nil
}
