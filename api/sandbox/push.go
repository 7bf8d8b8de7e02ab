package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"paydesk/api"
)

const (
	// maxTries is how often a push is sent before it waits for Resend.
	maxTries = 10
	// pushTimeout bounds one push attempt.
	pushTimeout = 10 * time.Second
	// maxParallelPushes bounds the pushes in flight (each key still gets
	// its pushes in order).
	maxParallelPushes = 4
)

// versionAsProperty is the value of Services[].VersionAsProperty in every
// push the document shows.
var versionAsProperty = 1

func isRefund(kind string) bool {
	return kind == api.TypeDeferredRefund || kind == api.TypeGiftCardRefund
}

func mutationOf(kind string) int {
	switch kind {
	case api.TypeDeferredPay, api.TypeDeferredRefund, typeTransfer:
		return api.MutationDeferred
	case api.TypeGiftCardPay, api.TypeGiftCardRefund:
		return api.MutationGiftCard
	}
	return api.MutationDataRequest
}

func (t *txRecord) services(push bool) []api.ResponseService {
	if t.Kind != api.TypeDeferredPay {
		return nil
	}
	svc := api.ResponseService{Name: t.Service, Parameters: []api.ResponseParameter{{Name: api.PInvoiceNumber, Value: api.FlexString(t.InvoiceNumber)}}}
	if push {
		svc.VersionAsProperty = &versionAsProperty
	}
	return []api.ResponseService{svc}
}

func (t *txRecord) related() []api.RelatedTransaction {
	switch {
	case t.Original != "":
		return []api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: t.Original}}
	case t.Group != "":
		return []api.RelatedTransaction{{RelationType: api.RelationPartialPayment, RelatedTransactionKey: t.Group}}
	}
	return nil
}

// txResponse is the response of a Pay or Refund transaction.
func (s *Sandbox) txResponse(t *txRecord, now time.Time) *api.Response {
	resp := s.baseResponse(t.Key, t.Service, mutationOf(t.Kind), t.Status, t.SubCode, now)
	resp.Services = t.services(false)
	resp.Invoice = t.Invoice
	resp.Currency = t.Currency
	if isRefund(t.Kind) {
		resp.AmountCredit = api.NewAmount(t.Amount)
	} else {
		resp.AmountDebit = api.NewAmount(t.Amount)
	}
	resp.TransactionType = api.Ptr(t.Kind)
	resp.RelatedTransactions = t.related()
	if t.PaymentKey != "" {
		resp.PaymentKey = api.Ptr(t.PaymentKey)
	}
	s.echo(t, resp)
	return resp
}

// emitTx queues the Transaction push of a payment or refund.
func (s *Sandbox) emitTx(t *txRecord, now time.Time) {
	sub := t.SubCode
	if t.Kind == api.TypeGiftCardRefund {
		sub = "" // the document's gift card refund push has SubCode null
	}
	p := &api.TransactionPush{
		Key: t.Key, Invoice: t.Invoice, ServiceCode: t.Service, Status: status(t.Status, sub, now, true), IsTest: true,
		Currency: t.Currency, TransactionType: t.Kind, Services: t.services(true), MutationType: mutationOf(t.Kind),
		RelatedTransactions: t.related(),
		Order:               t.Echo.order(), AdditionalParameters: listOf(t.Echo.Additional, false),
		CustomParameters: listOf(t.Echo.Custom, false),
	}
	if isRefund(t.Kind) {
		p.AmountCredit = api.NewAmount(t.Amount)
	} else {
		p.AmountDebit = api.NewAmount(t.Amount)
	}
	if t.PaymentKey != "" {
		p.PaymentKey = api.Ptr(t.PaymentKey)
	}
	s.emit(t, &api.Push{Transaction: p})
}

// emitData queues the DataRequest push of a Reserve, CancelReservation or
// UpdateReservation. Its AmountDebit is 0 and its SubCode null, as in the
// document's Reserve push.
func (s *Sandbox) emitData(t *txRecord, action string, params []api.ResponseParameter, now time.Time) {
	p := &api.DataRequestPush{
		Key: t.Key, Invoice: t.Invoice, ServiceCode: t.Service, ActionCode: action,
		Status: status(t.Status, "", now, true), IsTest: true, Currency: t.Currency,
		AmountDebit: api.MustAmount("0"), MutationType: api.MutationDataRequest,
		Order: t.Echo.order(), AdditionalParameters: listOf(t.Echo.Additional, false),
		CustomParameters: listOf(t.Echo.Custom, false),
	}
	if params != nil {
		p.Services = []api.ResponseService{{Name: t.Service, Parameters: params, VersionAsProperty: &versionAsProperty}}
	}
	s.emit(t, &api.Push{DataRequest: p})
}

// emit records the push with its transaction and puts it in the outbox;
// for a back-office request it only saves the transaction: the gateway's
// back office pushes to nobody.
func (s *Sandbox) emit(t *txRecord, p *api.Push) {
	if s.backOffice {
		s.saveTx(t)
		return
	}
	body, err := p.Encode()
	if err != nil { // the push types always encode; keep the state consistent anyway
		s.logf("encode push for %s: %v", t.Key, err)
		return
	}
	t.Pushes = append(t.Pushes, body)
	s.saveTx(t)
	s.enqueue(t, body)
}

func (s *Sandbox) enqueue(t *txRecord, body []byte) {
	s.outboxSeq++
	e := &outboxEntry{Seq: s.outboxSeq, TxKey: t.Key, URL: t.PushURL, WebsiteKey: t.WebsiteKey, Body: body}
	s.outboxAdd(e)
	s.saveOutbox(e)
	if s.chaos != nil {
		s.chaos.plan(e, time.Now())
	}
}

func (s *Sandbox) outboxAdd(e *outboxEntry) {
	if e.Dead {
		s.dead[e.Seq] = e
		return
	}
	s.queues[e.TxKey] = append(s.queues[e.TxKey], e)
	s.queued++
}

func (s *Sandbox) outboxRemove(e *outboxEntry) {
	q := s.queues[e.TxKey]
	for i, x := range q {
		if x == e {
			q = append(q[:i:i], q[i+1:]...)
			s.queued--
			break
		}
	}
	if len(q) == 0 {
		delete(s.queues, e.TxKey)
	} else {
		s.queues[e.TxKey] = q
	}
}

func (s *Sandbox) targetOf(e *outboxEntry) string {
	if e.URL != "" {
		return e.URL
	}
	return s.pushURL
}

// takeDue marks and returns up to n pushes that may go now: the first
// pending push of each key, when its backoff has passed and it has a
// target. wait is how long until the next one becomes due.
func (s *Sandbox) takeDue(now time.Time, n int) (due []*outboxEntry, wait time.Duration) {
	wait = time.Hour
	for _, q := range s.queues {
		e := q[0]
		if e.inFlight || s.targetOf(e) == "" {
			continue
		}
		if d := e.NextAt.Sub(now); d > 0 {
			wait = min(wait, d)
			continue
		}
		if len(due) == n {
			return due, 0
		}
		e.inFlight = true
		s.inFlight++
		due = append(due, e)
	}
	return due, wait
}

// Run sends pushes from the outbox until ctx is done. Pushes in flight then
// get up to pushTimeout to finish; whatever is not acknowledged stays in the
// outbox for the next run.
func (s *Sandbox) Run(ctx context.Context) error {
	if s.chaos != nil {
		return s.runChaos(ctx)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	sendCtx := context.WithoutCancel(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		due, wait := s.takeDue(time.Now(), maxParallelPushes-s.inFlight)
		s.mu.Unlock()
		for _, e := range due {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.deliver(sendCtx, e)
				s.wakeUp()
			}()
		}
		if !s.nap(ctx, timer, wait) {
			return nil
		}
	}
}

// nap waits until the sender is woken (a new push, a delivery done), wait
// passes or ctx ends; false means ctx ended. timer is the caller's, reused
// across naps and drained before it returns.
func (s *Sandbox) nap(ctx context.Context, timer *time.Timer, wait time.Duration) bool {
	timer.Reset(wait)
	select {
	case <-ctx.Done():
		return false
	case <-s.wake:
	case <-timer.C:
	}
	if !timer.Stop() {
		select {
		case <-timer.C:
		default:
		}
	}
	return true
}

// deliver sends one push and books the outcome.
func (s *Sandbox) deliver(ctx context.Context, e *outboxEntry) {
	s.mu.Lock()
	target := s.targetOf(e)
	creds := s.credsFor(e.WebsiteKey)
	s.mu.Unlock()
	code, err := s.post(ctx, target, creds, e.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	e.inFlight = false
	s.inFlight--
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("answered HTTP %d", code)
	}
	if s.closed {
		return // the state is closed; the entry is still in the outbox file
	}
	if err == nil {
		s.logf("%s push %s to %s: acknowledged", s.now().Format(time.RFC3339), e.TxKey, sanitize(target, 200))
		s.outboxRemove(e)
		s.deleteOutbox(e.Seq)
		_ = s.flushLocked()
		return
	}
	e.Tries++
	e.LastError = sanitize(err.Error(), 300)
	if e.Tries >= maxTries {
		s.outboxRemove(e)
		e.Dead = true
		s.dead[e.Seq] = e
		s.logf("%s push %s to %s: %s; gave up after %d tries (Resend to try again)", s.now().Format(time.RFC3339),
			e.TxKey, sanitize(target, 200), e.LastError, e.Tries)
	} else {
		delay := s.cfg.RetryBase << (e.Tries - 1)
		e.NextAt = time.Now().Add(delay)
		s.logf("%s push %s to %s: %s; try %d of %d in %s", s.now().Format(time.RFC3339), e.TxKey,
			sanitize(target, 200), e.LastError, e.Tries+1, maxTries, delay)
	}
	s.saveOutbox(e)
	_ = s.flushLocked()
}

// post signs and sends a push body: the signature covers the push URL
// without its scheme, as the family's push handlers verify it.
func (s *Sandbox) post(ctx context.Context, target string, creds api.Credentials, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("push URL: %w", err)
	}
	auth := api.Sign(creds, http.MethodPost, api.HostPath(target), body, api.NewNonce(), s.now().Unix())
	req.Header.Set("Authorization", auth.String())
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// Resend queues the pushes of a transaction key again, in their order;
// pushes of that key still waiting are replaced, so each goes once more.
func (s *Sandbox) Resend(key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	t := s.txs[key]
	if t == nil {
		return fmt.Errorf("resend %s: %w", key, ErrUnknownKey)
	}
	if len(t.Pushes) == 0 {
		return fmt.Errorf("resend %s: no push yet (the transaction has not reached a status that is pushed)", key)
	}
	for _, e := range append([]*outboxEntry(nil), s.queues[key]...) {
		if !e.inFlight {
			s.outboxRemove(e)
			s.deleteOutbox(e.Seq)
		}
	}
	for seq, e := range s.dead {
		if e.TxKey == key {
			delete(s.dead, seq)
			s.deleteOutbox(seq)
		}
	}
	if s.chaos != nil {
		s.chaos.forget(key)
	}
	for _, body := range t.Pushes {
		s.enqueue(t, body)
	}
	err := s.flushLocked()
	s.wakeUp()
	if err != nil {
		return fmt.Errorf("resend %s: %w", key, err)
	}
	return nil
}
