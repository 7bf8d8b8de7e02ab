package batch

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// DefaultConcurrency is how many requests a batch has in flight toward the
// gateway at most: enough to hide the round trip, few enough not to hammer
// it.
const DefaultConcurrency = 4

// Store is what a batch run needs of the cache; *store.DB is one.
type Store interface {
	CreateBatch(ctx context.Context, b store.Batch, items []store.BatchItem) (store.Batch, error)
	BatchByHash(ctx context.Context, kind, hash string) (*store.Batch, error)
	Batch(ctx context.Context, id string) (*store.Batch, []store.BatchItem, error)
	UpdateBatchItem(ctx context.Context, id string, it store.BatchItem) error
	Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error)
	Op(ctx context.Context, id uint64) (*store.PendingOp, error)
	AppendAudit(ctx context.Context, e store.AuditEntry) (uint64, error)
}

// Runner runs batches through the operations.
type Runner struct {
	Svc   *ops.Service
	Store Store
	// Concurrency bounds the requests in flight; 0 means DefaultConcurrency.
	Concurrency int
	// Progress is told about every item as it ends (from one goroutine at
	// a time); nil means nobody listens.
	Progress func(Event)
}

// Event is one item that ended in this run, or was found done already.
type Event struct {
	Item  store.BatchItem
	Done  int // items ended so far, this one included
	Total int
	// Earlier is true for an item an earlier run had already ended
	// (skipped: nothing sent now).
	Earlier bool
}

// Outcome is what a run did.
type Outcome struct {
	Batch store.Batch
	Items []store.BatchItem
	// Counts per item state at the end of the run.
	Counts map[store.BatchItemState]int
	// Sent is how many items this run handed to the gateway; Earlier how
	// many an earlier run had ended.
	Sent    int
	Earlier int
	// Settled is the amount of the settled items, per currency.
	Settled []Total
	Took    time.Duration
	// Interrupted is true when the run was stopped before every item ran.
	Interrupted bool
}

// Unknown are the items whose outcome is unknown: the operator checks them
// in the gateway's back office and resolves their operations.
func (o Outcome) Unknown() []store.BatchItem { return o.in(store.ItemOutcomeUnknown) }

// Failed are the items the gateway refused or that never left.
func (o Outcome) Failed() []store.BatchItem { return o.in(store.ItemFailed) }

func (o Outcome) in(st store.BatchItemState) []store.BatchItem {
	var out []store.BatchItem
	for _, it := range o.Items {
		if it.State == st {
			out = append(out, it)
		}
	}
	return out
}

// Start journals a checked manifest as a new batch: the accepted items
// planned, the refused reservations with their rules. It refuses a manifest
// already run (store.ErrBatchExists): resume that batch instead.
func (rn *Runner) Start(ctx context.Context, pf *Preflight, source string) (store.Batch, []store.BatchItem, error) {
	b := store.Batch{Kind: pf.Kind, Hash: pf.Hash, Source: source, Operator: rn.Svc.Operator(), Late: pf.Late, Rows: pf.Rows,
		Created: rn.Svc.Now()}
	if len(pf.Totals) == 1 {
		b.Total, b.Currency = pf.Totals[0].Amount, pf.Totals[0].Currency
	}
	items := make([]store.BatchItem, 0, len(pf.Items))
	for _, it := range pf.Items {
		items = append(items, store.BatchItem{Reservation: it.Reservation, Invoice: it.Invoice, Rows: it.Rows, Lines: it.Lines,
			Amount: it.Amount, Currency: it.Currency, Note: it.Note, Parcels: it.Parcels, State: store.ItemPlanned})
	}
	b, err := rn.Store.CreateBatch(ctx, b, items)
	if err != nil {
		return b, nil, err
	}
	for i := range items {
		items[i].Index = i
	}
	rn.audit(ctx, b, decimal.Zero, fmt.Sprintf("started: %d reservations planned, %d refused by the pre-flight, %d rows of %s (sha256 %s)",
		len(items), pf.RefusedReservations, pf.Rows, source, short(pf.Hash)))
	return b, items, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func (rn *Runner) audit(ctx context.Context, b store.Batch, amount decimal.Decimal, result string) {
	if amount.IsZero() {
		amount = b.Total
	}
	// A failing audit write does not stop a batch whose captures are each
	// audited by the operations.
	_, _ = rn.Store.AppendAudit(ctx, store.AuditEntry{Time: rn.Svc.Now(), Operator: rn.Svc.Operator(), Action: "batch-" + b.Kind,
		Target: b.ID, Amount: amount, Currency: b.Currency, Result: result, Reason: b.Source})
}

// action is the gateway action a batch of kind sends.
func action(kind string) string {
	if kind == store.BatchCancelRest {
		return api.ActionCancelReservation
	}
	return api.ActionPay
}

// Reconcile brings the items of a batch up to date with the operation
// journal before a run: an item a killed run handed to the operations
// (journaled, perhaps sent, outcome never written to the batch) is found by
// its operation and takes that operation's state, so it is never sent
// again; items waiting for a push or with an unknown outcome take their
// operation's current state.
func (rn *Runner) Reconcile(ctx context.Context, b store.Batch, items []store.BatchItem) ([]store.BatchItem, error) {
	var journal []*store.PendingOp
	needJournal := false
	for _, it := range items {
		if it.State == store.ItemPlanned {
			needJournal = true
		}
	}
	if needJournal {
		all, err := rn.Store.Ops(ctx)
		if err != nil {
			return items, fmt.Errorf("batch %s: read the operation journal: %w", b.ID, err)
		}
		act := action(b.Kind)
		for _, op := range all {
			if op.Action == act && !op.Created.Before(b.Created) {
				journal = append(journal, op)
			}
		}
	}
	byTarget := map[string][]*store.PendingOp{}
	for _, op := range journal {
		byTarget[op.Target] = append(byTarget[op.Target], op)
	}
	for i, it := range items {
		var op *store.PendingOp
		switch it.State {
		case store.ItemPlanned:
			// The oldest matching operation since the batch began is its own.
			cands := byTarget[it.Reservation]
			sort.Slice(cands, func(a, c int) bool { return cands[a].ID < cands[c].ID })
			for _, o := range cands {
				if b.Kind == store.BatchCancelRest || o.Amount.Equal(it.Amount) {
					op = o
					break
				}
			}
		case store.ItemSent, store.ItemOutcomeUnknown, store.ItemFailed:
			if it.OpID == 0 {
				continue
			}
			o, err := rn.Store.Op(ctx, it.OpID)
			if err != nil {
				return items, fmt.Errorf("batch %s: operation %d: %w", b.ID, it.OpID, err)
			}
			op = o
		}
		if op == nil {
			continue
		}
		st := itemState(op.State)
		if st == it.State && op.ID == it.OpID {
			continue
		}
		it.State, it.OpID, it.Key = st, op.ID, op.ResultKey
		it.Message = opMessage(op)
		if err := rn.Store.UpdateBatchItem(ctx, b.ID, it); err != nil {
			return items, err
		}
		items[i] = it
	}
	return items, nil
}

func itemState(s store.OpState) store.BatchItemState {
	switch s {
	case store.OpSettled:
		return store.ItemSettled
	case store.OpSent:
		return store.ItemSent
	case store.OpFailed:
		return store.ItemFailed
	case store.OpResolved:
		return store.ItemResolved
	}
	// Pending in the journal of a process that ended, or unknown.
	return store.ItemOutcomeUnknown
}

func opMessage(op *store.PendingOp) string {
	switch op.State {
	case store.OpOutcomeUnknown, store.OpPending:
		return fmt.Sprintf("operation %d: outcome unknown (%s): check the gateway's back office, then paydesk resolve %d", op.ID, op.Error, op.ID)
	case store.OpResolved:
		return fmt.Sprintf("operation %d resolved by hand: %s", op.ID, op.Note)
	case store.OpFailed:
		return fmt.Sprintf("operation %d failed: %s %s", op.ID, op.ResultStatus.Text(), op.Error)
	}
	return fmt.Sprintf("operation %d %s", op.ID, op.State)
}

// Run sends every planned item of the batch, at most Concurrency at a time,
// and writes each outcome to the batch as it comes. Items an earlier run
// ended are reported and skipped. A failure of one item (5xx, network,
// refusal) marks that item, never the batch. Cancelling ctx stops handing
// out items; those in flight finish.
func (rn *Runner) Run(ctx context.Context, b store.Batch, items []store.BatchItem) (Outcome, error) {
	start := time.Now()
	items, err := rn.Reconcile(ctx, b, items)
	if err != nil {
		return Outcome{Batch: b, Items: items}, err
	}
	out := Outcome{Batch: b, Items: items}
	n := rn.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	var mu sync.Mutex
	done := 0
	report := func(it store.BatchItem, earlier bool) {
		mu.Lock()
		defer mu.Unlock()
		done++
		out.Items[it.Index] = it
		if rn.Progress != nil {
			rn.Progress(Event{Item: it, Done: done, Total: len(items), Earlier: earlier})
		}
	}
	var todo []int
	for i, it := range items {
		if it.State.Done() {
			out.Earlier++
			report(it, true)
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) > 0 && out.Earlier > 0 {
		rn.audit(ctx, b, decimal.Zero, fmt.Sprintf("resumed: %d reservations left to send, %d ended earlier", len(todo), out.Earlier))
	}
	// A capture on its way is never cut off (that would make its outcome
	// unknown): cancelling ctx only stops handing out new ones.
	sendCtx := context.WithoutCancel(ctx)
	work := make(chan int)
	var wg sync.WaitGroup
	var storeErr error
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				it := rn.runItem(sendCtx, b, items[i])
				if err := rn.Store.UpdateBatchItem(sendCtx, b.ID, it); err != nil {
					mu.Lock()
					storeErr = errors.Join(storeErr, err)
					mu.Unlock()
				}
				report(it, false)
			}
		}()
	}
feed:
	for _, i := range todo {
		select {
		case <-ctx.Done():
			out.Interrupted = true
			break feed
		case work <- i:
			out.Sent++
		}
	}
	close(work)
	wg.Wait()
	out.count()
	out.Took = time.Since(start)
	if out.Sent > 0 {
		var amount decimal.Decimal
		if len(out.Settled) == 1 {
			amount = out.Settled[0].Amount
		}
		// The run's end is audited even when ctx was cancelled (what was
		// sent was sent).
		rn.audit(sendCtx, b, amount, "run ended: "+out.CountsText())
	}
	return out, storeErr
}

// State is a batch as the cache has it, without running anything.
func State(b store.Batch, items []store.BatchItem) Outcome {
	o := Outcome{Batch: b, Items: items}
	o.count()
	return o
}

func (o *Outcome) count() {
	o.Counts = map[store.BatchItemState]int{}
	settled := map[string]decimal.Decimal{}
	for _, it := range o.Items {
		o.Counts[it.State]++
		if it.State == store.ItemSettled || it.State == store.ItemSent {
			settled[it.Currency] = settled[it.Currency].Add(it.Amount)
		}
	}
	o.Settled = nil
	for c, a := range settled {
		o.Settled = append(o.Settled, Total{Currency: c, Amount: a})
	}
	sort.Slice(o.Settled, func(i, j int) bool { return o.Settled[i].Currency < o.Settled[j].Currency })
}

// CountsText is "120 settled, 2 failed, 1 outcome unknown, 3 refused".
func (o Outcome) CountsText() string {
	var parts []string
	for _, st := range []store.BatchItemState{store.ItemSettled, store.ItemSent, store.ItemFailed, store.ItemOutcomeUnknown,
		store.ItemResolved, store.ItemRefused, store.ItemPlanned} {
		if n := o.Counts[st]; n > 0 {
			name := strings.ReplaceAll(string(st), "_", " ")
			if st == store.ItemSent {
				name = "waiting for their push"
			}
			if st == store.ItemPlanned {
				name = "not sent yet"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	if len(parts) == 0 {
		return "nothing to do"
	}
	return strings.Join(parts, ", ")
}

// runItem hands one item to the operations and says how it ended.
func (rn *Runner) runItem(ctx context.Context, b store.Batch, it store.BatchItem) store.BatchItem {
	note := fmt.Sprintf("batch %s rows %s", b.ID, joinInts(it.Rows))
	if it.Note != "" {
		note += "; " + it.Note
	}
	var res ops.Result
	var err error
	switch b.Kind {
	case store.BatchCancelRest:
		// The operator confirmed the batch; against a live gateway that
		// confirmation stands for each invoice's.
		res, err = rn.Svc.Cancel(ctx, ops.CancelRequest{Reservation: it.Reservation, Confirm: it.Invoice})
	default:
		qty := make(map[string]int, len(it.Lines))
		for _, l := range it.Lines {
			qty[l.ArticleNumber] = l.Quantity
		}
		res, err = rn.Svc.Capture(ctx, ops.CaptureRequest{Reservation: it.Reservation, Quantities: qty, LateConfirmed: b.Late, Note: note, Parcels: it.Parcels})
	}
	it.OpID, it.Key = res.OpID, res.Key
	if res.OpID == 0 {
		// Refused before the journal: nothing was sent.
		it.State = store.ItemRefused
		it.Rule = RuleState
		if err != nil {
			it.Message = err.Error()
		}
		return it
	}
	switch res.State {
	case store.OpSettled:
		it.State = store.ItemSettled
		it.Message = res.StatusText()
		if res.InvoiceNumber != "" {
			it.Message += " invoice " + res.InvoiceNumber
		}
	case store.OpSent:
		it.State = store.ItemSent
		it.Message = res.StatusText() + " (waiting for the push)"
	case store.OpOutcomeUnknown:
		it.State = store.ItemOutcomeUnknown
		it.Message = fmt.Sprintf("operation %d: outcome unknown (%s): check the gateway's back office, then paydesk resolve %d",
			res.OpID, oneLine(res.Message), res.OpID)
	default:
		it.State = store.ItemFailed
		msg := res.StatusText()
		if res.Message != "" {
			msg = strings.TrimSpace(msg + " " + oneLine(res.Message))
		}
		for _, e := range res.Errors {
			msg += "; " + e.Text()
		}
		if msg == "" && err != nil {
			msg = err.Error()
		}
		it.Message = msg
	}
	return it
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
