package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/internal/batch"
	"paydesk/internal/private"
	"paydesk/store"
	"paydesk/views"
)

// The console's side of the batch page (views.Batch): reading and checking
// a manifest and running the batch happen here, in commands; the page only
// shows what comes back. The batch is the same as `paydesk batch capture`'s
// (internal/batch): one journaled batch per manifest, every capture through
// the operations, never a reservation sent twice.

// batchStore is what a batch needs of the cache beyond ui.Store; *store.DB
// has it.
type batchStore interface {
	batch.Store
	batch.LedgerReader
}

// openBatch opens the batch page on the current tab.
func (a *App) openBatch() tea.Cmd {
	p := views.NewBatch(a.vctx)
	a.openPage(p)
	return nil
}

// batchIntent handles the batch page's intents; ok is false for others.
func (a *App) batchIntent(i views.Intent) (tea.Cmd, bool) {
	switch i := i.(type) {
	case views.BulkIntent:
		p, cmd := views.NewBulkBatch(a.vctx, i.Kind, i.Keys)
		a.openPage(p)
		return cmd, true
	case views.BatchPlanIntent:
		return a.planBatch(i), true
	case views.BatchRunIntent:
		if a.cfg.ReadOnly {
			a.status = views.StatusMsg{Level: views.LevelWarn, Text: "read-only console: batches are off"}
			return nil, true
		}
		return a.runBatch(i), true
	}
	return nil, false
}

func (a *App) batchDeps() (batchStore, error) {
	bs, ok := a.cfg.Store.(batchStore)
	switch {
	case !ok:
		return nil, errors.New("this cache cannot keep batches")
	case a.cfg.Ops == nil:
		return nil, errors.New("no operations in this console")
	case a.cfg.Mode.IsLive():
		return nil, errors.New("against a live gateway run batches with paydesk batch capture (it asks for the typed confirmation)")
	}
	return bs, nil
}

// readManifest reads and hashes the file at path.
func readManifest(path string) (*batch.Manifest, error) {
	// As paydesk batch: a directory or a device is refused, a FIFO no one
	// writes to reads as empty rather than hanging.
	f, err := private.OpenStream(path)
	if err != nil {
		return nil, fmt.Errorf("open manifest %s: %w", path, err)
	}
	defer f.Close()
	return batch.ReadManifest(f)
}

func (a *App) planBatch(i views.BatchPlanIntent) tea.Cmd {
	now := a.cfg.Now()
	return func() tea.Msg {
		bs, err := a.batchDeps()
		if err != nil {
			return views.BatchPlannedMsg{Err: err}
		}
		m, source, err := a.manifestOf(i.Path, i.Kind, i.Keys)
		if err != nil {
			return views.BatchPlannedMsg{Err: err}
		}
		pf := a.preflight(bs, m, i.Kind, now, i.Late)
		pf.Source = source
		plan := planView(pf)
		plan.Kind, plan.Keys = pf.Kind, i.Keys
		if b, err := bs.BatchByHash(a.opsCtx(), pf.Kind, m.Hash); err == nil && b != nil {
			_, items, err := bs.Batch(a.opsCtx(), b.ID)
			if err != nil {
				return views.BatchPlannedMsg{Err: err}
			}
			// The batch as journaled, not the pre-flight against today's
			// ledger (its settled rows would read as over-capture).
			plan.Batch = b.ID
			plan.Items = plan.Items[:0]
			plan.Reservations = 0
			for _, it := range items {
				plan.Items = append(plan.Items, views.BatchPlanItem{Reservation: it.Reservation, Invoice: it.Invoice, Rows: len(it.Rows),
					Amount: it.Amount.StringFixed(2) + " " + it.Currency, Lines: linesText(it)})
				if it.State == store.ItemPlanned {
					plan.Left++
				}
			}
		}
		return views.BatchPlannedMsg{Plan: plan}
	}
}

// manifestOf is the manifest of a plan or a run: the file at path, or the
// reservations marked in the list (keys) for a batch of kind; source names
// it in the journal and on the page.
func (a *App) manifestOf(path, kind string, keys []string) (m *batch.Manifest, source string, err error) {
	if keys == nil {
		m, err = readManifest(path)
		return m, path, err
	}
	m, err = batch.Marked(kind, keys, a.lookup)
	return m, fmt.Sprintf("%d marked reservations", len(keys)), err
}

// preflight checks m as a batch of kind (a capture for "").
func (a *App) preflight(bs batchStore, m *batch.Manifest, kind string, now time.Time, late bool) *batch.Preflight {
	if kind == store.BatchCancelRest {
		return batch.PlanCancelRest(m, a.lookup)
	}
	if m.Rows != nil && kind != "" {
		// Marked keys: found one by one, as a key is not an invoice.
		return batch.PlanCapture(m, batch.One(a.lookup), now, late)
	}
	return batch.PlanCapture(m, batch.Ledgers(bs), now, late)
}

// lookup finds a reservation for a batch's plan, in the program's context.
func (a *App) lookup(ref string) (*store.Reservation, error) {
	return a.cfg.Store.Reservation(a.opsCtx(), ref)
}

func linesText(it store.BatchItem) string {
	parts := make([]string, len(it.Lines))
	for i, l := range it.Lines {
		parts[i] = fmt.Sprintf("%s=%d", l.ArticleNumber, l.Quantity)
	}
	return strings.Join(parts, " ")
}

func planView(pf *batch.Preflight) *views.BatchPlan {
	p := &views.BatchPlan{Path: pf.Source, Hash: pf.Hash, Rows: pf.Rows, Reservations: len(pf.Items), Refused: pf.RefusedReservations,
		RefusedRows: pf.RefusedRows, Took: pf.Took}
	var totals []string
	for _, t := range pf.Totals {
		totals = append(totals, t.Amount.StringFixed(2)+" "+t.Currency)
	}
	p.Total = strings.Join(totals, " + ")
	if p.Total == "" {
		p.Total = "0.00"
	}
	for _, it := range pf.Items {
		parts := make([]string, len(it.Lines))
		for i, l := range it.Lines {
			parts[i] = fmt.Sprintf("%s=%d", l.ArticleNumber, l.Quantity)
		}
		p.Items = append(p.Items, views.BatchPlanItem{Reservation: it.Reservation, Invoice: it.Invoice, Rows: len(it.Rows),
			Amount: it.Amount.StringFixed(2) + " " + it.Currency, Lines: strings.Join(parts, " ")})
	}
	for _, f := range pf.Refused {
		what := f.Ref
		if f.Article != "" {
			what += " " + f.Article
		}
		p.RefusedLines = append(p.RefusedLines, fmt.Sprintf("line %d  %s  %s: %s", f.Line, what, f.Rule, f.Message))
	}
	return p
}

// pushGrace is how long the page keeps hearing of pushes after the run:
// a capture's push follows its answer within moments.
const pushGrace = 15 * time.Second

// runBatch starts (or resumes) the batch of the manifest at path. The run
// is one long command that ends with BatchDoneMsg; its items, and the
// pushes of its captures as the listener stores them, stream to the page
// through a buffered channel that the page drains (each message's Next).
// A page closed meanwhile stops draining: events are then dropped, never
// waited for, and the batch runs to its end (its state is in the cache).
func (a *App) runBatch(i views.BatchRunIntent) tea.Cmd {
	events := make(chan tea.Msg, 1024)
	offer := func(m tea.Msg) {
		select {
		case events <- m:
		default: // the page is not draining: it reads the cache when reopened
		}
	}
	var next tea.Cmd
	next = func() tea.Msg {
		m, ok := <-events
		if !ok {
			return nil
		}
		switch m := m.(type) {
		case views.BatchItemMsg:
			m.Next = next
			return m
		case views.BatchPushMsg:
			m.Next = next
			return m
		}
		return m
	}
	ctx := a.cfg.Context
	svc := a.cfg.Ops
	now := a.cfg.Now()
	st := a.cfg.Store
	var batchID atomic.Value
	batchID.Store("")
	run := func() tea.Msg {
		runDone := make(chan struct{})
		defer close(runDone)
		changes, unsubscribe := st.Subscribe()
		// The forwarder owns events: it closes them once the run has ended and
		// the grace for the last pushes is over.
		// Captures answered, whose push has not been seen yet.
		var waitMu sync.Mutex
		waiting := map[string]bool{}
		go func(done <-chan struct{}) {
			defer close(events)
			defer unsubscribe()
			var grace <-chan time.Time
			tick := time.NewTicker(500 * time.Millisecond)
			defer tick.Stop()
			check := func() {
				waitMu.Lock()
				keys := make([]string, 0, len(waiting))
				for k := range waiting {
					keys = append(keys, k)
				}
				waitMu.Unlock()
				if len(keys) == 0 {
					return
				}
				// A push that changes nothing (the answer already booked it)
				// names no transaction in its change: ask the push log.
				recs, err := st.PushesFor(ctx, keys...)
				if err != nil {
					return
				}
				var got []string
				waitMu.Lock()
				for _, r := range recs {
					if waiting[r.Key] {
						delete(waiting, r.Key)
						got = append(got, r.Key)
					}
				}
				waitMu.Unlock()
				if len(got) > 0 {
					offer(views.BatchPushMsg{Batch: batchID.Load().(string), Keys: got})
				}
			}
			for {
				select {
				case c, ok := <-changes:
					if !ok {
						return
					}
					if c.Pushes > 0 || c.Overflow {
						check()
					}
				case <-tick.C:
					check()
					waitMu.Lock()
					all := len(waiting) == 0
					waitMu.Unlock()
					if all && done == nil {
						return // the run ended and every push is in
					}
				case <-done:
					done = nil
					grace = time.After(pushGrace)
				case <-grace:
					check()
					return
				}
			}
		}(runDone)

		bs, err := a.batchDeps()
		if err != nil {
			return views.BatchDoneMsg{Err: err}
		}
		m, source, err := a.manifestOf(i.Path, i.Kind, i.Keys)
		if err != nil {
			return views.BatchDoneMsg{Err: err}
		}
		kind := i.Kind
		if kind == "" {
			kind = store.BatchCapture
		}
		rn := &batch.Runner{Svc: svc, Store: bs}
		var b store.Batch
		var items []store.BatchItem
		if prev, err := bs.BatchByHash(ctx, kind, m.Hash); err == nil && prev != nil {
			p, its, err := bs.Batch(ctx, prev.ID)
			if err != nil {
				return views.BatchDoneMsg{Err: err}
			}
			b, items = *p, its
		} else {
			pf := a.preflight(bs, m, kind, now, false)
			pf.Source = source
			if len(pf.Items) == 0 {
				return views.BatchDoneMsg{Err: errors.New("nothing to send: every reservation was refused")}
			}
			b, items, err = rn.Start(ctx, pf, source)
			if err != nil {
				return views.BatchDoneMsg{Err: err}
			}
		}
		batchID.Store(b.ID)
		rn.Progress = func(e batch.Event) {
			if e.Item.Key != "" && (e.Item.State == store.ItemSettled || e.Item.State == store.ItemSent) {
				waitMu.Lock()
				waiting[e.Item.Key] = true
				waitMu.Unlock()
			}
			offer(views.BatchItemMsg{Batch: b.ID, Item: e.Item, Done: e.Done, Total: e.Total, Earlier: e.Earlier})
		}
		out, err := rn.Run(context.WithoutCancel(ctx), b, items)
		return views.BatchDoneMsg{Batch: b.ID, Text: out.CountsText(), Err: err}
	}
	return tea.Batch(run, next)
}
