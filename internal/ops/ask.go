package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"paydesk/api"
	"paydesk/internal/access"
	"paydesk/store"
)

// Asker looks transactions up at the gateway; *api.Client is one. Lookups
// change nothing, so asking is always safe, unlike sending again.
type Asker interface {
	StatusFor(ctx context.Context, action, key string) (*api.Response, error)
	InvoiceInfo(ctx context.Context, invoice string) (*api.InvoiceInfo, error)
}

// ErrCannotAsk: the gateway client has no lookups.
var ErrCannotAsk = errors.New("the gateway client cannot look transactions up")

// Ask settles an open operation (outcome unknown, or sent and waiting for
// its push) by asking the gateway what became of it — never by sending it
// again. With the operation's key known it asks the status of that key;
// without one (the answer was lost) it finds the transaction among those of
// the operation's invoice: the same action and service, the same amount,
// not already known to another operation. What the gateway says is
// recorded as a response would be. When the gateway holds no such
// transaction, the request was not processed and the operation fails, so
// it may be sent again. The console's "ask" action and
// `paydesk resolve --ask` call this.
func (s *Service) Ask(ctx context.Context, id uint64) (Result, error) {
	if err := s.Check(ctx, access.Lookup); err != nil {
		return Result{OpID: id}, fmt.Errorf("ask about operation %d: %w", id, err)
	}
	st := s.cfg.Store
	op, err := st.Op(ctx, id)
	if err != nil {
		return Result{OpID: id}, fmt.Errorf("ask about operation %d: %w", id, err)
	}
	res := Result{OpID: id, Action: op.Action, Service: op.Service, Target: op.Target, Invoice: op.Invoice,
		Currency: op.Currency, Amount: op.Amount, State: op.State, Key: op.ResultKey}
	if !op.State.IsOpen() {
		return res, fmt.Errorf("ask about operation %d: %w: it is already %s", id, ErrNotPossible, op.State)
	}
	asker, ok := s.cfg.Gateway.(Asker)
	if !ok {
		return res, fmt.Errorf("ask about operation %d: %w", id, ErrCannotAsk)
	}
	key := op.ResultKey
	if key == "" {
		key, err = s.findKey(ctx, asker, op)
		if errors.Is(err, api.ErrUnknownTransaction) {
			return s.notProcessed(ctx, res, op)
		}
		if err != nil {
			return res, fmt.Errorf("ask about operation %d: %w", id, err)
		}
	}
	resp, err := asker.StatusFor(ctx, op.Action, key)
	if err != nil {
		return res, fmt.Errorf("ask about operation %d (key %s): %w", id, key, err)
	}
	fillFromResponse(&res, resp)
	got, err := st.ApplyResponse(ctx, id, resp)
	if err != nil {
		return res, fmt.Errorf("ask about operation %d: record the gateway's answer: %w", id, err)
	}
	res.State = got.State
	res.Message = "asked the gateway: " + res.StatusText() + keyText(res.Key)
	if err := s.audit(ctx, store.AuditEntry{Action: "ask", Target: op.Target, Amount: op.Amount, Currency: op.Currency,
		Result: auditText(res, nil), Reason: fmt.Sprintf("operation %d was %s", id, op.State), OpID: id}); err != nil {
		res.Warning = err.Error()
	}
	return res, nil
}

// notProcessed fails an operation the gateway holds nothing for.
func (s *Service) notProcessed(ctx context.Context, res Result, op *store.PendingOp) (Result, error) {
	reason := "asked the gateway: it holds no transaction for this request, so it was not processed; it may be sent again"
	if err := s.cfg.Store.FailOp(ctx, op.ID, reason); err != nil {
		return res, fmt.Errorf("ask about operation %d: %w", op.ID, err)
	}
	res.State, res.Message = store.OpFailed, reason
	if err := s.audit(ctx, store.AuditEntry{Action: "ask", Target: op.Target, Amount: op.Amount, Currency: op.Currency,
		Result: "failed: not at the gateway", Reason: fmt.Sprintf("operation %d was %s", op.ID, op.State), OpID: op.ID}); err != nil {
		res.Warning = err.Error()
	}
	return res, nil
}

// findKey picks the operation's transaction among its invoice's: the
// oldest one of the same action, service and amount (and, for a refund,
// of the same original) that no other operation knows. It returns
// api.ErrUnknownTransaction when there is none.
func (s *Service) findKey(ctx context.Context, asker Asker, op *store.PendingOp) (string, error) {
	info, err := asker.InvoiceInfo(ctx, op.Invoice)
	if err != nil {
		return "", err
	}
	known, err := s.knownKeys(ctx, op.ID)
	if err != nil {
		return "", err
	}
	for _, t := range info.Transactions {
		if t.Key == "" || known[t.Key] || !answers(op, &t) {
			continue
		}
		return t.Key, nil
	}
	return "", api.ErrUnknownTransaction
}

func (s *Service) knownKeys(ctx context.Context, except uint64) (map[string]bool, error) {
	ops, err := s.cfg.Store.Ops(ctx, store.OpPending, store.OpSent, store.OpOutcomeUnknown, store.OpSettled, store.OpFailed, store.OpResolved)
	if err != nil {
		return nil, fmt.Errorf("read the operation journal: %w", err)
	}
	known := map[string]bool{}
	for _, o := range ops {
		if o.ID != except && o.ResultKey != "" {
			known[o.ResultKey] = true
		}
	}
	return known, nil
}

// answers reports whether an invoice's transaction is what op sent.
func answers(op *store.PendingOp, t *api.InvoiceTransaction) bool {
	if !strings.EqualFold(t.Action, op.Action) || !strings.EqualFold(t.ServiceCode, op.Service) {
		return false
	}
	if t.Status.Code.Code == api.StatusValidationFailure {
		return false // a 491 created nothing
	}
	amount := t.AmountDebit
	if t.AmountCredit != nil {
		amount = t.AmountCredit
	}
	if amount != nil && !op.Amount.IsZero() && !amount.Decimal.Equal(op.Amount) {
		return false
	}
	if strings.EqualFold(op.Action, api.ActionRefund) && op.Request != nil && op.Request.OriginalTransactionKey != "" {
		if orig := t.Related(api.RelationRefund); orig != "" && orig != op.Request.OriginalTransactionKey {
			return false
		}
	}
	return true
}
