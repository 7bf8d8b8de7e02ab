package batch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/ops"
	"paydesk/store"
)

// The rules a pre-flight refuses by. A reservation with any refused row is
// refused whole: sending the other rows would capture a wrong amount.
const (
	RuleBadRow        = "bad-row"         // the row cannot be read as written
	RuleUnknown       = "unknown-invoice" // no reservation by that invoice or number
	RuleArticle       = "unknown-article" // not an article line of the reservation
	RuleOverCapture   = "over-capture"    // more units than remain to capture
	RuleWindow        = "window-closed"   // past the 14-day shipment window, without --late
	RuleState         = "state"           // the reservation cannot be captured (cancelled, captured, open operation …)
	RuleLineSum       = "line-sum"        // the manifest's amount does not match price × quantity, or the lines add up to 0 or less
	RuleListedTwice   = "listed-twice"    // cancel-rest: the same reservation named again
	RuleRepeatedRow   = "repeated-row"    // the same article, parcel and tracking of a reservation again
	RuleNothingCapted = "nothing-shipped" // cancel-rest of a reservation with nothing captured would release it whole
)

// Refusal is a row (or a reservation) refused and the rule it broke.
type Refusal struct {
	Line        int    `json:"line"`
	Ref         string `json:"ref"`
	Article     string `json:"article,omitempty"`
	Reservation string `json:"reservation,omitempty"`
	Rule        string `json:"rule"`
	Message     string `json:"message"`
}

// Item is one reservation's share of the manifest: one capture (or one
// cancel of the rest).
type Item struct {
	Reservation string // reservation number
	Invoice     string
	Currency    string
	Customer    string
	Rows        []int
	Lines       []api.CaptureLine // units per article, in the reservation's line order
	Amount      decimal.Decimal
	Full        bool // takes everything that remains
	DaysLeft    int
	PastWindow  bool
	Note        string // parcels and tracking numbers
	Parcels     []store.Parcel
}

// Total is an amount in one currency.
type Total struct {
	Currency string          `json:"currency"`
	Amount   decimal.Decimal `json:"amount"`
}

// Preflight is what a batch would do, checked against the cache before
// anything is sent.
type Preflight struct {
	Kind    string // store.BatchCapture or store.BatchCancelRest
	Source  string
	Hash    string
	Rows    int
	Items   []Item
	Refused []Refusal
	// RefusedReservations counts reservations refused whole (some rows of
	// them may be fine; see Refused).
	RefusedReservations int
	RefusedRows         int
	Totals              []Total
	Ignored             []string
	Late                bool
	Took                time.Duration

	refusedNames map[string]bool // reservations (keys) and unknown references refused
}

// Lookup finds a reservation by invoice, reservation number or key;
// *store.DB's Reservation is one. It returns an error wrapping
// store.ErrNotFound when there is none.
type Lookup func(ref string) (*store.Reservation, error)

// Finder finds many references at once (those not found are missing from
// the map); Ledgers is the fast one of a cache, One adapts a Lookup.
type Finder func(refs []string) (map[string]*store.Reservation, error)

// One finds references one by one with lookup.
func One(lookup Lookup) Finder {
	return func(refs []string) (map[string]*store.Reservation, error) {
		out := make(map[string]*store.Reservation, len(refs))
		for _, ref := range refs {
			r, err := lookup(ref)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return nil, err
			default:
				out[ref] = r
			}
		}
		return out, nil
	}
}

// LedgerReader is what Ledgers needs of the cache; *store.DB is one.
type LedgerReader interface {
	ReservationLedgers(ctx context.Context, refs []string) (map[string]*store.Reservation, error)
}

// Ledgers finds references in the cache with their ledgers only, in
// parallel read transactions (a 100,000-row manifest names tens of
// thousands of reservations).
func Ledgers(db LedgerReader) Finder {
	// A Finder has no context (the pre-flight is a plan made from the
	// cache alone, in seconds at most): its reads run to the end.
	return func(refs []string) (map[string]*store.Reservation, error) {
		ctx := context.Background()
		n := runtime.GOMAXPROCS(0)
		if n > 8 {
			n = 8
		}
		if len(refs) < 2000 || n < 2 {
			return db.ReservationLedgers(ctx, refs)
		}
		parts := make([]map[string]*store.Reservation, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		size := (len(refs) + n - 1) / n
		for i := range n {
			lo, hi := min(i*size, len(refs)), min((i+1)*size, len(refs))
			wg.Add(1)
			go func() {
				defer wg.Done()
				parts[i], errs[i] = db.ReservationLedgers(ctx, refs[lo:hi])
			}()
		}
		wg.Wait()
		out := make(map[string]*store.Reservation, len(refs))
		for i := range n {
			if errs[i] != nil {
				return nil, errs[i]
			}
			for k, v := range parts[i] {
				out[k] = v
			}
		}
		return out, nil
	}
}

// distinctRefs are the rows' references, once each, in order.
func distinctRefs(rows []Row) []string {
	seen := make(map[string]bool, len(rows)/2)
	var out []string
	for _, r := range rows {
		if r.Problem == "" && !seen[r.Ref] {
			seen[r.Ref] = true
			out = append(out, r.Ref)
		}
	}
	return out
}

type group struct {
	r    *store.Reservation
	rows []Row
}

// PlanCapture checks a manifest against the cache: every row set per
// reservation becomes one capture, or is refused with its rows and rule.
func PlanCapture(m *Manifest, find Finder, now time.Time, late bool) *Preflight {
	start := time.Now()
	pf := &Preflight{Kind: store.BatchCapture, Hash: m.Hash, Rows: len(m.Rows), Late: late, Ignored: m.Ignored}
	byRef, findErr := find(distinctRefs(m.Rows))
	groups := map[string]*group{}
	var order []string
	for _, row := range m.Rows {
		if row.Problem != "" {
			pf.refuse(row, "", RuleBadRow, row.Problem)
			continue
		}
		r := byRef[row.Ref]
		if r == nil {
			msg := "no reservation with invoice or number " + strconv.Quote(row.Ref) + " in the cache"
			if findErr != nil {
				msg = findErr.Error()
			}
			pf.refuse(row, "", RuleUnknown, msg)
			continue
		}
		g := groups[r.Key]
		if g == nil {
			g = &group{r: r}
			groups[r.Key] = g
			order = append(order, r.Key)
		}
		g.rows = append(g.rows, row)
	}
	// A bad row names an invoice too: its reservation is refused whole.
	badRefs := map[string]bool{}
	for _, f := range pf.Refused {
		if f.Rule == RuleBadRow && f.Ref != "" {
			badRefs[f.Ref] = true
		}
	}
	totals := map[string]decimal.Decimal{}
	for _, k := range order {
		g := groups[k]
		it, refusals := planGroup(g, now, late)
		if it != nil {
			for _, row := range g.rows {
				if badRefs[row.Ref] {
					refusals = append(refusals, Refusal{Line: row.Line, Ref: row.Ref, Reservation: g.r.ReservationNumber, Rule: RuleBadRow,
						Message: "another row of this invoice cannot be read; its rows are refused together"})
					break
				}
			}
		}
		for _, row := range g.rows {
			delete(badRefs, row.Ref) // counted with its reservation
		}
		if len(refusals) > 0 {
			pf.Refused = append(pf.Refused, refusals...)
			pf.RefusedReservations++
			pf.RefusedRows += len(g.rows)
			continue
		}
		pf.Items = append(pf.Items, *it)
		totals[it.Currency] = totals[it.Currency].Add(it.Amount)
	}
	// Bad rows whose invoice is otherwise unknown or absent count once per
	// reference.
	pf.RefusedReservations += len(badRefs)
	pf.finish(totals, start)
	return pf
}

// refuse refuses a row that belongs to no known reservation: an unknown
// reference counts as one refused reservation however many rows name it.
func (pf *Preflight) refuse(row Row, reservation, rule, msg string) {
	pf.Refused = append(pf.Refused, Refusal{Line: row.Line, Ref: row.Ref, Article: row.Article, Reservation: reservation, Rule: rule, Message: msg})
	pf.RefusedRows++
	if rule == RuleUnknown {
		if pf.refusedNames == nil {
			pf.refusedNames = map[string]bool{}
		}
		if !pf.refusedNames[row.Ref] {
			pf.refusedNames[row.Ref] = true
			pf.RefusedReservations++
		}
	}
}

func (pf *Preflight) finish(totals map[string]decimal.Decimal, start time.Time) {
	for c, a := range totals {
		pf.Totals = append(pf.Totals, Total{Currency: c, Amount: a})
	}
	sort.Slice(pf.Totals, func(i, j int) bool { return pf.Totals[i].Currency < pf.Totals[j].Currency })
	sort.SliceStable(pf.Refused, func(i, j int) bool { return pf.Refused[i].Line < pf.Refused[j].Line })
	pf.Took = time.Since(start)
}

// planGroup turns one reservation's rows into a capture, or the refusals.
func planGroup(g *group, now time.Time, late bool) (*Item, []Refusal) {
	r := g.r
	num := r.ReservationNumber
	var out []Refusal
	refuse := func(row Row, rule, msg string) {
		out = append(out, Refusal{Line: row.Line, Ref: row.Ref, Article: row.Article, Reservation: num, Rule: rule, Message: msg})
	}
	first := g.rows[0]
	if err := stateProblem(r); err != "" {
		refuse(first, RuleState, err)
		return nil, out
	}
	if d := r.DaysLeft(now); d < 0 && !late {
		refuse(first, RuleWindow, fmt.Sprintf("reservation %s is %d days past the 14-day shipment window; the provider may revoke the payout (pass --late to capture anyway)", num, -d))
		return nil, out
	}
	lineOf := make(map[string]int, len(r.Lines))
	for i, l := range r.Lines {
		lineOf[l.ArticleNumber] = i
	}
	left := r.Capturable()
	units := map[string]int{}
	rowsOf := map[string][]int{}
	var parcels []string
	var shipped []store.Parcel
	seenParcel := map[string]bool{}
	// A parcel leaves once: the same article in the same parcel with the
	// same tracking number twice is a row repeated (an export run twice, a
	// copy and paste), not two units; it is refused, never summed.
	type shipKey struct{ article, parcel, tracking string }
	firstRow := map[shipKey]int{}
	for _, row := range g.rows {
		if row.Parcel == "" && row.Tracking == "" {
			continue
		}
		k := shipKey{row.Article, row.Parcel, row.Tracking}
		if l, ok := firstRow[k]; ok {
			refuse(row, RuleRepeatedRow, fmt.Sprintf("line %d repeats line %d: article %s in %s of reservation %s again; a parcel ships once (remove one of the two lines)",
				row.Line, l, row.Article, row.parcel().String(), num))
			continue
		}
		firstRow[k] = row.Line
	}
	for _, row := range g.rows {
		i, ok := lineOf[row.Article]
		if !ok {
			refuse(row, RuleArticle, fmt.Sprintf("%s is not an article of reservation %s (invoice %s)", row.Article, num, r.Invoice))
			continue
		}
		if row.Amount != nil {
			want := r.Lines[i].Price.Mul(decimal.NewFromInt(int64(row.Quantity)))
			if !row.Amount.Equal(want) {
				refuse(row, RuleLineSum, fmt.Sprintf("the manifest says %s for %d × %s; the reservation's price makes %s",
					row.Amount.StringFixed(2), row.Quantity, r.Lines[i].Price.StringFixed(2), want.StringFixed(2)))
			}
		}
		units[row.Article] += row.Quantity
		rowsOf[row.Article] = append(rowsOf[row.Article], row.Line)
		if p := row.parcel().String(); p != "" && !seenParcel[p] {
			seenParcel[p] = true
			if len(parcels) < maxListed {
				parcels = append(parcels, p)
			}
			shipped = append(shipped, row.parcel())
		}
	}
	for a, n := range units {
		i := lineOf[a]
		if n > left[i] {
			l := r.Lines[i]
			rows := rowsOf[a]
			refuse(Row{Line: rows[len(rows)-1], Ref: first.Ref, Article: a}, RuleOverCapture,
				fmt.Sprintf("%d units of %s shipped (lines %s), only %d left to capture (reserved %d, captured %d, cancelled %d)",
					n, a, joinInts(rows), left[i], l.Reserved, l.Captured, l.Cancelled))
		}
	}
	if len(out) > 0 {
		return nil, out
	}
	plan, err := ops.PlanCapture(r, units, now)
	if err != nil {
		rule := RuleState
		var ve *api.ValidationError
		if errors.As(err, &ve) {
			rule = RuleLineSum
		}
		refuse(first, rule, err.Error())
		return nil, out
	}
	it := &Item{Reservation: num, Invoice: r.Invoice, Currency: r.Currency, Customer: r.CustomerName,
		Amount: plan.Amount, Full: plan.Full, DaysLeft: plan.DaysLeft, PastWindow: plan.PastWindow}
	for _, row := range g.rows {
		it.Rows = append(it.Rows, row.Line)
	}
	for _, l := range r.Lines {
		if n := units[l.ArticleNumber]; n > 0 {
			it.Lines = append(it.Lines, api.CaptureLine{ArticleNumber: l.ArticleNumber, Quantity: n})
		}
	}
	it.Note = strings.Join(parcels, ", ")
	if n := len(seenParcel) - len(parcels); n > 0 {
		it.Note += fmt.Sprintf(" and %d more", n)
	}
	it.Parcels = shipped
	return it, nil
}

// parcel is the row's parcel as the capture keeps it; its String names it
// ("parcel ID tracking T", or the half that is known).
func (row Row) parcel() store.Parcel { return store.Parcel{ID: row.Parcel, Tracking: row.Tracking} }

// stateProblem says why a reservation cannot be captured by line, "" when
// it can.
func stateProblem(r *store.Reservation) string {
	if err := r.CanCapture(); err != nil {
		return fmt.Sprintf("reservation %s (invoice %s): %v", r.ReservationNumber, r.Invoice, err)
	}
	if r.ReservationNumber == "" {
		return fmt.Sprintf("invoice %s: the customer has not completed the reservation yet", r.Invoice)
	}
	if !r.LinesKnown {
		return fmt.Sprintf("reservation %s (invoice %s): its lines are not known to this cache (the order never arrived): "+
			"post the order to the intake or run paydesk import first", r.ReservationNumber, r.Invoice)
	}
	if r.OutcomeUnknown {
		return fmt.Sprintf("reservation %s (invoice %s): operation %s has an unknown outcome: resolve it first (paydesk resolve)",
			r.ReservationNumber, r.Invoice, joinU64(r.UnknownOps))
	}
	return ""
}

// PlanCancelRest checks the cancels of what was not shipped: each invoice
// must have had something captured (else it would release the whole
// reservation: use paydesk cancel for that) and something left to cancel.
func PlanCancelRest(m *Manifest, lookup Lookup) *Preflight {
	start := time.Now()
	pf := &Preflight{Kind: store.BatchCancelRest, Hash: m.Hash, Rows: len(m.Rows), Ignored: m.Ignored}
	totals := map[string]decimal.Decimal{}
	seen := map[string]bool{}
	for _, row := range m.Rows {
		// A cancel needs the whole record (PlanCancel reads more than the
		// ledger); the lists are short.
		r, err := lookup(row.Ref)
		if err != nil {
			msg := "no reservation with invoice or number " + strconv.Quote(row.Ref) + " in the cache"
			if !errors.Is(err, store.ErrNotFound) {
				msg = err.Error()
			}
			pf.refuse(row, "", RuleUnknown, msg)
			continue
		}
		refuse := func(rule, msg string) {
			pf.Refused = append(pf.Refused, Refusal{Line: row.Line, Ref: row.Ref, Reservation: r.ReservationNumber, Rule: rule, Message: msg})
			pf.RefusedRows++
			pf.RefusedReservations++
		}
		if seen[r.Key] {
			refuse(RuleListedTwice, "names reservation "+r.ReservationNumber+" again (listed once is enough)")
			continue
		}
		seen[r.Key] = true
		amount, err := ops.PlanCancel(r)
		switch {
		case err != nil:
			refuse(RuleState, fmt.Sprintf("reservation %s (invoice %s): %v", r.ReservationNumber, r.Invoice, err))
			continue
		case r.OutcomeUnknown:
			refuse(RuleState, fmt.Sprintf("reservation %s (invoice %s): operation %s has an unknown outcome: resolve it first",
				r.ReservationNumber, r.Invoice, joinU64(r.UnknownOps)))
			continue
		case !r.CapturedAmount.IsPositive():
			refuse(RuleNothingCapted, fmt.Sprintf("nothing of reservation %s (invoice %s) was captured: cancelling the rest would release it whole (use paydesk cancel for that)",
				r.ReservationNumber, r.Invoice))
			continue
		}
		it := Item{Reservation: r.ReservationNumber, Invoice: r.Invoice, Currency: r.Currency, Customer: r.CustomerName,
			Rows: []int{row.Line}, Amount: amount}
		for _, l := range r.Lines {
			if n := l.Remaining(); n > 0 {
				it.Lines = append(it.Lines, api.CaptureLine{ArticleNumber: l.ArticleNumber, Quantity: n})
			}
		}
		pf.Items = append(pf.Items, it)
		totals[it.Currency] = totals[it.Currency].Add(amount)
	}
	pf.finish(totals, start)
	return pf
}

// maxListed bounds a list of line numbers in a message or a report line:
// one reservation named on a million rows must not make a line of megabytes.
const maxListed = 20

func joinInts(v []int) string {
	n := min(len(v), maxListed)
	s := make([]string, n, n+1)
	for i := range n {
		s[i] = strconv.Itoa(v[i])
	}
	if len(v) > n {
		s = append(s, fmt.Sprintf("… and %d more", len(v)-n))
	}
	return strings.Join(s, ", ")
}

func joinU64(v []uint64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, ", ")
}
