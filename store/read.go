package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func (db *DB) view(fn func(tx Tx) error) (err error) {
	defer recoverDamage(db.path, &err)
	return db.eng.View(fn)
}

// LoadReservationSummaries returns the list row of every reservation, in key
// order. It reads only the compact summary bucket (100,000 rows in well under
// 300 ms).
func (db *DB) LoadReservationSummaries() ([]Summary, error) {
	var out []Summary
	err := db.view(func(tx Tx) error {
		b := tx.Bucket(bSummary)
		out = make([]Summary, 0, metaCount(tx.Bucket(bMeta), kReservationCount))
		return b.ForEach(func(k, v []byte) error {
			s, err := decodeSummary(v)
			if err != nil {
				return fmt.Errorf("summary %s: %w", k, err)
			}
			out = append(out, s)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load reservations: %w", err)
	}
	return out, nil
}

// Reservation finds a reservation by key, reservation number or invoice
// (the newest reservation with that invoice). Not found names the three.
func (db *DB) Reservation(ref string) (*Reservation, error) {
	r, err := getOne(db, "reservation "+ref, func(tx Tx) (*Reservation, error) { return resolveReservation(tx, ref) })
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
func resolveReservation(tx Tx, ref string) (*Reservation, error) {
	r, err := findReservation(tx, ref)
	if r != nil || err != nil || ref == "" {
		return r, err
	}
	var all, open []*Reservation
	prefix := append([]byte(ref), 0)
	c := tx.Bucket(bInvoice).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(v) != 1 || v[0] != invReservation {
			continue
		}
		x, err := getReservation(tx, string(k[len(prefix):]))
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
		names = append(names, x.ref()+" ("+string(x.State())+")")
	}
	return nil, fmt.Errorf("the invoice names %d reservations: %s; %w", len(all), strings.Join(names, ", "), ErrAmbiguous)
}

// ResolveTransaction finds a transaction by key or, for a deferred-invoice
// capture or refund, by the merchant's invoice when exactly one capture has
// it (a refund is for a capture: that is what an operator names). Several
// captures under one invoice are refused naming their keys.
func (db *DB) ResolveTransaction(ref string) (*Transaction, error) {
	var found *Transaction
	var candidates []string
	err := db.view(func(tx Tx) error {
		t, err := getTx(tx, ref)
		if t != nil || err != nil {
			found = t
			return err
		}
		prefix := append([]byte(ref), 0)
		c := tx.Bucket(bInvoice).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(v) != 1 || v[0] != invTransaction {
				continue
			}
			t, err := getTx(tx, string(k[len(prefix):]))
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
		// Gift card payments stay out of the invoice index (ingest speed):
		// look for one by invoice the slow way, for an operator's command.
		found, candidates, err = db.giftCardByInvoice(ref)
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
func (db *DB) Transaction(key string) (*Transaction, error) {
	return getOne(db, "transaction "+key, func(tx Tx) (*Transaction, error) { return getTx(tx, key) })
}

// getOne reads one record in a read transaction: nothing found is
// ErrNotFound, and every error names what was looked up.
func getOne[T any](db *DB, what string, get func(Tx) (*T, error)) (*T, error) {
	var v *T
	err := db.view(func(tx Tx) (err error) {
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
func (db *DB) TransactionsFor(ref string) ([]*Transaction, error) {
	var out []*Transaction
	err := db.view(func(tx Tx) error {
		r, err := resolveReservation(tx, ref)
		if err != nil {
			return err
		}
		if r == nil {
			return ErrNotFound
		}
		for _, k := range r.Transactions {
			t, err := getTx(tx, k)
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
func (db *DB) Transactions() ([]*Transaction, error) {
	var out []*Transaction
	err := db.view(func(tx Tx) error {
		return tx.Bucket(bTransaction).ForEach(func(k, v []byte) error {
			if isPushIndexKey(k) {
				return nil
			}
			t, err := decodeTx(v)
			if err != nil {
				return fmt.Errorf("transaction %s: %w", k, err)
			}
			out = append(out, t)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("load transactions: %w", err)
	}
	sortTxOldestFirst(out)
	slices.Reverse(out)
	return out, nil
}

// Push returns one stored push by ID.
func (db *DB) Push(id uint64) (*PushRecord, error) {
	return getOne(db, "push "+strconv.FormatUint(id, 10), func(tx Tx) (*PushRecord, error) {
		v := tx.Bucket(bPush).Get(u64(id))
		if v == nil {
			return nil, ErrNotFound
		}
		return decodePush(v)
	})
}

// Pushes returns up to limit stored pushes (0: all), newest first, with IDs
// below beforeID (0: from the newest).
func (db *DB) Pushes(limit int, beforeID uint64) ([]*PushRecord, error) {
	out, err := db.newest(bPush, limit, beforeID)
	if err != nil {
		return nil, fmt.Errorf("load pushes: %w", err)
	}
	return out, nil
}

// RejectedPushes returns up to limit rejected pushes, newest first (0: all
// kept).
func (db *DB) RejectedPushes(limit int) ([]*PushRecord, error) {
	out, err := db.newest(bRejected, limit, 0)
	if err != nil {
		return nil, fmt.Errorf("load rejected pushes: %w", err)
	}
	return out, nil
}

func (db *DB) newest(bucket []byte, limit int, beforeID uint64) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.view(func(tx Tx) error {
		c := tx.Bucket(bucket).Cursor()
		var k, v []byte
		if beforeID == 0 {
			k, v = c.Last()
		} else {
			c.Seek(u64(beforeID))
			k, v = c.Prev()
		}
		for ; k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			p, err := decodePush(v)
			if err != nil {
				return fmt.Errorf("push %d: %w", be64(k), err)
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// PushesFor returns the pushes about any of the given keys, oldest first.
func (db *DB) PushesFor(keys ...string) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.view(func(tx Tx) (err error) {
		out, err = pushesFor(tx, keys)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load pushes: %w", err)
	}
	return out, nil
}

func pushesFor(tx Tx, keys []string) ([]*PushRecord, error) {
	var ids []uint64
	for _, key := range keys {
		if key == "" {
			continue
		}
		eachPushOf(tx, key, func(id uint64, _ []byte) bool {
			ids = append(ids, id)
			return true
		})
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]*PushRecord, 0, len(ids))
	pb := tx.Bucket(bPush)
	for _, id := range ids {
		v := pb.Get(u64(id))
		if v == nil {
			continue
		}
		p, err := decodePush(v)
		if err != nil {
			return nil, fmt.Errorf("push %d: %w", id, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// PushesForReservation returns the pushes of a reservation and of all its
// data requests and transactions, oldest first.
func (db *DB) PushesForReservation(ref string) ([]*PushRecord, error) {
	var out []*PushRecord
	err := db.view(func(tx Tx) error {
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
func (db *DB) Op(id uint64) (*PendingOp, error) {
	var op *PendingOp
	err := db.view(func(tx Tx) (err error) {
		op, err = getOp(tx, id)
		return err
	})
	return op, err
}

// Ops returns the operations in the given states (none: all), newest first.
// Asking only for open states reads just the open-operations index.
func (db *DB) Ops(states ...OpState) ([]*PendingOp, error) {
	onlyOpen := len(states) > 0
	for _, s := range states {
		onlyOpen = onlyOpen && s.IsOpen()
	}
	var out []*PendingOp
	err := db.view(func(tx Tx) error {
		b := bOp
		if onlyOpen {
			b = bOpOpen
		}
		c := tx.Bucket(b).Cursor()
		for k, _ := c.Last(); k != nil; k, _ = c.Prev() {
			op, err := getOp(tx, be64(k))
			if err != nil {
				return err
			}
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

// Audit returns up to limit audit entries, newest first (0: all).

// Exchanges returns up to limit gateway log entries, newest first (0: all).
func (db *DB) Exchanges(limit int) ([]Exchange, error) {
	return newestJSON[Exchange](db, bExchange, limit, "gateway log")
}

// newestJSON reads up to limit JSON records of an append-only log bucket
// keyed by sequence, newest first (0: all).
func newestJSON[T any](db *DB, bucket []byte, limit int, what string) ([]T, error) {
	var out []T
	err := db.view(func(tx Tx) error {
		c := tx.Bucket(bucket).Cursor()
		for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
			var e T
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("%s entry %d: %w", what, be64(k), err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", what, err)
	}
	return out, nil
}

// Counts returns the status bar figures.
func (db *DB) Counts() (Counts, error) {
	var n Counts
	err := db.view(func(tx Tx) error {
		m := tx.Bucket(bMeta)
		n.Pushes = metaCount(m, kPushCount)
		n.Rejected = metaCount(m, kRejectedCount)
		n.Reservations = int(metaCount(m, kReservationCount))
		n.Transactions = int(metaCount(m, kTransactionCount))
		c := tx.Bucket(bOpOpen).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			op, err := getOp(tx, be64(k))
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
func (db *DB) giftCardByInvoice(invoice string) (found *Transaction, candidates []string, err error) {
	for _, kind := range []Kind{KindGiftCardPay, KindGiftCardRemainder} {
		q := PageQuery{Filter: invoice, State: State(kind), Limit: maxPageLimit}
		for {
			p, err := db.TransactionPage(q)
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
