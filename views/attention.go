package views

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"paydesk/api"
	"paydesk/internal/reconcile"
	"paydesk/store"
	"paydesk/ui/theme"
)

// AttentionKind says what needs a person; the order is the urgency.
type AttentionKind int

// Attention kinds, most urgent first.
const (
	// AttnOutcomeUnknown: money may have moved and nobody knows.
	AttnOutcomeUnknown AttentionKind = iota
	// AttnWindowPast: shipped goods may no longer be paid out.
	AttnWindowPast
	// AttnFailedChange: a cancel or update the gateway refused.
	AttnFailedChange
	// AttnWindowClosing: the 14-day window closes within 3 days.
	AttnWindowClosing
	// AttnRejectedPush: a push failed its checks in the last 24 hours.
	AttnRejectedPush
	// AttnDelivery: a shop endpoint fails to take the pushes paydesk
	// forwards (deliveries.go).
	AttnDelivery
	// AttnLearned: paydesk sync learned from the gateway what no push
	// told (a capture, refund or cancel made elsewhere) in the last days.
	AttnLearned
	// AttnReconcile: a statement line or a capture that did not reconcile
	// (paydesk reconcile) in the last days.
	AttnReconcile
	// AttnApproval: a refund waits for a second person's approval.
	AttnApproval
	// AttnRemainder: a gift card payment with a rest still unpaid.
	AttnRemainder
	// AttnOrder: orders without their Reserve push, reservations without
	// their order (from the reservation rows; AttentionExtraMsg may add
	// more).
	AttnOrder
)

func (k AttentionKind) label() (string, string) {
	switch k {
	case AttnOutcomeUnknown:
		return "outcome unknown", theme.PaintWarning
	case AttnWindowPast:
		return "window passed", theme.PaintFailed
	case AttnFailedChange:
		return "change failed", theme.PaintFailed
	case AttnWindowClosing:
		return "window closing", theme.PaintWarning
	case AttnRejectedPush:
		return "push rejected", theme.PaintFailed
	case AttnDelivery:
		return "shop not taking", theme.PaintFailed
	case AttnLearned:
		return "learned by sync", theme.PaintWarning
	case AttnReconcile:
		return "not reconciled", theme.PaintFailed
	case AttnApproval:
		return "needs approval", theme.PaintPending
	case AttnRemainder:
		return "unpaid remainder", theme.PaintPending
	}
	return "order", theme.PaintPending
}

// AttentionRow is one thing that needs a person today.
type AttentionRow struct {
	Kind    AttentionKind
	When    time.Time // the deadline, or when it happened
	Subject string    // reservation number, invoice or key
	What    string    // in plain words, with what to do
	Open    Intent    // where it is fixed
	// Resolve is the operation whose unknown outcome the row is (0 for
	// other rows): o opens its resolve form, as the row's text says.
	Resolve uint64
}

// Attention data messages: the console loads the journal (and, later, the
// order intake's mismatches); the rest comes from the rows the other tabs
// get.
type (
	// AttentionOpsMsg carries the operations that need a person: outcome
	// unknown, and cancels/updates that failed and were not done since.
	AttentionOpsMsg struct {
		Ops []*store.PendingOp
		// Conflicts are orders the intake refused (409) in the last days
		// because their invoice was known with other lines.
		Conflicts []*store.Order
		// Unreconciled are the audit entries (AuditReconcileItem) of the
		// statement lines and captures that did not reconcile in the last
		// days, the newest of each target.
		Unreconciled []store.AuditEntry
		Err          error
	}
	// AttentionExtraMsg carries rows from elsewhere: the hook for orders
	// that arrived without a push and pushes without an order.
	AttentionExtraMsg struct {
		Rows []AttentionRow
		Err  error
	}
)

// windowWarnDays is how close the 14-day window's end must be to show.
const windowWarnDays = 3

// AttentionDaysLeft: a reservation still open with this many days left in
// its window, or fewer, is one the attention tab looks at.
const AttentionDaysLeft = windowWarnDays + 1

// Attention is the attention tab: what needs a person today, most urgent
// first; enter opens the place where each is fixed.
type Attention struct {
	ctx    *Context
	table  *Table
	width  int
	height int

	resv   map[string]store.Summary      // capturable reservations near or past the window's end
	orders map[string]store.Summary      // orders without their push, reservations without their order
	beyond AttentionBeyond               // what the last full read left out (its cap)
	gift   map[string]*store.Transaction // gift card payments by key
	// giftGroups are the gift card payments by group and key; the groups
	// in giftDirty changed since giftRows (a row per group with a rest
	// unpaid) were made: a reload regroups only what it brought, not
	// every gift card payment of the cache for every console.
	giftGroups map[string]map[string]*store.Transaction
	giftDirty  map[string]bool
	giftRows   map[string]AttentionRow
	rejected   map[uint64]*store.PushRecord // rejected pushes of the last day
	learned    map[uint64]*store.PushRecord // pushes sync learned in the last days
	// unreconciled: what paydesk reconcile did not match, from the audit log
	unreconciled []store.AuditEntry
	ops          []*store.PendingOp
	approvals    []*store.Approval // four-eyes requests (approvals.go)
	conflict     []*store.Order
	extra        []AttentionRow
	// delivery are the rows of the failing shop endpoints, made when the
	// deliveries are loaded (DeliveriesMsg).
	delivery []AttentionRow
	err      error

	// rows are the rows as last built, at builtAt; they hold until
	// validUntil, the first instant the clock changes one (a window's
	// day, an order's wait or age, a rejected push's day, a request's
	// expiry); stale says an input changed since. A frame asks for the
	// rows or their count up to three times (tab bar, status line, this
	// tab), every console redraws once a second for its ages, and with a
	// million reservations the tab holds its caps' 1,500 (ui/load.go), and
	// 50 consoles over SSH building a few hundred each second cost the
	// server a fifth of a core at rest. So they are built again only
	// when an input or what the clock decides changed, and the count on
	// the other tabs is counted without building (count).
	rows    []AttentionRow
	builtAt time.Time
	// base are the rows but the remainders, sorted: a change of the
	// remainders alone merges them in again (mergeAttentionRows).
	base       []AttentionRow
	validUntil time.Time
	stale      bool
	// remainders are the gift card rows, which do not depend on the time:
	// built again only when a gift card payment changed (giftStale).
	remainders []AttentionRow
	giftStale  bool
	// builtRemainders are the remainders the rows were built with.
	builtRemainders []AttentionRow
	// counted is the count at countedAt, valid while !countStale.
	counted    int
	countedAt  time.Time
	countStale bool
	// countUntil is when the clock alone may change the count next;
	// textUntil when it changes what View drew last (TextUntil).
	countUntil, textUntil time.Time
}

// NewAttention makes the attention tab.
func NewAttention(ctx *Context) *Attention {
	return &Attention{ctx: ctx, table: NewTable(ctx.Theme, attentionColumns),
		resv: map[string]store.Summary{}, orders: map[string]store.Summary{}, gift: map[string]*store.Transaction{},
		giftGroups: map[string]map[string]*store.Transaction{}, giftDirty: map[string]bool{}, giftRows: map[string]AttentionRow{}, rejected: map[uint64]*store.PushRecord{}, learned: map[uint64]*store.PushRecord{},
		stale: true, giftStale: true, countStale: true}
}

var attentionColumns = []Column{
	{Title: "WHAT", Width: 16},
	{Title: "ABOUT", Width: 15},
	{Title: "WHEN", Width: 12, Drop: 1},
	{Title: "WHAT TO DO", Width: 20, Flex: true},
}

// Title names the tab.
func (a *Attention) Title() string { return "Attention" }

// SetSize sets the screen size.
func (a *Attention) SetSize(w, h int) {
	a.width, a.height = w, h
	a.table.SetSize(w, max(h-1-attentionDetail, 3))
}

// attentionDetail is the room under the table for the selected row in
// full: what happened and what to do, never cut.
const attentionDetail = 5

// Capturing is always false.
func (a *Attention) Capturing() bool { return false }

// Actions are the tab's keys.
func (a *Attention) Actions() []Action {
	k := a.ctx.Keys
	// o (resolve) is named in an unknown outcome's row, not in the footer,
	// which keeps room for the keys of every row.
	return []Action{{Key: k.Open}}
}

// AttentionBeyond is what a read of the attention tab's reservations
// left out at its cap (AttentionReservationsMsg).
type AttentionBeyond struct {
	// Created is the creation time of the oldest reservation near its
	// window's end not read; zero when every one was read.
	Created time.Time
	// Orders: order mismatches were left out.
	Orders bool
}

// more reports whether something left out needs a person at now: a
// reservation not read that is as near its window's end as the rows
// counted, or an order mismatch.
func (b AttentionBeyond) more(now time.Time) bool {
	return b.Orders || (!b.Created.IsZero() && store.Summary{Created: b.Created}.DaysLeft(now) <= windowWarnDays)
}

// CountText is Count for the screen: with a "+" when the rows read were
// capped and more of them need a person ("1000+").
func (a *Attention) CountText() string { return a.openText(a.Count()) }

// Count is how many things need a person now (of the rows read: see
// CountText).
func (a *Attention) Count() int {
	now := a.ctx.Now().Truncate(time.Second)
	if a.countStale || !now.Equal(a.countedAt) {
		a.counted, a.countedAt, a.countStale = a.count(now), now, false
		a.countUntil = a.clockUntil(now)
	}
	return a.counted
}

// CountUntil is the first instant at which the clock alone may change
// Count as last asked for (zero before it was asked for).
func (a *Attention) CountUntil() time.Time { return a.countUntil }

// TextUntil is the first instant at which the clock alone changes what
// View drew last (the rows, their WHEN column, the count); zero before it
// drew.
func (a *Attention) TextUntil() time.Time { return a.textUntil }

// count is len(build()) without building: the same tests, no text.
func (a *Attention) count(now time.Time) int {
	n := len(a.ops) + len(a.conflict) + len(a.unreconciled) + len(a.remainderRows()) + len(a.extra) + len(a.delivery) + len(approvalRows(a.approvals, now))
	for _, s := range a.resv {
		if s.DaysLeft(now) <= windowWarnDays {
			n++
		}
	}
	for _, s := range a.orders {
		if orderDue(s, now) {
			n++
		}
	}
	for _, p := range a.rejected {
		if now.Sub(p.ReceivedAt) < 24*time.Hour {
			n++
		}
	}
	for _, p := range a.learned {
		if now.Sub(p.ReceivedAt) < learnedDays*24*time.Hour {
			n++
		}
	}
	return n
}

// unchangedRow reports whether the summary s, read again, leaves the tab
// as it is: it is where it was (near its window's end, an order
// mismatch, or neither) and reads as it did.
func unchangedRow(s, was store.Summary, inResv bool, wasOrder store.Summary, inOrders bool, now time.Time) bool {
	wantResv := (s.State == store.StateReserved || s.State == store.StatePartlyCaptured) && s.DaysLeft(now) <= windowWarnDays+1
	if wantResv != inResv || orderMismatch(s) != inOrders {
		return false
	}
	return (!inResv || reflect.DeepEqual(was, s)) && (!inOrders || reflect.DeepEqual(wasOrder, s))
}

// changed marks the rows and the count to be made again.
func (a *Attention) changed() { a.stale, a.countStale = true, true }

// Update takes the rows the console loads and keys.
func (a *Attention) Update(msg tea.Msg) tea.Cmd {
	now := a.ctx.Now()
	switch m := msg.(type) {
	case AttentionReservationsMsg:
		if m.Err == nil {
			a.beyond = m.Beyond
		}
		msg = ReservationRowsMsg{Full: true, Rows: m.Rows, Err: m.Err}
	case AttentionTransactionsMsg:
		msg = TransactionRowsMsg{Full: true, Rows: m.Rows, Err: m.Err}
	}
	switch msg := msg.(type) {
	case ReservationRowsMsg:
		if msg.Err != nil {
			return nil
		}
		// A change that neither held nor now holds a row of this tab (a
		// reservation far from its window's end) leaves the rows as built.
		if msg.Full {
			clear(a.resv)
			clear(a.orders)
			a.changed()
		}
		for _, k := range msg.Removed {
			if _, ok := a.orders[k]; ok {
				delete(a.orders, k) // an order's placeholder, replaced by its reservation
				a.changed()
			}
		}
		for _, r := range msg.Rows {
			s := r.Summary
			was, inResv := a.resv[s.Key]
			wasOrder, inOrders := a.orders[s.Key]
			if unchangedRow(s, was, inResv, wasOrder, inOrders, now) {
				// Read again as it was (a push on it changed nothing the
				// tab shows, a stream's reload): the rows hold.
				continue
			}
			if inResv || inOrders {
				delete(a.resv, s.Key)
				delete(a.orders, s.Key)
				a.changed()
			}
			if orderMismatch(s) {
				a.orders[s.Key] = s
				a.changed()
			}
			if (s.State == store.StateReserved || s.State == store.StatePartlyCaptured) && s.DaysLeft(now) <= windowWarnDays+1 {
				a.resv[s.Key] = s // a day's margin: the tab ticks, the rows do not reload
				a.changed()
			}
		}
	case TransactionRowsMsg:
		if msg.Err != nil {
			return nil
		}
		// Only gift card payments make rows here, and only those with a
		// remainder to pay: build compares the remainders before it builds
		// the rows again (a stream of gift card payments paid in full
		// leaves them as they are).
		if msg.Full {
			clear(a.gift)
			clear(a.giftGroups)
			clear(a.giftDirty)
			clear(a.giftRows)
			a.giftStale, a.countStale = true, true
		}
		for _, r := range msg.Rows {
			if t := r.Tx; t.Kind == store.KindGiftCardPay || t.Kind == store.KindGiftCardRemainder {
				if old := a.gift[t.Key]; old != nil {
					delete(a.giftGroups[giftGroup(old)], t.Key)
					a.giftDirty[giftGroup(old)] = true
				}
				a.gift[t.Key] = t
				g := giftGroup(t)
				if a.giftGroups[g] == nil {
					a.giftGroups[g] = map[string]*store.Transaction{}
				}
				a.giftGroups[g][t.Key] = t
				a.giftDirty[g] = true
				a.giftStale, a.countStale = true, true
			}
		}
	case PushRowsMsg:
		if msg.Err != nil {
			return nil
		}
		// Only rejected pushes and what sync learned make rows here: a
		// stream of accepted pushes leaves them as built.
		if msg.Full {
			clear(a.rejected)
			clear(a.learned)
			a.changed()
		}
		for _, r := range msg.Rows {
			if p := r.Push; p.Rejected && now.Sub(p.ReceivedAt) < 24*time.Hour {
				a.rejected[p.ID] = p
				a.changed()
			}
			if p := r.Push; p.LearnedBySync() && p.Applied && now.Sub(p.ReceivedAt) < learnedDays*24*time.Hour {
				a.learned[p.ID] = p
				a.changed()
			}
		}
	// The journal, the requests, the deliveries and the rows from
	// elsewhere are read again with many reloads (every console's, while
	// pushes stream in): read as they were, they leave the rows as built.
	case AttentionOpsMsg:
		if !reflect.DeepEqual(a.ops, msg.Ops) || !reflect.DeepEqual(a.conflict, msg.Conflicts) ||
			!reflect.DeepEqual(a.unreconciled, msg.Unreconciled) || !reflect.DeepEqual(a.err, msg.Err) {
			a.ops, a.conflict, a.unreconciled, a.err = msg.Ops, msg.Conflicts, msg.Unreconciled, msg.Err
			a.changed()
		}
	case ApprovalsMsg:
		if msg.Err == nil && !reflect.DeepEqual(a.approvals, msg.List) {
			a.approvals = msg.List
			a.changed()
		}
	case DeliveriesMsg:
		if msg.Err != nil {
			break
		}
		if rows := deliveryRows(msg.List); !reflect.DeepEqual(a.delivery, rows) {
			a.delivery = rows
			a.changed()
		}
	case AttentionExtraMsg:
		if msg.Err == nil && !reflect.DeepEqual(a.extra, msg.Rows) {
			a.extra = msg.Rows
			a.changed()
		}
	case tea.MouseWheelMsg:
		a.table.HandleMouse(msg)
	case tea.KeyPressMsg:
		k := a.ctx.Keys
		if a.table.HandleKey(msg, keyMapNav{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}) {
			return nil
		}
		if keyIs(msg, k.Open) {
			rows := a.build()
			if i := a.table.Cursor(); i < len(rows) && rows[i].Open != nil {
				return send(rows[i].Open)
			}
		}
		// An unknown outcome's row says "resolve it (o)": o opens its
		// resolve form here, where enter opens its reservation.
		if keyIs(msg, k.Resolve) {
			rows := a.build()
			if i := a.table.Cursor(); i < len(rows) && rows[i].Resolve != 0 {
				return send(ResolveIntent{OpID: rows[i].Resolve})
			}
		}
	}
	return nil
}

// build makes the rows at the console's time, most urgent first (the
// rows of the last build while nothing changed within the second).
func (a *Attention) build() []AttentionRow {
	now := a.ctx.Now()
	if !a.stale && !now.Before(a.builtAt) && now.Before(a.validUntil) {
		// Gift card payments changed (the remainders were built again,
		// here or for the count): the rows change only if the remainders
		// did, and then only they are merged in again — a stream of gift
		// card payments with a rest to pay made every console build
		// every row of the tab at every reload.
		rem := a.remainderRows()
		same := len(rem) == len(a.builtRemainders) && (len(rem) == 0 || &rem[0] == &a.builtRemainders[0])
		switch {
		case same:
		case reflect.DeepEqual(rem, a.builtRemainders):
			a.builtRemainders = rem
		default:
			a.builtRemainders = rem
			a.rows = mergeAttentionRows(a.base, rem)
		}
		return a.rows
	}
	a.builtAt, a.stale = now, false
	a.validUntil = a.clockUntil(now)
	var rows []AttentionRow
	for _, op := range a.ops {
		rows = append(rows, opRow(op))
	}
	for _, s := range a.resv {
		d := s.DaysLeft(now)
		if d > windowWarnDays {
			continue
		}
		end := s.Created.AddDate(0, 0, 14)
		row := AttentionRow{Kind: AttnWindowClosing, When: end, Subject: reservationRef(s), Open: OpenReservation{Key: s.Key}}
		left := money(s.Remaining) + " " + clean(s.Currency)
		switch {
		case d < 0:
			row.Kind = AttnWindowPast
			row.What = fmt.Sprintf("14-day window passed %d day(s) ago; %s not shipped: capture (the payout may be revoked) or cancel", -d, left)
		case d == 0:
			row.What = fmt.Sprintf("14-day window ends today; %s not shipped: capture or cancel", left)
		default:
			row.What = fmt.Sprintf("14-day window ends in %d day(s); %s not shipped: capture or cancel", d, left)
		}
		if n := clean(s.Customer); n != "" {
			row.What += " · " + n
		}
		rows = append(rows, row)
	}
	for _, s := range a.orders {
		if row, ok := orderRow(s, now); ok {
			rows = append(rows, row)
		}
	}
	for _, o := range a.conflict {
		rows = append(rows, conflictRow(o))
	}
	for _, e := range a.unreconciled {
		rows = append(rows, AttentionRow{Kind: AttnReconcile, When: e.Time, Subject: shortKey(clean(e.Target)),
			What: clean(e.Result) + ": " + clean(e.Reason) + " · compare the statement with the ledger"})
	}
	for _, p := range a.rejected {
		if now.Sub(p.ReceivedAt) >= 24*time.Hour {
			continue
		}
		subj := clean(p.Key)
		if subj == "" {
			subj = clean(p.RemoteAddr)
		}
		rows = append(rows, AttentionRow{Kind: AttnRejectedPush, When: p.ReceivedAt, Subject: shortKey(subj),
			What: "rejected: " + clean(p.Reason) + " · check the sender and the credentials", Open: OpenPush{Push: p}})
	}
	for _, p := range a.learned {
		if now.Sub(p.ReceivedAt) >= learnedDays*24*time.Hour {
			continue
		}
		rows = append(rows, learnedRow(p))
	}
	rows = append(rows, approvalRows(a.approvals, now)...)
	rows = append(rows, a.delivery...)
	rows = append(rows, a.extra...)
	slices.SortStableFunc(rows, compareAttentionRows)
	a.base = rows
	a.builtRemainders = a.remainderRows()
	a.rows = mergeAttentionRows(a.base, a.builtRemainders)
	return a.rows
}

// compareAttentionRows is the tab's order: by kind, most urgent first,
// then by time and subject.
func compareAttentionRows(x, y AttentionRow) int {
	if x.Kind != y.Kind {
		return int(x.Kind) - int(y.Kind)
	}
	if c := x.When.Compare(y.When); c != 0 {
		return c
	}
	return strings.Compare(x.Subject, y.Subject)
}

// mergeAttentionRows merges the remainders (sorted) into the other rows
// (sorted), into a new slice. Only a row of a remainder's kind can tie with
// a remainder (the rows from elsewhere, which came after them): the
// remainder goes first, as in one stable sort of them all.
func mergeAttentionRows(base, rem []AttentionRow) []AttentionRow {
	out := make([]AttentionRow, 0, len(base)+len(rem))
	i, j := 0, 0
	for i < len(base) && j < len(rem) {
		if compareAttentionRows(rem[j], base[i]) <= 0 {
			out = append(out, rem[j])
			j++
		} else {
			out = append(out, base[i])
			i++
		}
	}
	out = append(out, base[i:]...)
	return append(out, rem[j:]...)
}

// clockUntil is the first instant after now at which the clock alone
// changes a row or the count (at most a day ahead): each input that
// depends on the time brings it forward.
func (a *Attention) clockUntil(now time.Time) time.Time {
	until := now.Add(24 * time.Hour)
	upTo := func(t time.Time) {
		if t.After(now) && t.Before(until) {
			until = t
		}
	}
	if len(a.resv) > 0 {
		// Days left count calendar days of now's zone (Summary.DaysLeft).
		y, m, d := now.Date()
		upTo(time.Date(y, m, d+1, 0, 0, 0, 0, now.Location()))
	}
	for _, s := range a.orders {
		if !strings.HasPrefix(s.Key, store.PlaceholderPrefix) {
			continue // due at once, its text timeless
		}
		upTo(s.Created.Add(orderWait))
		upTo(ageChanges(s.Created, now)) // its text says how long it waits
	}
	for _, p := range a.rejected {
		upTo(p.ReceivedAt.Add(24 * time.Hour))
	}
	for _, p := range a.learned {
		upTo(p.ReceivedAt.Add(learnedDays * 24 * time.Hour))
	}
	for _, ap := range a.approvals {
		if ap.State == store.ApprovalPending {
			upTo(ap.Expires)
		}
	}
	return until
}

// AuditReconcileItem is the audit action paydesk reconcile records for a
// statement line or a capture that did not match; the Attention tab shows
// those still open (reconcile.OpenItems).
const AuditReconcileItem = reconcile.ItemAction

// learnedDays is how long what sync learned stays on the Attention tab.
const learnedDays = 7

// learnedRow says what paydesk was not told: a person checks that the
// capture, refund or cancel made elsewhere is what the shop meant.
func learnedRow(p *store.PushRecord) AttentionRow {
	what := clean(p.Kind) // a data request's action: Reserve, CancelReservation, …
	if p.Envelope == api.EnvelopeTransaction {
		what = kindText(store.KindOf(p.Kind))
	}
	if p.AmountShown() {
		what += " " + money(p.Amount) + " " + clean(p.Currency)
	}
	what += " " + p.Status.Text() + " happened at the gateway and no push told paydesk (learned by sync) · check it is what the shop meant"
	subj := clean(p.Invoice)
	if subj == "" {
		subj = clean(p.Key)
	}
	return AttentionRow{Kind: AttnLearned, When: p.ReceivedAt, Subject: shortKey(subj), What: what, Open: OpenPush{Push: p}}
}

func reservationRef(s store.Summary) string {
	if s.ReservationNumber != "" {
		return clean(s.ReservationNumber)
	}
	return clean(s.Invoice)
}

// opRow is an operation that needs a person.
func opRow(op *store.PendingOp) AttentionRow {
	amount := ""
	if !op.Amount.IsZero() {
		amount = " " + money(op.Amount) + " " + clean(op.Currency)
	}
	row := AttentionRow{Kind: AttnOutcomeUnknown, When: op.Updated, Subject: clean(op.Target), Open: ResolveIntent{OpID: op.ID}}
	if op.ReservationKey != "" {
		row.Open = OpenReservation{Key: op.ReservationKey}
	}
	if row.When.IsZero() {
		row.When = op.Created
	}
	if op.State == store.OpOutcomeUnknown {
		row.Resolve = op.ID
		row.What = fmt.Sprintf("%s%s: outcome unknown (operation %d); check the gateway, then resolve it (o)", op.Action, amount, op.ID)
		return row
	}
	row.Kind = AttnFailedChange
	what := "cancel"
	if op.Action == api.ActionUpdateReservation {
		what = "update"
	}
	row.What = fmt.Sprintf("the %s failed: %s; try again or call the provider", what, clean(op.Error))
	if op.ReservationKey == "" {
		row.Open = OpenReservation{Key: op.Target}
	}
	return row
}

// remainderRows are the partial gift card payments whose rest is unpaid
// (built again only after a gift card payment changed).
func (a *Attention) remainderRows() []AttentionRow {
	if !a.giftStale {
		return a.remainders
	}
	a.remainders, a.giftStale = a.buildRemainders(), false
	return a.remainders
}

// giftGroup is the group a gift card payment is paid in: its own key
// when it stands alone.
func giftGroup(t *store.Transaction) string {
	if t.Group == "" {
		return t.Key
	}
	return t.Group
}

func (a *Attention) buildRemainders() []AttentionRow {
	for g := range a.giftDirty {
		delete(a.giftRows, g)
		members := a.giftGroups[g]
		if len(members) == 0 {
			delete(a.giftGroups, g)
			continue
		}
		ts := slices.Collect(maps.Values(members))
		rest := UnpaidRemainder(ts[0], ts[1:])
		if !rest.IsPositive() {
			continue
		}
		first := ts[0]
		for _, t := range ts {
			if t.Created.Before(first.Created) {
				first = t
			}
		}
		a.giftRows[g] = AttentionRow{Kind: AttnRemainder, When: first.Created, Subject: clean(first.Invoice),
			What: fmt.Sprintf("%s %s of a gift card payment still to pay (%s): pay the remainder (p) or refund what was paid", money(rest),
				clean(first.Currency), clean(first.ServiceCode)),
			Open: OpenTransaction{Key: first.Key}}
	}
	clear(a.giftDirty)
	rows := slices.Collect(maps.Values(a.giftRows))
	// In a fixed order (the groups are a map), so that build can
	// tell the same remainders from new ones.
	slices.SortFunc(rows, func(x, y AttentionRow) int {
		if c := x.When.Compare(y.When); c != 0 {
			return c
		}
		if c := strings.Compare(x.Subject, y.Subject); c != 0 {
			return c
		}
		return strings.Compare(x.What, y.What)
	})
	return rows
}

// openText is n, with a "+" when the rows read were capped and what they
// left out needs a person now (the tab bar, the status line, the header).
func (a *Attention) openText(n int) string {
	if a.beyond.more(a.ctx.Now()) {
		return strconv.Itoa(n) + "+"
	}
	return strconv.Itoa(n)
}

// View draws the tab.
func (a *Attention) View() string {
	t := a.ctx.Theme
	rows := a.build()
	a.textUntil = a.validUntil
	a.table.SetLen(len(rows))
	info := spread(t.Muted.Render("What needs a person today, most urgent first · enter opens where it is fixed"),
		t.Muted.Render(a.openText(len(rows))+" open"), a.width)
	if a.err != nil {
		info = spread(t.Failed.Render("Could not read the journal: "+clean(a.err.Error())), "", a.width)
	}
	if len(rows) == 0 {
		return info + "\n" + padLines("\n  "+t.OK.Render("Nothing needs attention.")+"\n  "+t.Muted.Render(
			"Reservations near the end of their 14-day window, unknown outcomes, rejected pushes, unpaid gift card"+
				"\n  remainders and failed cancels or updates show up here."), a.height-1)
	}
	now := a.ctx.Now()
	// The rows hold until validUntil; their WHEN column may change first.
	until := newTextUntil(now)
	until.note(a.validUntil)
	body := a.table.View(func(i int, out []Cell) {
		r := rows[i]
		label, paint := r.Kind.label()
		out[0] = Cell{Text: label, Paint: paint}
		out[1] = Cell{Text: r.Subject}
		out[2] = Cell{Text: whenText(r, now), Paint: theme.PaintMuted}
		out[3] = Cell{Text: r.What}
		if w := whenChanges(r, now); !w.IsZero() {
			until.note(w)
		}
	})
	a.textUntil = until.at
	sel := rows[min(a.table.Cursor(), len(rows)-1)]
	label, _ := sel.Kind.label()
	detail := t.Muted.Render(strings.Repeat("─", max(a.width, 1))) + "\n" +
		t.Accent.Render(label+" · "+sel.Subject) + "\n" + wrapText(sel.What, a.width) + "\n" + t.Muted.Render("enter opens where it is fixed")
	used := strings.Count(body, "\n") + 1
	return info + "\n" + body + "\n" + padLines(detail, a.height-1-used)
}

// wrapText wraps at spaces to w cells.
func wrapText(s string, w int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case width(line)+1+width(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return strings.Join(append(lines, line), "\n")
}

// whenText is a deadline as "in 2d" / "2d ago", an event as its age.
func whenText(r AttentionRow, now time.Time) string {
	if r.When.IsZero() {
		return ""
	}
	if r.When.After(now) {
		return "in " + age(now, r.When)
	}
	return age(r.When, now) + " ago"
}

// orderWait is how long an order may wait for its Reserve push before it
// asks for a look: a customer who left the checkout, or a push that went
// elsewhere.
const orderWait = 30 * time.Minute

// orderMismatch reports a reservation whose order and push have not met:
// an order still waiting for its Reserve push (a placeholder), or a
// reservation that can still be captured but whose order never arrived.
func orderMismatch(s store.Summary) bool {
	if strings.HasPrefix(s.Key, store.PlaceholderPrefix) {
		return true
	}
	return s.LinesUnknown && (s.State == store.StateReserved || s.State == store.StatePartlyCaptured)
}

// orderDue reports whether an order mismatch shows: an order without its
// push once its wait is over, a reservation without its order at once.
func orderDue(s store.Summary, now time.Time) bool {
	return !strings.HasPrefix(s.Key, store.PlaceholderPrefix) || now.Sub(s.Created) >= orderWait
}

// conflictRow is the attention row of an order the intake refused (409)
// because its invoice was known with other lines: both are kept, and a
// person compares them.
func conflictRow(o *store.Order) AttentionRow {
	return AttentionRow{Kind: AttnOrder, When: o.Received, Subject: clean(o.Invoice), Open: OpenReservation{Key: o.Invoice},
		What: fmt.Sprintf("another order for this invoice was refused (409) from %s, %s %s with other lines: compare them on the reservation and correct the shop's order",
			clean(o.Source), money(o.Amount()), clean(o.Currency))}
}

// orderRow is the attention row of an order mismatch; ok is false while a
// new order is still within its wait.
func orderRow(s store.Summary, now time.Time) (AttentionRow, bool) {
	row := AttentionRow{Kind: AttnOrder, When: s.Created, Subject: clean(s.Invoice), Open: OpenReservation{Key: s.Key}}
	if !orderDue(s, now) {
		return row, false
	}
	if strings.HasPrefix(s.Key, store.PlaceholderPrefix) {
		row.What = fmt.Sprintf("order of %s %s arrived %s ago, its Reserve push has not: the customer may have left the checkout, or pushes go elsewhere",
			money(s.Amount), clean(s.Currency), age(s.Created, now))
	} else {
		row.Subject = reservationRef(s)
		row.What = "reserved, but its order never reached paydesk: have the shop post it to the intake or run paydesk import; or capture it in full by amount"
	}
	if n := clean(s.Customer); n != "" {
		row.What += " · " + n
	}
	return row, true
}
