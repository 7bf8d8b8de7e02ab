package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"paydesk/api"
	"paydesk/store/domain"
	"paydesk/store/kvlayout"
)

// pushHash identifies a push by its content: the same push delivered twice
// (a gateway retry, a resend) has the same hash whatever its signature.
func pushHash(p *api.Push, body []byte) [32]byte {
	h := sha256.New()
	st := p.Status()
	var buf [160]byte
	b := append(buf[:0], p.Envelope()...)
	b = append(append(b, 0), p.Key()...)
	b = strconv.AppendInt(append(b, 0), int64(st.Code.Code), 10)
	b = append(append(b, 0), st.SubCodeString()...)
	b = append(append(b, 0), st.DateTime.String()...)
	h.Write(append(b, 0))
	// Most bodies are compact already; checking is a tenth of compacting.
	if !api.IsCompact(body) {
		if c, err := api.Compact(body); err == nil {
			body = c
		}
	}
	h.Write(body)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// ApplyPush stores a verified, decoded push and its effects in one
// transaction and returns after that transaction is on disk (group commit:
// concurrent calls share one fsync). It is idempotent (a push with the same
// content is stored once and changes nothing the second time) and
// order-independent (a status never moves back; a final status never
// changes). A push for a key the cache has never seen creates the record:
// a Reserve push creates a reservation shell, a Pay/Refund push a
// transaction. A push matching an open operation settles it.
//
// rec carries the raw request; ID, the decoded summary and the verdict
// fields are filled in by the store.
func (db *DB) ApplyPush(ctx context.Context, rec PushRecord, p *api.Push) (ApplyResult, error) {
	if p == nil || p.Key() == "" {
		return ApplyResult{}, fmt.Errorf("apply push: no decoded push with a key")
	}
	// Everything that does not depend on the cache is done here, on the
	// caller's goroutine, so the single writer only does what must be serial.
	pp := db.preparePush(rec, p)
	if db.opts.NoGroupCommit {
		res, err := db.applyPushDirect(ctx, pp, p)
		if err != nil {
			return ApplyResult{}, fmt.Errorf("apply push %s: %w", p.Key(), err)
		}
		return res, nil
	}
	var res ApplyResult
	err := db.batch.do(ctx, func(tx RepoTx, c *Change) error {
		res = ApplyResult{} // the job may run twice
		return db.applyPush(tx, pp, p, &res, c)
	})
	if err != nil {
		return ApplyResult{}, fmt.Errorf("apply push %s: %w", p.Key(), err)
	}
	return res, nil
}

// applyPushDirect is ApplyPush with a transaction (and fsync) of its own:
// the naive way, kept for the benchmark that compares the two.
func (db *DB) applyPushDirect(ctx context.Context, pp *preparedPush, p *api.Push) (ApplyResult, error) {
	var res ApplyResult
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		res = ApplyResult{}
		return db.applyPush(tx, pp, p, &res, c)
	})
	return res, err
}

// preparedPush is a push record with its summary, hash and what the
// engine prepares of its stored form (Repo.EncodePush), which does not
// depend on the cache.
type preparedPush struct {
	rec PushRecord
	enc PushEncoding
	// scratch is the record a run of the job stores: a copy of rec made
	// afresh each run (the job may run twice), inside this allocation
	// rather than one of its own per push.
	scratch PushRecord
}

// stored is the push in the binary codec whatever the engine, as an inbox
// keeps it (PostgreSQL's row, a file's frame): the kv engine has made its
// tail already (EncodePush).
func (pp *preparedPush) stored() []byte {
	tail := pp.enc.Bytes()
	if tail == nil {
		tail = kvlayout.EncodePushTail(&pp.rec)
	}
	return kvlayout.EncodePushHead(&pp.rec, tail)
}

func (db *DB) preparePush(rec PushRecord, p *api.Push) *preparedPush {
	rec.Describe(p)
	if rec.ReceivedAt.IsZero() {
		rec.ReceivedAt = db.now()
	}
	if rec.Signature == "" {
		rec.Signature = SignatureValid
	}
	rec.Hash = pushHash(p, rec.Body)
	pp := &preparedPush{rec: rec}
	pp.enc = db.repo.EncodePush(&pp.rec)
	return pp
}

func (db *DB) applyPush(tx RepoTx, pp *preparedPush, p *api.Push, res *ApplyResult, c *Change) error {
	rec := &pp.scratch
	*rec = pp.rec // a copy: the job may run twice
	id, err := tx.PushDuplicate(rec.Key, rec.Hash)
	if err != nil {
		return err
	}
	if id != 0 {
		// A repeat is a receipt of the push stored first: recorded, bounded
		// (receipts.go), and nothing else changes.
		r := PushReceipt{At: rec.ReceivedAt, RemoteAddr: rec.RemoteAddr, Signature: rec.Signature}
		if err := tx.AddPushReceipt(PushRef{ID: id, Key: rec.Key, Hash: rec.Hash}, r, MaxPushReceipts); err != nil {
			return err
		}
		c.addReceipt(rec.Key)
		res.ID = id
		res.Duplicate = true
		res.Ignored = "duplicate of push " + strconv.FormatUint(res.ID, 10)
		return nil
	}

	op, err := matchOp(tx, p)
	if err != nil {
		return err
	}
	var eff effect
	if p.DataRequest != nil {
		eff, err = db.applyDataRequestPush(tx, p, op, c)
	} else {
		eff, err = db.applyTransactionPush(tx, p, op, c)
	}
	if err != nil {
		return err
	}
	if op != nil {
		if err := db.settleOp(tx, op, p.Key(), domain.StatusOf(p.Status()), eff.resKey, c); err != nil {
			return err
		}
		res.Settled = append(res.Settled, op.ID)
	}

	rec.Applied, rec.Ignored, rec.ReservationKey = eff.applied, eff.ignored, eff.resKey
	if id, err = tx.AppendPush(rec, pp.enc); err != nil {
		return err
	}
	if err := db.enqueueDeliveries(tx, rec, id); err != nil {
		return err
	}
	c.Pushes++
	res.ID, res.Applied, res.Ignored, res.ReservationKey = id, eff.applied, eff.ignored, eff.resKey
	return nil
}

type effect struct {
	applied bool
	ignored string
	resKey  string
}

const (
	ignoredFinal = "a final status is already stored"
	ignoredOlder = "older than the stored status"
	ignoredSame  = Confirms
)

// whyNot says why incoming does not replace stored.
func whyNot(incoming, stored Status) string {
	switch {
	case stored.IsFinal() && incoming.Code == stored.Code && incoming.SubCode == stored.SubCode:
		// The response already booked it; the push's DateTime may differ by a
		// second and says nothing new.
		return ignoredSame
	case stored.IsFinal():
		return ignoredFinal
	case incoming.Code == stored.Code && incoming.SubCode == stored.SubCode && incoming.Time.Equal(stored.Time):
		return ignoredSame
	}
	return ignoredOlder
}

func (db *DB) applyDataRequestPush(tx RepoTx, p *api.Push, op *PendingOp, c *Change) (effect, error) {
	d := p.DataRequest
	st := domain.StatusOf(d.Status)
	var eff effect
	if strings.EqualFold(d.ActionCode, api.ActionReserve) {
		r, err := tx.Reservation(d.Key)
		if err != nil {
			return eff, err
		}
		created := false
		if r == nil {
			created = true
			r = &Reservation{Key: d.Key, Invoice: d.Invoice, Currency: d.Currency, IsTest: d.IsTest,
				CustomerName: deref(d.CustomerName), Created: st.Time}
			if op != nil && op.Request != nil && strings.EqualFold(op.Action, api.ActionReserve) {
				fillReserve(r, op)
			}
		}
		changed := created
		if n := p.Param(api.PReservationNumber); n != "" && r.ReservationNumber == "" {
			r.ReservationNumber, changed = n, true
		}
		// The reservation date is the earliest status seen for the Reserve,
		// whatever order the pushes came in.
		if !st.Time.IsZero() && (r.Created.IsZero() || st.Time.Before(r.Created)) {
			r.Created, changed = st.Time, true
		}
		if st.Supersedes(r.Status) {
			r.Status, changed, eff.applied = st, true, true
		} else {
			eff.ignored = whyNot(st, r.Status)
		}
		setRequest(r, Request{Key: d.Key, Action: api.ActionReserve, Status: r.Status})
		eff.resKey = r.Key
		eff.applied = eff.applied || created
		if !changed {
			return eff, nil
		}
		if created {
			if err := joinOrder(tx, r, c); err != nil {
				return eff, err
			}
			if err := db.adoptOrphans(tx, r); err != nil {
				return eff, err
			}
		}
		return eff, db.putReservation(tx, r, c)
	}

	// CancelReservation, UpdateReservation (and anything else): find the
	// reservation it belongs to.
	r, err := ownerOf(tx, d.Key)
	if err != nil {
		return eff, err
	}
	if r == nil && op != nil {
		if r, err = findReservation(tx, op.ReservationKey); err == nil && r == nil {
			r, err = findReservation(tx, op.Target)
		}
	}
	if r == nil && err == nil {
		r, err = findReservation(tx, p.Param(api.PReservationNumber))
	}
	if r == nil && err == nil {
		r, err = reservationByInvoice(tx, d.Invoice)
	}
	if err != nil {
		return eff, err
	}
	rq := Request{Key: d.Key, Action: d.ActionCode}
	if op != nil {
		rq.OpID = op.ID
		rq.Update = updateFromOp(op)
	}
	if r == nil {
		return db.applyOrphanPush(tx, d, rq, st)
	}
	eff.resKey = r.Key
	if i := requestIndex(r, d.Key); i >= 0 {
		rq = mergeRequest(r.Requests[i], rq)
	}
	if st.Supersedes(rq.Status) {
		rq.Status, eff.applied = st, true
	} else {
		eff.ignored = whyNot(st, rq.Status)
		if requestIndex(r, d.Key) >= 0 {
			return eff, nil
		}
	}
	setRequest(r, rq)
	return eff, db.putReservation(tx, r, c)
}

func (db *DB) applyOrphanPush(tx RepoTx, d *api.DataRequestPush, rq Request, st Status) (effect, error) {
	var eff effect
	o, err := tx.Orphan(d.Key)
	if err != nil {
		return eff, err
	}
	if o != nil {
		o.Request = mergeRequest(o.Request, rq)
	} else {
		o = &orphanRequest{Request: rq, Invoice: d.Invoice}
	}
	if st.Supersedes(o.Status) {
		o.Status, eff.applied = st, true
	} else {
		eff.ignored = whyNot(st, o.Status)
		return eff, nil
	}
	return eff, tx.PutOrphan(o)
}

// adoptOrphans links data requests and captures that arrived before the
// reservation they belong to (same invoice, not linked elsewhere).
func (db *DB) adoptOrphans(tx RepoTx, r *Reservation) error {
	if r.Invoice == "" {
		return nil
	}
	orphans, err := tx.OrphanKeysByInvoice(r.Invoice)
	if err != nil {
		return err
	}
	for _, k := range orphans {
		o, err := tx.Orphan(k)
		if err != nil {
			return err
		}
		if o == nil {
			continue
		}
		if i := requestIndex(r, o.Key); i >= 0 {
			o.Request = mergeRequest(r.Requests[i], o.Request)
		}
		setRequest(r, o.Request)
		if err := tx.DeleteOrphan(k); err != nil {
			return err
		}
	}
	txKeys, err := tx.TransactionKeysByInvoice(r.Invoice)
	if err != nil {
		return err
	}
	for _, k := range txKeys {
		t, err := tx.Transaction(k)
		if err != nil {
			return err
		}
		if t == nil || t.ReservationKey != "" || (t.Kind != KindCapture && t.Kind != KindRefund) {
			continue
		}
		if t.ReservationNumber != "" && r.ReservationNumber != "" && t.ReservationNumber != r.ReservationNumber {
			continue
		}
		t.ReservationKey = r.Key
		if _, err := tx.PutTransaction(t); err != nil {
			return err
		}
		if !slices.Contains(r.Transactions, t.Key) {
			r.Transactions = append(r.Transactions, t.Key)
		}
	}
	return nil
}

func requestIndex(r *Reservation, key string) int {
	for i, rq := range r.Requests {
		if rq.Key == key {
			return i
		}
	}
	return -1
}

// setRequest adds rq or replaces the request with its key.
func setRequest(r *Reservation, rq Request) {
	if i := requestIndex(r, rq.Key); i >= 0 {
		r.Requests[i] = rq
		return
	}
	r.Requests = append(r.Requests, rq)
}

// mergeRequest keeps what stored knows and adds what extra knows.
func mergeRequest(stored, extra Request) Request {
	if stored.Action == "" {
		stored.Action = extra.Action
	}
	if stored.Update == nil {
		stored.Update = extra.Update
	}
	if stored.OpID == 0 {
		stored.OpID = extra.OpID
	}
	if extra.Status.Supersedes(stored.Status) {
		stored.Status = extra.Status
	}
	return stored
}

func (db *DB) applyTransactionPush(tx RepoTx, p *api.Push, op *PendingOp, c *Change) (effect, error) {
	tp := p.Transaction
	st := domain.StatusOf(tp.Status)
	var eff effect
	t, err := tx.Transaction(tp.Key)
	if err != nil {
		return eff, err
	}
	created := t == nil
	if created {
		t = &Transaction{Key: tp.Key, Created: st.Time}
	}
	changed := created
	if op != nil && t.OpID == 0 {
		fillFromOp(t, op)
		changed = true
	}
	if fillFromPush(t, tp, p) {
		changed = true
	}
	if st.Supersedes(t.Status) {
		t.Status, eff.applied, changed = st, true, true
	} else {
		eff.ignored = whyNot(st, t.Status)
	}
	if t.ReservationKey == "" && t.Kind == KindCapture {
		r, err := findReservation(tx, t.ReservationNumber)
		if err == nil && r == nil {
			r, err = reservationByInvoice(tx, t.Invoice)
		}
		if err != nil {
			return eff, err
		}
		if r != nil {
			t.ReservationKey, changed = r.Key, true
		}
	}
	eff.applied = eff.applied || created
	if changed {
		if err := db.putTx(tx, t, c); err != nil {
			return eff, err
		}
	}
	if t.ReservationKey == "" && t.Kind == KindRefund && t.Original != "" {
		if o, err := tx.Transaction(t.Original); err == nil && o != nil {
			t.ReservationKey = o.ReservationKey
		}
	}
	eff.resKey = t.ReservationKey
	return eff, nil
}

// fillFromPush completes t with what the push says and t does not know yet.
func fillFromPush(t *Transaction, tp *api.TransactionPush, p *api.Push) bool {
	changed := false
	set := func(dst *string, v string) {
		if *dst == "" && v != "" {
			*dst, changed = v, true
		}
	}
	set(&t.TransactionType, tp.TransactionType)
	if t.Kind == "" || t.Kind == KindUnknown {
		if k := KindOf(tp.TransactionType); k != t.Kind {
			t.Kind, changed = k, true
		}
	}
	set(&t.ServiceCode, tp.ServiceCode)
	set(&t.Invoice, tp.Invoice)
	set(&t.Currency, tp.Currency)
	set(&t.InvoiceNumber, p.Param(api.PInvoiceNumber))
	set(&t.ReservationNumber, p.Param(api.PReservationNumber))
	set(&t.PaymentKey, deref(tp.PaymentKey))
	set(&t.CustomerName, deref(tp.CustomerName))
	set(&t.Original, p.Related(api.RelationRefund))
	set(&t.Group, p.Related(api.RelationPartialPayment))
	set(&t.Order, deref(tp.Order))
	if len(t.Additional) == 0 && len(tp.AdditionalParameters.Items()) > 0 {
		t.Additional, changed = tp.AdditionalParameters.Items(), true
	}
	if len(t.Custom) == 0 && len(tp.CustomParameters.Items()) > 0 {
		t.Custom, changed = tp.CustomParameters.Items(), true
	}
	if t.Amount.IsZero() {
		if a := p.Amount(); a != nil && !a.IsZero() {
			t.Amount, changed = a.Decimal, true
		}
	}
	if len(t.RelatedTransactions) == 0 && len(tp.RelatedTransactions) > 0 {
		t.RelatedTransactions, changed = tp.RelatedTransactions, true
	}
	if !t.IsTest && tp.IsTest {
		t.IsTest, changed = true, true
	}
	if t.Provider == "" && t.ServiceCode != "" && t.Kind != KindCapture && t.Kind != KindRefund {
		if pr := providerOf(t.ServiceCode); pr != "" {
			t.Provider, changed = pr, true
		}
	}
	return changed
}

// providerOf guesses the voucher provider from a service code (the
// sandbox's codes); "" when unknown.
func providerOf(code string) api.Provider {
	switch strings.ToLower(code) {
	case "vouchera":
		return api.ProviderA
	case "voucherb":
		return api.ProviderB
	case "voucherc":
		return api.ProviderC
	}
	if api.IsCustomCardCode(code) {
		return api.ProviderCustom
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nowOr(t time.Time, now func() time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t
}
