package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// The bucket-backed engine: RepoTx over the layout-7 buckets (migrate.go
// names them), on bbolt (a file) and on today's kv PostgreSQL
// (pgengine.go), which imitates buckets. This file and kvrepo_logs.go are
// the only places that know which bucket holds what and how a key is
// made; the rules (ledger.go, apply.go, ops.go, …) see domain values.

// kvRepo is an Engine under the Repo contract.
type kvRepo struct {
	eng  Engine
	path string // named when a damaged page is found (damage.go)
	// shard is appended to the counters' keys in meta: on a shared
	// database every process keeps counters of its own (AddTally).
	shard  []byte
	shared bool
	lists  Lister
}

// Update does not begin when ctx is done; once begun it is not stopped
// (bbolt commits the whole transaction or nothing).
func (r *kvRepo) Update(ctx context.Context, fn func(RepoTx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer RecoverDamage(r.path, &err)
	return r.eng.Update(func(tx Tx) error { return fn(r.tx(tx)) })
}

// View does not begin when ctx is done, and its long walks (every
// summary, transaction, operation, order or audit entry) stop between
// chunks of rows when ctx is done (kvTx.stop).
func (r *kvRepo) View(ctx context.Context, fn func(RepoTx) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer RecoverDamage(r.path, &err)
	return r.eng.View(func(tx Tx) error {
		t := r.tx(tx)
		t.ctx = ctx
		return fn(t)
	})
}

// tx wraps an engine transaction (also for the engine-level code that
// runs rules inside a transaction of its own, the push inbox).
func (r *kvRepo) tx(tx Tx) *kvTx { return &kvTx{tx: tx, shard: r.shard} }

func (r *kvRepo) EncodePush(rec *PushRecord) PushEncoding {
	return domain.EncodedPush(kvlayout.EncodePushTail(rec))
}

func (r *kvRepo) Capabilities() Capabilities {
	return Capabilities{Shared: r.shared, Reruns: r.shared, Lists: r.lists, Pushes: r.pushLister()}
}

func (r *kvRepo) Close() error { return r.eng.Close() }

// view is a read transaction over the buckets, for the code that works on
// the layout itself (list indexes, copies, fills).
func (db *DB) view(fn func(tx Tx) error) (err error) {
	defer RecoverDamage(db.path, &err)
	return db.eng.View(fn)
}

// guardedUpdate is bolt's Update with a damaged page reported as an error
// (recoverDamage); bolt rolls the transaction back as the panic passes.
func (db *DB) guardedUpdate(fn func(tx Tx) error) (err error) {
	defer RecoverDamage(db.path, &err)
	return db.eng.Update(fn)
}

// kvTx is one transaction of the bucket-backed engine.
type kvTx struct {
	tx    Tx
	shard []byte
	// ctx stops a read transaction's long walks (stop); nil in a write
	// transaction, which is never stopped half-way.
	ctx context.Context
	// own holds the search text blocks and sketches this transaction
	// wrote (ownedvalues.go).
	own ownedValues
}

// stopChunk is how many rows a walk reads between looks at its context:
// a look costs about as much as decoding a row.
const stopChunk = 1024

// stop is ctx's error, looked at every stopChunk rows (n counts them).
func (k *kvTx) stop(n int) error {
	if k.ctx == nil || n%stopChunk != stopChunk-1 {
		return nil
	}
	if err := k.ctx.Err(); err != nil {
		return fmt.Errorf("stopped after %d rows: %w", n+1, err)
	}
	return nil
}

var _ RepoTx = (*kvTx)(nil)

// Index kinds in the invoice index (bInvoice: invoice 0x00 key → kind).
const (
	invReservation = 'r'
	invTransaction = 't'
	invOrphan      = 'd'
)

func invoiceKey(invoice, key string) []byte {
	b := make([]byte, 0, len(invoice)+1+len(key))
	b = append(b, invoice...)
	b = append(b, 0)
	return append(b, key...)
}

func pairKey(a, b string) []byte { return invoiceKey(a, b) }

// keysUnder returns the second halves of the pair keys a 0x00 … in
// bucket name, in key order, whose value is want (nil: any value).
func (k *kvTx) keysUnder(name []byte, a string, want []byte) []string {
	var out []string
	prefix := pairKey(a, "")
	c := k.tx.Bucket(name).Cursor()
	for key, v := c.Seek(prefix); key != nil && bytes.HasPrefix(key, prefix); key, v = c.Next() {
		if want == nil || bytes.Equal(v, want) {
			out = append(out, string(key[len(prefix):]))
		}
	}
	return out
}

func (k *kvTx) Reservation(key string) (*Reservation, error) {
	v := k.tx.Bucket(bReservation).Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	r, err := kvlayout.DecodeReservationOf(key, v)
	if err != nil {
		return nil, fmt.Errorf("reservation %s: %w", key, err)
	}
	return r, nil
}

func (k *kvTx) ReservationLedger(key string) (*Reservation, error) {
	raw := k.tx.Bucket(bReservation).Get([]byte(key))
	if raw == nil {
		return nil, nil
	}
	if !kvlayout.IsJSONRecord(raw) {
		r, err := kvlayout.DecodeReservationOf(key, raw)
		if err != nil {
			return nil, fmt.Errorf("reservation %s: %w", key, err)
		}
		return ledgerOnly(r), nil
	}
	v, err := decodeLedgerView(raw)
	if err != nil {
		return nil, fmt.Errorf("reservation %s: %w", key, err)
	}
	return v.reservation(), nil
}

func (k *kvTx) ReservationKeyByNumber(number string) (string, error) {
	if number == "" {
		return "", nil
	}
	return string(k.tx.Bucket(bResNumber).Get([]byte(number))), nil
}

func (k *kvTx) ReservationKeysByInvoice(invoice string) ([]string, error) {
	if invoice == "" {
		return nil, nil
	}
	return k.keysUnder(bInvoice, invoice, []byte{invReservation}), nil
}

func (k *kvTx) OwnerOf(key string) (string, error) {
	if v := k.tx.Bucket(bKeyOwner).Get([]byte(key)); v != nil {
		return string(v), nil
	}
	// A reservation owns its own key without an entry (putOwner).
	if k.tx.Bucket(bReservation).Get([]byte(key)) != nil {
		return key, nil
	}
	return "", nil
}

func (k *kvTx) PutReservation(r *Reservation) (bool, error) {
	key := []byte(r.Key)
	rb := k.tx.Bucket(bReservation)
	prev := rb.Get(key)
	created := prev == nil
	old, err := oldSummary(k.tx, r.Key, prev)
	if err != nil {
		return false, err
	}
	v, row, err := reservationRecord(k.tx, r, prev)
	if err != nil {
		return false, err
	}
	if err := rb.Put(key, v); err != nil {
		return false, err
	}
	if err := putSummary(k.tx, row, old, r.Summary()); err != nil {
		return false, err
	}
	if r.ReservationNumber != "" {
		// Numbers rise as the gateway hands them out: a new one goes at
		// the end, where full pages stay full.
		nb, num := k.tx.Bucket(bResNumber), []byte(r.ReservationNumber)
		if err := k.own.putChanged(nb, num, key, true); err != nil {
			return false, err
		}
	}
	if r.Invoice != "" {
		if err := k.own.putChanged(k.tx.Bucket(bInvoice), invoiceKey(r.Invoice, r.Key), []byte{invReservation}, false); err != nil {
			return false, err
		}
	}
	owners := k.tx.Bucket(bKeyOwner)
	for _, rq := range r.Requests {
		if err := k.own.putOwner(owners, []byte(rq.Key), key); err != nil {
			return false, err
		}
	}
	for _, tk := range r.Transactions {
		if err := k.own.putOwner(owners, []byte(tk), key); err != nil {
			return false, err
		}
	}
	return created, nil
}

// putOwner makes the reservation key own the data request or
// transaction key k. A reservation's own key (its Reserve request's, on
// every reservation) has no entry since layout 12: OwnerOf finds the
// reservation under it. That is a third of the entries and a random page
// write less for each new reservation. An entry another reservation left
// under the key goes, so that the key is this reservation's again.
func (o *ownedValues) putOwner(owners Bucket, k, key []byte) error {
	if !bytes.Equal(k, key) {
		return o.putChanged(owners, k, key, false)
	}
	if v := owners.Get(k); v != nil && !bytes.Equal(v, key) {
		return owners.Delete(k)
	}
	return nil
}

// putChanged puts v under k in b unless b holds it already: a reservation
// is written again on every answer and push that touches it, and a Put of
// the same value still copies its page and the pages above it in the
// commit. atEnd says the bucket's keys usually rise (fillAtEnd).
func (o *ownedValues) putChanged(b Bucket, k, v []byte, atEnd bool) error {
	if old := b.Get(k); old != nil && bytes.Equal(old, v) {
		return nil
	}
	if atEnd {
		o.fillAtEnd(b, k)
	}
	return b.Put(k, v)
}

func (k *kvTx) DeleteReservation(key string) error {
	r, err := k.Reservation(key)
	if err != nil || r == nil {
		return err
	}
	if err := unindexSummary(k.tx, key); err != nil {
		return err
	}
	for _, b := range [][]byte{bReservation, bSummary} {
		if bk := k.tx.Bucket(b); bk != nil { // bbolt keeps no summaries since layout 13
			if err := bk.Delete([]byte(key)); err != nil {
				return err
			}
		}
	}
	if r.Invoice != "" {
		if err := k.tx.Bucket(bInvoice).Delete(invoiceKey(r.Invoice, key)); err != nil {
			return err
		}
	}
	// Lookups another reservation took over stay.
	deleteIf := func(b Bucket, lookup string) error {
		if lookup != "" && string(b.Get([]byte(lookup))) == key {
			return b.Delete([]byte(lookup))
		}
		return nil
	}
	if err := deleteIf(k.tx.Bucket(bResNumber), r.ReservationNumber); err != nil {
		return err
	}
	owners := k.tx.Bucket(bKeyOwner)
	for _, rq := range r.Requests {
		if err := deleteIf(owners, rq.Key); err != nil {
			return err
		}
	}
	for _, tk := range r.Transactions {
		if err := deleteIf(owners, tk); err != nil {
			return err
		}
	}
	return nil
}

func (k *kvTx) Summaries() ([]Summary, error) {
	out := make([]Summary, 0, metaCount(k.tx.Bucket(bMeta), kReservationCount))
	rows, row := summaryRows(k.tx)
	err := rows.ForEach(func(key, v []byte) error {
		if err := k.stop(len(out)); err != nil {
			return err
		}
		s, err := row(key, v)
		if err != nil {
			return fmt.Errorf("summary %s: %w", key, err)
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

func (k *kvTx) Transaction(key string) (*Transaction, error) {
	v := k.tx.Bucket(bTransaction).Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	t, err := kvlayout.DecodeTx(v)
	if err != nil {
		return nil, fmt.Errorf("transaction %s: %w", key, err)
	}
	return t, nil
}

func (k *kvTx) PutTransaction(t *Transaction) (bool, error) {
	created, err := writeTxRecord(k.tx, t, &k.own)
	if err != nil {
		return false, err
	}
	// Only deferred-invoice transactions can belong to a reservation; gift
	// cards stay out of the invoice index (one random page write less).
	if t.Invoice != "" && (t.Kind == KindCapture || t.Kind == KindRefund) {
		ib, ik := k.tx.Bucket(bInvoice), invoiceKey(t.Invoice, t.Key)
		if ib.Get(ik) == nil {
			if err := ib.Put(ik, []byte{invTransaction}); err != nil {
				return false, err
			}
		}
	}
	return created, nil
}

func (k *kvTx) TransactionKeysByInvoice(invoice string) ([]string, error) {
	if invoice == "" {
		return nil, nil
	}
	return k.keysUnder(bInvoice, invoice, []byte{invTransaction}), nil
}

func (k *kvTx) Transactions() ([]*Transaction, error) {
	var out []*Transaction
	n := 0
	err := k.tx.Bucket(bTransaction).ForEach(func(key, v []byte) error {
		if err := k.stop(n); err != nil {
			return err
		}
		n++
		if kvlayout.IsPushIndexKey(key) {
			return nil
		}
		t, err := kvlayout.DecodeTx(v)
		if err != nil {
			return fmt.Errorf("transaction %s: %w", key, err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

func (k *kvTx) TransactionGroup(group string) ([]*Transaction, error) {
	if pt, ok := k.tx.(*pgTx); ok {
		return pt.txGroup(group)
	}
	var keys []string
	if gb := k.tx.Bucket(bTxGroup); gb != nil {
		keys = k.keysUnder(bTxGroup, group, nil)
	}
	if !slices.Contains(keys, group) {
		keys = append(keys, group)
	}
	var out []*Transaction
	for _, key := range keys {
		t, err := k.Transaction(key)
		if err != nil {
			return nil, err
		}
		if t != nil && (t.Key == group || t.Group == group) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (k *kvTx) LinkRefund(original, refund string) error {
	return k.tx.Bucket(bRelated).Put(pairKey(original, refund), nil)
}

func (k *kvTx) RefundKeys(original string) ([]string, error) {
	return k.keysUnder(bRelated, original, nil), nil
}

func (k *kvTx) Orphan(key string) (*orphanRequest, error) {
	v := k.tx.Bucket(bOrphan).Get([]byte(key))
	if v == nil {
		return nil, nil
	}
	var o orphanRequest
	if err := json.Unmarshal(v, &o); err != nil {
		return nil, fmt.Errorf("orphan request %s: %w", key, err)
	}
	return &o, nil
}

func (k *kvTx) PutOrphan(o *orphanRequest) error {
	v, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("orphan request %s: %w", o.Key, err)
	}
	if err := k.tx.Bucket(bOrphan).Put([]byte(o.Key), v); err != nil {
		return err
	}
	if o.Invoice != "" {
		return k.tx.Bucket(bInvoice).Put(invoiceKey(o.Invoice, o.Key), []byte{invOrphan})
	}
	return nil
}

func (k *kvTx) OrphanKeysByInvoice(invoice string) ([]string, error) {
	if invoice == "" {
		return nil, nil
	}
	return k.keysUnder(bInvoice, invoice, []byte{invOrphan}), nil
}

func (k *kvTx) DeleteOrphan(key string) error {
	o, err := k.Orphan(key)
	if err != nil || o == nil {
		return err
	}
	if err := k.tx.Bucket(bOrphan).Delete([]byte(key)); err != nil {
		return err
	}
	if o.Invoice != "" {
		return k.tx.Bucket(bInvoice).Delete(invoiceKey(o.Invoice, key))
	}
	return nil
}
