package ui

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/api"
	"paydesk/internal/reconcile"
	"paydesk/store"
	"paydesk/views"
)

// changeMsg is one or more cache changes, merged; Window is how long
// they were gathered (growStream makes the next window of a stream from
// it).
type changeMsg struct {
	Change store.Change
	Window time.Duration
}

type storeClosedMsg struct{}

type countsMsg struct{ Counts store.Counts }

// pageMsg carries a detail page's data; open pushes a new page, otherwise
// the pages already open take it.
type pageMsg struct {
	open bool
	data tea.Msg
}

// coalesceWindow lets a burst of pushes become one reload; streamWindow
// is the window while pushes keep coming (a reload less than streamWindow
// ago): the lists still move four times a second, and fifty consoles of a
// server do not reload forty times a second each while its listener works.
const (
	coalesceWindow = 25 * time.Millisecond
	streamWindow   = 250 * time.Millisecond
)

// changeWindow is how long to gather changes after the first: short after
// a quiet spell, longer in a stream.
func changeWindow(sinceLast time.Duration) time.Duration {
	return changeWindowFor(sinceLast, streamWindow)
}

// changeWindowFor is changeWindow with the stream's window stream.
func changeWindowFor(sinceLast, stream time.Duration) time.Duration {
	if sinceLast >= 0 && sinceLast < stream {
		return stream
	}
	return coalesceWindow
}

// waitChange waits for the cache's next change notification, then gathers
// what else arrives within a window (changeWindowFor, from when the
// previous change was delivered: last; zero for none): a burst of pushes
// redraws once. A change less than within after the last one is part of
// a stream and is gathered for stream (growStream lengthens it while the
// stream goes on). now is the clock last was read from. No key press is
// needed; the program runs this command in the background.
func waitChange(ch <-chan store.Change, now func() time.Time, last time.Time, within, stream time.Duration) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return storeClosedMsg{}
		}
		window := coalesceWindow
		if !last.IsZero() {
			if window = changeWindowFor(now().Sub(last), within); window != coalesceWindow {
				window = stream
			}
		}
		timer := time.NewTimer(window)
		defer timer.Stop()
		var idx keyIndex
		for {
			select {
			case more, ok := <-ch:
				if !ok {
					return changeMsg{c, window}
				}
				c = mergeIndexed(c, more, &idx)
			case <-timer.C:
				return changeMsg{c, window}
			}
		}
	}
}

// merge bundles b into a: every exported field of store.Change is kept
// (TestMergeKeepsEveryField checks each by reflection, so a field added to
// the store's Change is not dropped here unnoticed).
func merge(a, b store.Change) store.Change { return mergeIndexed(a, b, nil) }

// keyIndex holds the keys of a change being gathered, so that merging a
// stream's changes into it takes time linear in their keys: three seconds
// of a thousand pushes a second, each merged by a search of the keys
// before it, cost each console over SSH more than its reload. Its sets
// are made from the change at first use; nil is no index.
type keyIndex struct {
	reservations, transactions, receipts map[string]struct{}
}

// mergeIndexed is merge with the keys of a in idx (nil: none).
func mergeIndexed(a, b store.Change, idx *keyIndex) store.Change {
	a.Pushes += b.Pushes
	a.Rejected += b.Rejected
	if idx == nil {
		a.Reservations = appendNew(a.Reservations, b.Reservations)
		a.Transactions = appendNew(a.Transactions, b.Transactions)
	} else {
		a.Reservations = appendIndexed(a.Reservations, b.Reservations, &idx.reservations)
		a.Transactions = appendIndexed(a.Transactions, b.Transactions, &idx.transactions)
	}
	a.Ops = a.Ops || b.Ops
	a.Audit = a.Audit || b.Audit
	a.Exchanges = a.Exchanges || b.Exchanges
	a.Orders = a.Orders || b.Orders
	a.Approvals = a.Approvals || b.Approvals
	a.Endpoints = a.Endpoints || b.Endpoints
	a.Deliveries = a.Deliveries || b.Deliveries
	a.Overflow = a.Overflow || b.Overflow
	return mergeReceipts(a, b, idx)
}

// appendIndexed is appendNew with the keys of dst in *set (made from dst
// when nil).
func appendIndexed(dst, src []string, set *map[string]struct{}) []string {
	if len(src) == 0 {
		return dst
	}
	if *set == nil {
		*set = make(map[string]struct{}, len(dst)+len(src))
		for _, s := range dst {
			(*set)[s] = struct{}{}
		}
	}
	for _, s := range src {
		if _, ok := (*set)[s]; !ok {
			(*set)[s] = struct{}{}
			dst = append(dst, s)
		}
	}
	return dst
}

func appendNew(dst, src []string) []string {
	for _, s := range src {
		if !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// patchLimit is the number of changed rows from which a full reload is
// cheaper than loading them one by one.
const patchLimit = 1000

// loadAll loads what every tab shows.
func (a *App) loadAll() tea.Cmd {
	return a.reload(store.Change{Overflow: true})
}

// reload loads what a change touched, for the tabs and the open pages.
//
// The first load (the console's start) asks at once only what the first
// frame shows: the status line's counts, then the reservations list's
// first page (lead). The rest waits in afterFirstPage until that page has been
// answered (firstPageAnswered): the attention tab's rows (up to 1,500 on
// a large cache), the transactions, the push log, the logs, the approvals
// and the deliveries. Asked all at once they competed with the page for
// the two cores and the database's connections: on a million reservations
// the page came 120–330 ms after the console began to read, behind them
// (bbolt, load average 5–8).
func (a *App) reload(c store.Change) tea.Cmd {
	st := a.cfg.Store
	full := c.Overflow
	first := full && !a.pagesGiven
	lead := []tea.Cmd{a.loadCounts(c)}
	var cmds []tea.Cmd
	if full || len(c.Reservations) > patchLimit {
		// The reservations list reads its pages from the store itself (the
		// first time it is given the store; later it reads its window
		// again); the attention tab gets the few rows it looks at.
		if !a.pagesGiven {
			a.pagesGiven = true
			lead = append(lead, send(views.ReservationSourceMsg{Source: st}))
		} else {
			lead = append(lead, send(views.ReservationRowsMsg{}))
		}
		now := a.cfg.Now
		cmds = append(cmds, func() tea.Msg {
			sums, beyond, err := attentionSummaries(a.opsCtx(), st, now())
			if err != nil {
				return views.AttentionReservationsMsg{Err: err}
			}
			return views.AttentionReservationsMsg{Rows: views.NewReservationRows(sums), Beyond: beyond}
		})
	} else if len(c.Reservations) > 0 {
		keys := slices.Clone(c.Reservations)
		cmds = append(cmds, func() tea.Msg {
			rows := make([]*views.ReservationRow, 0, len(keys))
			var removed []string
			for _, k := range keys {
				r, err := st.Reservation(a.opsCtx(), k)
				if errors.Is(err, store.ErrNotFound) {
					removed = append(removed, k)
					continue
				}
				if err != nil {
					return views.ReservationRowsMsg{Err: err}
				}
				rows = append(rows, views.NewReservationRow(r.Summary()))
			}
			return views.ReservationRowsMsg{Rows: rows, Removed: removed}
		})
	}
	switch {
	case full || len(c.Transactions) > patchLimit:
		// Like the reservations: the list reads its pages from the store
		// (given once; later it reads its window again), the attention tab
		// gets the gift card payments it looks at.
		if !a.txGiven {
			a.txGiven = true
			cmds = append(cmds, send(views.TransactionSourceMsg{Source: st}))
		} else {
			cmds = append(cmds, send(views.TransactionRowsMsg{}))
		}
		cmds = append(cmds, func() tea.Msg {
			txs, err := attentionGiftCards(a.opsCtx(), st)
			if err != nil {
				return views.AttentionTransactionsMsg{Err: err}
			}
			return views.AttentionTransactionsMsg{Rows: views.NewTransactionRows(txs)}
		})
	case len(c.Transactions) > 0:
		keys := slices.Clone(c.Transactions)
		cmds = append(cmds, func() tea.Msg {
			rows := make([]*views.TransactionRow, 0, len(keys))
			for _, k := range keys {
				t, err := st.Transaction(a.opsCtx(), k)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return views.TransactionRowsMsg{Err: err}
				}
				rows = append(rows, views.NewTransactionRow(t))
			}
			return views.TransactionRowsMsg{Rows: rows}
		})
	}
	if !full && c.Receipts > 0 && c.ReceiptKeys != nil {
		cmds = append(cmds, a.loadRepeated(c.ReceiptKeys))
	}
	if ps, ok := st.(views.PushSource); ok && full && !a.pushGiven {
		// The push log reads its window from the store (given once); the
		// pushes read below are the attention tab's, and tell the log
		// that it changed.
		a.pushGiven = true
		cmds = append(cmds, send(views.PushSourceMsg{Source: ps}))
	}
	if full || c.Pushes > 0 || c.Rejected > 0 || c.Receipts > 0 && c.ReceiptKeys == nil {
		limit := a.cfg.PushLimit
		n, r := limit, limit
		// A repeat may be of any push in the log: when the change does not
		// name their keys, the counts are read again with the whole log.
		full := full || c.Receipts > 0 && c.ReceiptKeys == nil
		if !full {
			n, r = min(c.Pushes+8, limit), min(c.Rejected+8, limit)
			if c.Pushes == 0 {
				n = 0
			}
			if c.Rejected == 0 {
				r = 0
			}
		}
		cmds = append(cmds, func() tea.Msg {
			var ps []*store.PushRecord
			if n > 0 {
				acc, err := st.Pushes(a.opsCtx(), n, 0)
				if err != nil {
					return views.PushRowsMsg{Err: err}
				}
				ps = append(ps, acc...)
			}
			if r > 0 {
				rej, err := st.RejectedPushes(a.opsCtx(), r)
				if err != nil {
					return views.PushRowsMsg{Err: err}
				}
				ps = append(ps, rej...)
			}
			sort.SliceStable(ps, func(i, j int) bool { return ps[i].ReceivedAt.After(ps[j].ReceivedAt) })
			rows, err := pushRows(a.opsCtx(), st, ps)
			if err != nil {
				return views.PushRowsMsg{Err: err}
			}
			return views.PushRowsMsg{Full: full, Rows: rows}
		})
	}
	if full || c.Audit {
		cmds = append(cmds, func() tea.Msg {
			es, err := st.Audit(a.opsCtx(), 1000)
			return auditMsg{es, err}
		})
	}
	if full || c.Exchanges {
		cmds = append(cmds, func() tea.Msg {
			xs, err := st.Exchanges(a.opsCtx(), 1000)
			return exchangesMsg{xs, err}
		})
	}
	if full || c.Ops || c.Orders || len(c.Reservations) > 0 {
		cmds = append(cmds, a.loadAttention())
	}
	if full || c.Approvals {
		cmds = append(cmds, a.loadApprovals())
	}
	if full || c.Audit || (c.Pushes > 0 && a.deliveriesOpen()) {
		// A resend is audited; a push stored adds its deliveries, read
		// at once while the page is open (else at the next poll).
		a.deliveriesRead = a.cfg.Now()
		cmds = append(cmds, a.loadDeliveries())
	}
	cmds = append(cmds, a.reloadPages()...)
	if first {
		// The warm-up of the lists' search blocks too: started by the
		// clock alone it ran before the first frame of a million
		// reservations, beside its reads (100–230 MB of file pages in
		// the console's RSS at that frame).
		a.afterFirstPage = append(append(a.afterFirstPage, cmds...), a.warmLists())
		// The counts, then the page (lead[0] is the counts): on a team's
		// database the open leaves one connection in the pool, and the two
		// read side by side made the page wait for a new one, a server
		// backend started (23–35 ms alone on the 2-core VM).
		counts, rest := lead[0], lead[1:]
		return func() tea.Msg { return tea.BatchMsg(append([]tea.Cmd{send(counts())}, rest...)) }
	}
	return tea.Batch(append(lead, cmds...)...)
}

// firstFrameSettle is how long the reads the first load kept back wait
// after the reservations list's first answer. The frame with its rows is
// written at the renderer's next tick, and the terminal (tmux, a terminal
// emulator, sshd) must then get the CPU to draw it; started at once, the
// kept-back reads (the attention tab's rows, the other tabs' pages, and on
// PostgreSQL the server's work for them) took both cores of a 2-core
// machine for the next 100–200 ms, and the terminal drew the frame after
// them. On a million reservations in tmux (measure-first.sh, the binaries
// with and without the wait alternating; docs/large.md): the first frame
// on PostgreSQL 286–374 ms against 352–479 ms, and 399–489 against
// 519–721 in a busier minute; on bbolt 390–545 ms against 445–534. The
// tabs behind it have their rows 150 ms later, while nobody looks at them
// yet.
const firstFrameSettle = 150 * time.Millisecond

// firstPageAnswered gives out the reads the first load kept back
// (afterFirstPage) once the reservations list has had its first answer,
// after firstFrameSettle.
func (a *App) firstPageAnswered() tea.Cmd {
	if len(a.afterFirstPage) == 0 || !a.tabs[TabReservations].(*views.Reservations).Answered() {
		return nil
	}
	cmds := a.afterFirstPage
	a.afterFirstPage = nil
	if a.cfg.NoFirstFrameSettle {
		return tea.Batch(cmds...)
	}
	return a.vctx.After(firstFrameSettle, func(time.Time) tea.Msg { return tea.BatchMsg(cmds) })
}

// attentionCap bounds the reservations of each kind the attention tab
// reads (open ones near or past their window's end, of each state; order
// mismatches): the oldest first, which need a person soonest. A shop that
// ships late has thousands near their window's end and one that never
// sends its orders makes every reservation a mismatch; the tab's count is
// then a floor ("1000+"). Each row is a record read at random: on a
// million reservations 5,000 took 386 ms and mapped 362 MB of the file on
// bbolt, 0.8 s on PostgreSQL (5.8 s from a cold cache). Counting the rest
// instead of reading them took longer still (bbolt walks a state index
// range of 319,000 rows in 426 ms, PostgreSQL fetches each counted row).
const attentionCap = 500

// attentionSummaries reads the reservations the attention tab looks at:
// the open ones near the end of their shipment window (of each state
// oldest first, until one has more days left) and the order mismatches,
// up to attentionCap of each, and what the cap left out (the tab then
// shows its count as a floor).
func attentionSummaries(ctx context.Context, st Store, now time.Time) ([]store.Summary, views.AttentionBeyond, error) {
	var out []store.Summary
	var beyond views.AttentionBeyond
	for _, state := range []store.State{store.StateReserved, store.StatePartlyCaptured} {
		// One more than the cap: it says what the cap left out.
		p, err := st.ReservationPage(ctx, store.PageQuery{State: state, Sort: store.SortCreated, Limit: attentionCap + 1})
		if err != nil {
			return nil, beyond, err
		}
		for i, r := range p.Rows {
			if r.Summary.DaysLeft(now) > views.AttentionDaysLeft {
				break
			}
			if i == attentionCap {
				if beyond.Created.IsZero() || r.Summary.Created.Before(beyond.Created) {
					beyond.Created = r.Summary.Created
				}
				break
			}
			out = append(out, r.Summary)
		}
	}
	p, err := st.ReservationPage(ctx, store.PageQuery{State: store.StateOrderMissing, Sort: store.SortCreated, Limit: attentionCap})
	if err != nil {
		return nil, beyond, err
	}
	for _, r := range p.Rows {
		out = append(out, r.Summary)
	}
	beyond.Orders = p.More
	return out, beyond, nil
}

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// attentionGiftCap bounds the gift card payments of each kind the
// attention tab reads: a group's unpaid rest is made from its payments.
const attentionGiftCap = 5000

// attentionGiftCards reads the gift card payments the attention tab
// looks at (an unpaid remainder), newest first, attentionGiftCap of each
// kind.
func attentionGiftCards(ctx context.Context, st Store) ([]*store.Transaction, error) {
	var out []*store.Transaction
	for _, kind := range []store.Kind{store.KindGiftCardPay, store.KindGiftCardRemainder} {
		p, err := st.TransactionPage(ctx, store.PageQuery{State: store.State(kind), Sort: store.TxSortCreated, Desc: true, Limit: attentionGiftCap})
		if err != nil {
			return nil, err
		}
		for _, r := range p.Rows {
			out = append(out, r.Tx)
		}
	}
	return out, nil
}

// AttentionSource is the hook for what else needs a person: the order
// intake's orders that arrived without a push and pushes without an
// order. A Store that has it feeds the attention tab.
type AttentionSource interface {
	AttentionRows(now time.Time) ([]views.AttentionRow, error)
}

// failedChangeDays is how long a failed cancel or update stays on the
// attention tab when nothing was done since.
const failedChangeDays = 7

// loadAttention reads the journal for the attention tab: the operations
// whose outcome is unknown, and the cancels and updates that failed in the
// last days and were not done since.
func (a *App) loadAttention() tea.Cmd {
	st, now := a.cfg.Store, a.cfg.Now
	cmd := func() tea.Msg {
		ops, err := st.Ops(a.opsCtx(), store.OpOutcomeUnknown, store.OpFailed)
		if err != nil {
			return views.AttentionOpsMsg{Err: err}
		}
		var out []*store.PendingOp
		for _, op := range ops {
			if op.State == store.OpOutcomeUnknown {
				out = append(out, op)
				continue
			}
			if op.Action != api.ActionCancelReservation && op.Action != api.ActionUpdateReservation {
				continue
			}
			if now().Sub(op.Updated) > failedChangeDays*24*time.Hour {
				continue
			}
			ref := op.ReservationKey
			if ref == "" {
				ref = op.Target
			}
			r, err := st.Reservation(a.opsCtx(), ref)
			if err != nil {
				continue // gone from the cache: nothing to fix here
			}
			if doneSince(r, op) {
				continue
			}
			out = append(out, op)
		}
		msg := views.AttentionOpsMsg{Ops: out}
		// What paydesk reconcile did not match in the last days: the
		// newest entry of each target.
		entries, err := st.Audit(a.opsCtx(), reconcile.ItemScan)
		if err != nil {
			return views.AttentionOpsMsg{Err: err}
		}
		msg.Unreconciled = reconcile.OpenItems(entries, now())
		// Orders refused (409) for other lines in the last days, for a
		// person to compare (a store that keeps none lacks the method).
		if oc, ok := st.(interface {
			OrderConflicts(ctx context.Context, invoice string) ([]*store.Order, error)
		}); ok {
			cs, err := oc.OrderConflicts(a.opsCtx(), "")
			if err != nil {
				return views.AttentionOpsMsg{Err: err}
			}
			for _, o := range cs {
				if now().Sub(o.Received) <= failedChangeDays*24*time.Hour {
					msg.Conflicts = append(msg.Conflicts, o)
				}
			}
		}
		return msg
	}
	src, ok := st.(AttentionSource)
	if !ok {
		return cmd
	}
	return tea.Batch(cmd, func() tea.Msg {
		rows, err := src.AttentionRows(now())
		return views.AttentionExtraMsg{Rows: rows, Err: err}
	})
}

// doneSince reports whether the reservation shows the failed change done
// after all: cancelled, or a later update of the same kind that succeeded.
func doneSince(r *store.Reservation, op *store.PendingOp) bool {
	if op.Action == api.ActionCancelReservation && (r.Cancelled || r.State() == store.StateCancelled || r.State() == store.StateClosed) {
		return true
	}
	for _, rq := range r.Requests {
		if rq.Action == op.Action && rq.Status.IsSuccess() && rq.Status.Time.After(op.Updated) {
			return true
		}
	}
	return false
}

type auditMsg struct {
	entries []store.AuditEntry
	err     error
}

type exchangesMsg struct {
	entries []store.Exchange
	err     error
}

func (a *App) loadCounts(c store.Change) tea.Cmd {
	st := a.cfg.Store
	return func() tea.Msg {
		n, err := st.Counts(a.opsCtx())
		if err != nil {
			return views.StatusMsg{Level: views.LevelError, Text: "cache: " + err.Error()}
		}
		return countsMsg{n}
	}
}

// reloadPages reloads the detail pages that are open.
func (a *App) reloadPages() []tea.Cmd {
	var cmds []tea.Cmd
	for _, st := range a.stacks {
		for _, p := range st {
			switch p := p.(type) {
			case *views.ReservationDetail:
				cmds = append(cmds, a.loadReservation(p.Ref(), false))
			case *views.TransactionDetail:
				cmds = append(cmds, a.loadTransaction(p.Key(), false))
			case *views.Money:
				cmds = append(cmds, a.loadMoney())
			}
		}
	}
	return cmds
}

// loadReservation loads the reservation page's data.
func (a *App) loadReservation(ref string, open bool) tea.Cmd {
	st := a.cfg.Store
	return func() tea.Msg {
		d := views.ReservationDetailMsg{Ref: ref}
		r, err := st.Reservation(a.opsCtx(), ref)
		if err != nil {
			d.Err = err
			return pageMsg{open, d}
		}
		d.Reservation = r
		if d.Transactions, err = st.TransactionsFor(a.opsCtx(), r.Key); err != nil {
			d.Err = err
		}
		if d.Pushes, err = st.PushesForReservation(a.opsCtx(), r.Key); err != nil && d.Err == nil {
			d.Err = err
		}
		ops, err := st.Ops(a.opsCtx(), store.OpPending, store.OpSent, store.OpOutcomeUnknown)
		if err != nil && d.Err == nil {
			d.Err = err
		}
		for _, op := range ops {
			if op.ReservationKey == r.Key || (r.ReservationNumber != "" && op.Target == r.ReservationNumber) {
				d.Ops = append(d.Ops, op)
			}
		}
		// Orders refused for other lines under this invoice, for the
		// operator to compare (a store that keeps none lacks the method).
		if oc, ok := st.(interface {
			OrderConflicts(ctx context.Context, invoice string) ([]*store.Order, error)
		}); ok && r.Invoice != "" {
			if d.Conflicts, err = oc.OrderConflicts(a.opsCtx(), r.Invoice); err != nil && d.Err == nil {
				d.Err = err
			}
		}
		return pageMsg{open, d}
	}
}

// loadTransaction loads the transaction page's data with its links.
func (a *App) loadTransaction(key string, open bool) tea.Cmd {
	st := a.cfg.Store
	return func() tea.Msg {
		d := views.TransactionDetailMsg{Key: key}
		t, err := st.Transaction(a.opsCtx(), key)
		if err != nil {
			d.Err = err
			return pageMsg{open, d}
		}
		d.Transaction = t
		if t.Original != "" {
			if o, err := st.Transaction(a.opsCtx(), t.Original); err == nil {
				d.Original = o
			}
		}
		for _, rk := range t.Refunds {
			if r, err := st.Transaction(a.opsCtx(), rk); err == nil {
				d.Refunds = append(d.Refunds, r)
			}
		}
		if t.Group != "" {
			group, err := st.TransactionGroup(a.opsCtx(), t.Group)
			if err == nil {
				for _, o := range group {
					if o.Key != t.Key {
						d.Group = append(d.Group, o)
					}
				}
			}
		}
		if d.Pushes, err = st.PushesFor(a.opsCtx(), key); err != nil {
			d.Err = err
		}
		return pageMsg{open, d}
	}
}

// page opens a loaded page or refreshes the open ones.
func (a *App) page(m pageMsg) tea.Cmd {
	if !m.open {
		return a.broadcast(m.data)
	}
	var p views.Screen
	switch d := m.data.(type) {
	case views.ReservationDetailMsg:
		p = views.NewReservationDetail(a.vctx, d)
	case views.TransactionDetailMsg:
		p = views.NewTransactionDetail(a.vctx, d)
	default:
		return nil
	}
	a.openPage(p)
	return nil
}

func (a *App) openPage(p views.Screen) {
	p.SetSize(a.width, a.bodyHeight())
	a.stacks[a.active] = append(a.stacks[a.active], p)
}
