package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"paydesk/api"
	"paydesk/store/domain"
)

// pinParams are masked before a request is stored: a card PIN is as good
// as the card.
var pinParams = []string{api.PVoucherBPIN, api.PVoucherCValidationCode, api.PPin}

const masked = "****"

// maskRequest returns a copy of req with card PINs masked.
func maskRequest(req *api.Request) *api.Request {
	if req == nil {
		return nil
	}
	cp := *req
	cp.Services.ServiceList = make([]api.Service, len(req.Services.ServiceList))
	for i, s := range req.Services.ServiceList {
		s.Parameters = slices.Clone(s.Parameters)
		for j, p := range s.Parameters {
			for _, n := range pinParams {
				if strings.EqualFold(p.Name, n) && p.Value != "" {
					s.Parameters[j].Value = masked
				}
			}
		}
		cp.Services.ServiceList[i] = s
	}
	return &cp
}

// maskBody masks card PINs in a JSON request body for the gateway log; a
// body that does not decode is kept as it is.
func maskBody(body []byte) []byte {
	if !bytesContainsFold(body, pinParams) {
		return body
	}
	req, err := api.DecodeRequest(body)
	if err != nil {
		return body
	}
	out, err := api.MarshalCanonical(maskRequest(req))
	if err != nil {
		return body
	}
	return out
}

func bytesContainsFold(b []byte, names []string) bool {
	s := strings.ToLower(string(b))
	for _, n := range names {
		if strings.Contains(s, strings.ToLower(n)) {
			return true
		}
	}
	return false
}

// getOp returns operation id; none is ErrNotFound.
func getOp(tx RepoTx, id uint64) (*PendingOp, error) {
	op, err := tx.Op(id)
	if err == nil && op == nil {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("operation %d: %w", id, err)
	}
	return op, nil
}

// putOp writes op and marks its reservation while its outcome is unknown.
func (db *DB) putOp(tx RepoTx, op *PendingOp, c *Change) error {
	if err := tx.PutOp(op); err != nil {
		return err
	}
	if c != nil {
		c.Ops = true
	}
	if op.ReservationKey == "" {
		return nil
	}
	r, err := tx.Reservation(op.ReservationKey)
	if err != nil || r == nil {
		return err
	}
	has := slices.Contains(r.UnknownOps, op.ID)
	switch {
	case op.State == OpOutcomeUnknown && !has:
		r.UnknownOps = append(r.UnknownOps, op.ID)
	case op.State != OpOutcomeUnknown && has:
		r.UnknownOps = slices.DeleteFunc(r.UnknownOps, func(id uint64) bool { return id == op.ID })
	default:
		return nil
	}
	return db.putReservation(tx, r, c)
}

// BeginOp writes op to the journal before its request is sent and returns
// its ID. Action, Service, Invoice, Currency, Amount and Target are filled
// from op.Request when empty; card PINs in the request are masked.
func (db *DB) BeginOp(ctx context.Context, op PendingOp) (uint64, error) {
	op.Request = maskRequest(op.Request)
	if req := op.Request; req != nil {
		svc := req.Service()
		def := func(dst *string, v string) {
			if *dst == "" {
				*dst = v
			}
		}
		def(&op.Action, svc.Action)
		def(&op.Service, svc.Name)
		def(&op.Invoice, req.Invoice)
		def(&op.Currency, req.Currency)
		if op.Amount.IsZero() {
			if req.AmountCredit != nil {
				op.Amount = req.AmountCredit.Decimal
			} else {
				op.Amount = req.AmountDebit.Dec()
			}
		}
		if n, ok := req.Param(api.PReservationNumber); ok {
			def(&op.Target, n)
		}
		def(&op.Target, req.OriginalTransactionKey)
		def(&op.Target, req.Invoice)
	}
	op.State = OpPending
	if db.lease != nil {
		op.Lease = db.lease.id
	}
	op.Created = nowOr(op.Created, db.now)
	op.Updated = op.Created
	var id uint64
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		if op.ReservationKey == "" && op.Target != "" {
			r, err := findReservation(tx, op.Target)
			if err != nil {
				return err
			}
			if r == nil {
				if t, err := tx.Transaction(op.Target); err == nil && t != nil {
					op.ReservationKey = t.ReservationKey
				}
			} else {
				op.ReservationKey = r.Key
			}
		}
		// Inside the transaction, so it holds across processes (on
		// PostgreSQL the transaction is serializable): one open operation
		// per action and target, and what the ledger still allows.
		if err := checkOpenTwin(tx, &op); err != nil {
			return err
		}
		if err := checkLedger(tx, &op); err != nil {
			return err
		}
		n, err := tx.NextOpID()
		if err != nil {
			return err
		}
		op.ID, id = n, n
		if op.Audit != nil {
			e := *op.Audit
			e.Time, e.OpID = nowOr(e.Time, db.now), n
			if e.Result == "" {
				e.Result = AuditPending
			}
			if op.AuditID, err = appendAudit(tx, e, c); err != nil {
				return err
			}
		}
		return db.putOp(tx, &op, c)
	})
	if err != nil {
		return 0, fmt.Errorf("journal %s: %w", op.Action, err)
	}
	return id, nil
}

// opStateFor is the state an answer with status st leaves an operation in.
func opStateFor(st Status) OpState {
	switch {
	case st.IsSuccess():
		return OpSettled
	case st.IsFinal():
		return OpFailed
	default:
		return OpSent
	}
}

// settleOp records the key and status a push brought for op.
func (db *DB) settleOp(tx RepoTx, op *PendingOp, key string, st Status, resKey string, c *Change) error {
	if op.ResultKey == "" {
		op.ResultKey = key
	}
	if st.Supersedes(op.ResultStatus) {
		op.ResultStatus = st
	}
	if op.ReservationKey == "" {
		op.ReservationKey = resKey
	}
	op.State = opStateFor(op.ResultStatus)
	op.Updated = db.now()
	if op.AuditID != 0 && op.State != OpSent {
		if err := completeAudit(tx, op.AuditID, "settled by push: "+op.ResultStatus.Text()+" key "+op.ResultKey, true, c); err != nil {
			return err
		}
	}
	return db.putOp(tx, op, c)
}

// AuditPending is the result of an audit entry whose operation has been
// journaled and is being sent.
const AuditPending = "sent, outcome not yet known"

// CompleteAudit sets the result of operation opID's audit entry (written
// by BeginOp) once the operation settled: the one change an audit entry
// ever sees. An operation journaled without one gets a new entry.
func (db *DB) CompleteAudit(ctx context.Context, opID uint64, result string) error {
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		op, err := getOp(tx, opID)
		if err != nil {
			return err
		}
		if op.AuditID != 0 {
			return completeAudit(tx, op.AuditID, result, false, c)
		}
		_, err = appendAudit(tx, AuditEntry{Time: db.now(), Operator: op.Operator, Action: op.Action, Target: op.Target,
			Amount: op.Amount, Currency: op.Currency, Result: result, OpID: opID}, c)
		return err
	})
	if err != nil {
		return fmt.Errorf("audit operation %d: %w", opID, err)
	}
	return nil
}

// completeAudit records how the operation of audit entry id ended: a new
// entry that completes it (the log takes entries, it never edits one).
// With then set, the result known so far (an unknown outcome, a pending
// answer) stays in front, so the entry tells the whole story.
func completeAudit(tx RepoTx, id uint64, result string, then bool, c *Change) error {
	e, err := tx.AuditEntry(id)
	if err == nil && e == nil {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("audit entry %d: %w", id, err)
	}
	prev, err := latestAuditResult(tx, id, e.Result)
	if err != nil {
		return err
	}
	if then && prev != "" && prev != AuditPending {
		result = prev + "; then " + result
	}
	_, err = appendAudit(tx, AuditEntry{Time: e.Time, Operator: e.Operator, Action: e.Action, Target: e.Target, Amount: e.Amount,
		Currency: e.Currency, Result: result, Reason: e.Reason, OpID: e.OpID, Completes: id}, c)
	return err
}

// latestAuditResult is entry id's result as its newest completion left it
// (fallback when none): the log is read backwards from its end, where the
// completion of an operation usually is, for a bounded number of entries.
func latestAuditResult(tx RepoTx, id uint64, fallback string) (string, error) {
	out, n := fallback, 0
	err := tx.WalkAudit(true, func(at uint64, e *AuditEntry, _ []byte, err error) bool {
		if at <= id || n >= 10_000 {
			return false
		}
		n++
		if err == nil && e.Completes == id {
			out = e.Result
			return false
		}
		return true
	})
	return out, err
}

// ApplyResponse records the gateway's answer to operation id: the domain
// effects (a Reserve response creates the reservation with the sent lines, a
// capture response records the capture with its lines, …) and the operation's
// new state (settled, failed, or sent while the status is pending), in one
// transaction. A response with status 491 or without a key created nothing
// at the gateway: the operation fails and the ledger is untouched.
func (db *DB) ApplyResponse(ctx context.Context, id uint64, resp *api.Response) (*PendingOp, error) {
	if resp == nil {
		return nil, fmt.Errorf("operation %d: no response", id)
	}
	var out *PendingOp
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		op, err := getOp(tx, id)
		if err != nil {
			return err
		}
		st := domain.StatusOf(resp.Status)
		if resp.Key != "" && op.ResultKey == "" {
			op.ResultKey = resp.Key
		}
		if st.Supersedes(op.ResultStatus) {
			op.ResultStatus = st
		}
		if resp.Key == "" || st.Code == api.StatusValidationFailure {
			op.State, op.Error = OpFailed, api.StatusText(st.Code)
			op.Updated = db.now()
			out = op
			return db.putOp(tx, op, c)
		}
		if err := db.responseEffects(tx, op, resp, st, c); err != nil {
			return err
		}
		if op.State != OpResolved {
			op.State = opStateFor(op.ResultStatus)
		}
		if op.State != OpFailed {
			op.Error = ""
		}
		op.Updated = db.now()
		out = op
		return db.putOp(tx, op, c)
	})
	if err != nil {
		return nil, fmt.Errorf("operation %d: %w", id, err)
	}
	return out, nil
}

func (db *DB) responseEffects(tx RepoTx, op *PendingOp, resp *api.Response, st Status, c *Change) error {
	switch {
	case strings.EqualFold(op.Action, api.ActionReserve):
		r, err := tx.Reservation(resp.Key)
		if err != nil {
			return err
		}
		created := r == nil
		if created {
			r = &Reservation{Key: resp.Key}
		}
		fillReserve(r, op)
		r.IsTest = r.IsTest || resp.IsTest
		if resp.RequiredAction != nil && resp.RequiredAction.RedirectURL != "" {
			r.RedirectURL = resp.RequiredAction.RedirectURL
		}
		if st.Supersedes(r.Status) {
			r.Status = st
		}
		if r.Created.IsZero() {
			r.Created = nowOr(st.Time, db.now)
		}
		if n := resp.Param(api.PReservationNumber); n != "" && r.ReservationNumber == "" {
			r.ReservationNumber = n
		}
		rq := Request{Key: resp.Key, Action: api.ActionReserve, Status: r.Status, OpID: op.ID}
		if i := requestIndex(r, resp.Key); i >= 0 {
			rq = mergeRequest(r.Requests[i], rq)
		}
		setRequest(r, rq)
		op.ReservationKey = r.Key
		if created {
			if err := db.adoptOrphans(tx, r); err != nil {
				return err
			}
		}
		return db.putReservation(tx, r, c)

	case strings.EqualFold(op.Action, api.ActionCancelReservation), strings.EqualFold(op.Action, api.ActionUpdateReservation):
		r, err := findReservation(tx, op.ReservationKey)
		if err == nil && r == nil {
			r, err = findReservation(tx, op.Target)
		}
		if err == nil && r == nil {
			r, err = ownerOf(tx, resp.Key)
		}
		if err != nil {
			return err
		}
		rq := Request{Key: resp.Key, Action: op.Action, Status: st, OpID: op.ID, Update: updateFromOp(op)}
		if r == nil {
			d := &api.DataRequestPush{Key: resp.Key, Invoice: op.Invoice}
			_, err := db.applyOrphanPush(tx, d, rq, st)
			return err
		}
		op.ReservationKey = r.Key
		if i := requestIndex(r, resp.Key); i >= 0 {
			rq = mergeRequest(r.Requests[i], rq)
		}
		setRequest(r, rq)
		return db.putReservation(tx, r, c)
	}

	// Pay, PayRemainder, Refund of either service.
	t, err := tx.Transaction(resp.Key)
	if err != nil {
		return err
	}
	if t == nil {
		t = &Transaction{Key: resp.Key, Created: nowOr(st.Time, db.now)}
	}
	fillFromOp(t, op)
	set := func(dst *string, v string) {
		if *dst == "" && v != "" {
			*dst = v
		}
	}
	set(&t.TransactionType, resp.Type())
	set(&t.ServiceCode, resp.ServiceCode)
	set(&t.Invoice, resp.Invoice)
	set(&t.Currency, resp.Currency)
	set(&t.InvoiceNumber, resp.Param(api.PInvoiceNumber))
	set(&t.PaymentKey, deref(resp.PaymentKey))
	set(&t.Original, resp.Related(api.RelationRefund))
	set(&t.Group, resp.Related(api.RelationPartialPayment))
	if ra := resp.RequiredAction; ra != nil && ra.PayRemainderDetails != nil {
		set(&t.Group, ra.PayRemainderDetails.GroupTransaction)
		t.RemainderAmount = ra.PayRemainderDetails.RemainderAmount.Dec()
	}
	if a := resp.AmountCredit; a != nil && t.Kind.IsRefund() {
		t.Amount = a.Decimal
	} else if a := resp.AmountDebit; a != nil && !t.Kind.IsRefund() {
		t.Amount = a.Decimal
	}
	if len(resp.RelatedTransactions) > 0 && len(t.RelatedTransactions) == 0 {
		t.RelatedTransactions = resp.RelatedTransactions
	}
	t.IsTest = t.IsTest || resp.IsTest
	if st.Supersedes(t.Status) {
		t.Status = st
	}
	if t.ReservationKey != "" {
		op.ReservationKey = t.ReservationKey
	}
	return db.putTx(tx, t, c)
}

// fillReserve sets what the Reserve sent (lines, addresses, invoice).
func fillReserve(r *Reservation, op *PendingOp) {
	if op.Request == nil {
		return
	}
	parsed, _ := api.ParseOperation(op.Request, "", api.Rules{})
	res, ok := parsed.(api.Reserve)
	if !ok {
		return
	}
	r.Original = Update{Articles: res.Articles, Billing: res.Billing, Shipping: res.Shipping}
	r.LinesKnown = true
	if r.Invoice == "" {
		r.Invoice = res.Invoice
	}
	if r.Currency == "" {
		r.Currency = res.Currency
	}
}

// updateFromOp is what an UpdateReservation operation asked for, nil for
// any other operation.
func updateFromOp(op *PendingOp) *Update {
	if op == nil || op.Request == nil || !strings.EqualFold(op.Action, api.ActionUpdateReservation) {
		return nil
	}
	parsed, _ := api.ParseOperation(op.Request, "", api.Rules{})
	u, ok := parsed.(api.UpdateReservation)
	if !ok {
		return nil
	}
	return &Update{Articles: u.Articles, Billing: u.Billing, Shipping: u.Shipping}
}

// opKind is the transaction kind an operation creates, "" for data requests.
func opKind(op *PendingOp) Kind {
	deferred := strings.EqualFold(op.Service, api.ServiceDeferred)
	switch {
	case strings.EqualFold(op.Action, api.ActionPay) && deferred:
		return KindCapture
	case strings.EqualFold(op.Action, api.ActionRefund) && deferred:
		return KindRefund
	case strings.EqualFold(op.Action, api.ActionPay):
		return KindGiftCardPay
	case strings.EqualFold(op.Action, api.ActionPayRemainder):
		return KindGiftCardRemainder
	case strings.EqualFold(op.Action, api.ActionRefund):
		return KindGiftCardRefund
	}
	return ""
}

// fillFromOp sets what only the sent request knows: the captured lines, the
// reservation, the card's provider and contact details.
func fillFromOp(t *Transaction, op *PendingOp) {
	t.OpID = op.ID
	if len(t.Parcels) == 0 && len(op.Parcels) > 0 {
		t.Parcels = op.Parcels
	}
	if k := opKind(op); k != "" {
		t.Kind = k
	}
	if t.ServiceCode == "" {
		t.ServiceCode = op.Service
	}
	if t.Invoice == "" {
		t.Invoice = op.Invoice
	}
	if t.Currency == "" {
		t.Currency = op.Currency
	}
	if t.Amount.IsZero() {
		t.Amount = op.Amount
	}
	if op.ReservationKey != "" && t.ReservationKey == "" && (t.Kind == KindCapture || t.Kind == KindRefund) {
		t.ReservationKey = op.ReservationKey
	}
	req := op.Request
	if req == nil {
		return
	}
	switch t.Kind {
	case KindCapture:
		parsed, _ := api.ParseOperation(req, "", api.Rules{})
		if cp, ok := parsed.(api.Capture); ok {
			t.ReservationNumber = cp.ReservationNumber
			t.Lines = cp.Lines
			t.FullCapture = len(cp.Lines) == 0
		}
	case KindRefund, KindGiftCardRefund:
		if t.Original == "" {
			t.Original = req.OriginalTransactionKey
		}
		if len(t.Lines) == 0 && len(op.Lines) > 0 {
			t.Lines = op.Lines
		}
	case KindGiftCardPay, KindGiftCardRemainder:
		svc := req.Service()
		if card, ok := api.CardFromParams(svc.Parameters); ok {
			t.Provider = card.Provider
		} else if t.Provider == "" {
			t.Provider = providerOf(svc.Name)
		}
		ln, _ := req.Param(api.PLastName)
		em, _ := req.Param(api.PEmail)
		t.HasContact = ln != "" && em != ""
		if t.Kind == KindGiftCardRemainder && t.Group == "" {
			t.Group = req.OriginalTransactionKey
		}
	}
}

// matchOp finds the open operation a push answers: the one whose result key
// is the push's key, else the oldest one without a key yet that sent the
// same action for the same invoice (and amount, for payments).
func matchOp(tx RepoTx, p *api.Push) (*PendingOp, error) {
	open, err := tx.OpenOps()
	if err != nil {
		return nil, err
	}
	var candidate *PendingOp
	key, invoice := p.Key(), p.Invoice()
	for _, o := range open {
		// The result key and invoice spare decoding the operations a push
		// cannot be about.
		if o.ResultKey != key && (o.ResultKey != "" || candidate != nil || o.Invoice != invoice) {
			continue
		}
		op, err := getOp(tx, o.ID)
		if err != nil {
			return nil, err
		}
		if op.ResultKey == p.Key() {
			return op, nil
		}
		if candidate == nil && op.ResultKey == "" && opAnswers(op, p) {
			candidate = op
		}
	}
	return candidate, nil
}

func opAnswers(op *PendingOp, p *api.Push) bool {
	if op.Invoice != p.Invoice() || !strings.EqualFold(op.Service, p.ServiceCode()) {
		return false
	}
	if p.DataRequest != nil {
		return strings.EqualFold(op.Action, p.DataRequest.ActionCode)
	}
	k := opKind(op)
	pk := KindOf(p.Transaction.TransactionType)
	if k == KindGiftCardRemainder {
		k = KindGiftCardPay
	}
	if k != pk {
		return false
	}
	if a := p.Amount(); a != nil && !op.Amount.IsZero() && !a.Decimal.Equal(op.Amount) {
		return false
	}
	if k.IsRefund() && op.Target != "" {
		if orig := p.Related(api.RelationRefund); orig != "" && orig != op.Target {
			return false
		}
	}
	return true
}

// FailOp marks operation id failed without a response: the request was not
// sent (api.NotSentError) or the gateway refused it (HTTP 400/500).
func (db *DB) FailOp(ctx context.Context, id uint64, reason string) error {
	return db.setOpState(ctx, id, OpFailed, reason, "")
}

// MarkOutcomeUnknown marks operation id "outcome unknown": the request may
// have reached the gateway but no trustworthy answer came back. It stays
// visible until a matching push settles it or the operator resolves it; it is
// never retried.
func (db *DB) MarkOutcomeUnknown(ctx context.Context, id uint64, reason string) error {
	return db.setOpState(ctx, id, OpOutcomeUnknown, reason, "")
}

// ResolveOp closes an open operation by hand with the operator's note.
func (db *DB) ResolveOp(ctx context.Context, id uint64, note string) error {
	return db.setOpState(ctx, id, OpResolved, "", note)
}

func (db *DB) setOpState(ctx context.Context, id uint64, state OpState, reason, note string) error {
	err := db.update(ctx, func(tx RepoTx, c *Change) error {
		op, err := getOp(tx, id)
		if err != nil {
			return err
		}
		if !op.State.IsOpen() {
			if op.State == state {
				return nil
			}
			return fmt.Errorf("it is already %s", op.State)
		}
		if state == OpOutcomeUnknown && op.State == OpSent {
			return nil // the gateway answered; the push will finish it
		}
		op.State = state
		if reason != "" {
			op.Error = reason
		}
		if note != "" {
			op.Note = note
		}
		op.Updated = db.now()
		return db.putOp(tx, op, c)
	})
	if err != nil {
		return fmt.Errorf("operation %d: mark %s: %w", id, state, err)
	}
	return nil
}

// ErrTargetBusy: the same operation on the same target is already open
// (in flight, waiting for a push, or its outcome unknown), possibly started
// by another operator on another machine.
var ErrTargetBusy = errors.New("the same operation is already open for this target")

// ErrLedgerChanged: the reservation or payment changed since the operation
// was planned (another operator captured or refunded meanwhile).
var ErrLedgerChanged = errors.New("changed since it was planned")

// checkOpenTwin refuses an operation whose twin (same action and target) is
// open in the journal, naming who started it.
func checkOpenTwin(tx RepoTx, op *PendingOp) error {
	if op.Target == "" {
		return nil
	}
	open, err := tx.OpenOps()
	if err != nil {
		return err
	}
	for _, oo := range open {
		o, err := getOp(tx, oo.ID)
		if err != nil {
			return err
		}
		if !o.State.IsOpen() || o.Action != op.Action || o.Target != op.Target {
			continue
		}
		return &BusyError{Op: o}
	}
	return nil
}

// BusyError is ErrTargetBusy with the operation that holds the target.
type BusyError struct{ Op *PendingOp }

func (e *BusyError) Error() string        { return ErrTargetBusy.Error() + ": " + e.Op.Holder() }
func (e *BusyError) Is(target error) bool { return target == ErrTargetBusy }

// checkLedger checks a capture or a refund against the ledger as it is in
// this transaction: a capture's lines must still be there to take, a full
// capture must take what still remains, a refund must not exceed what is
// left to refund.
func checkLedger(tx RepoTx, op *PendingOp) error {
	req := op.Request
	if req == nil || !strings.EqualFold(req.Service().Name, api.ServiceDeferred) {
		return nil
	}
	switch {
	case strings.EqualFold(op.Action, api.ActionPay) && op.ReservationKey != "":
		r, err := tx.Reservation(op.ReservationKey)
		if err != nil || r == nil || !r.LinesKnown {
			return err
		}
		lines := captureLinesOf(req)
		if len(lines) == 0 {
			if left := r.RemainingAmount(); !left.Equal(op.Amount) {
				return fmt.Errorf("capture %s: %w: %s remains now, not %s", r.Ref(), ErrLedgerChanged, left.StringFixed(2), op.Amount.StringFixed(2))
			}
			return nil
		}
		if _, err := r.CaptureAmount(lines); err != nil {
			return fmt.Errorf("capture %s: %w: %v", r.Ref(), ErrLedgerChanged, err)
		}
	case strings.EqualFold(op.Action, api.ActionRefund) && req.OriginalTransactionKey != "":
		t, err := tx.Transaction(req.OriginalTransactionKey)
		if err != nil || t == nil {
			return err
		}
		if left := t.Refundable(); op.Amount.GreaterThan(left) {
			return fmt.Errorf("refund of %s: %w: %s left to refund, not %s", t.Key, ErrLedgerChanged, left.StringFixed(2), op.Amount.StringFixed(2))
		}
	}
	return nil
}

// captureLinesOf reads the article groups of a capture request.
func captureLinesOf(req *api.Request) []api.CaptureLine {
	var out []api.CaptureLine
	groups := map[string]*api.CaptureLine{}
	var order []string
	for _, p := range req.Service().Parameters {
		if !strings.EqualFold(p.GroupType, "Article") {
			continue
		}
		g := string(p.GroupID)
		cl := groups[g]
		if cl == nil {
			cl = &api.CaptureLine{}
			groups[g] = cl
			order = append(order, g)
		}
		switch {
		case strings.EqualFold(p.Name, api.PArticleNumber):
			cl.ArticleNumber = string(p.Value)
		case strings.EqualFold(p.Name, api.PArticleQuantity):
			cl.Quantity, _ = strconv.Atoi(string(p.Value))
		}
	}
	for _, g := range order {
		out = append(out, *groups[g])
	}
	return out
}
