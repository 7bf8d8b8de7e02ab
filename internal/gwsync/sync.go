package gwsync

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// Provenance is the push log's "from" of what sync learned: the entry was
// not pushed, paydesk read it from the gateway's InvoiceInfo lookup.
const Provenance = store.ProvenanceSync

// Lookup is what sync needs of the gateway (api.Client has it).
type Lookup interface {
	InvoiceInfo(ctx context.Context, invoice string) (*api.InvoiceInfo, error)
}

// Store is what sync needs of the store (*store.DB has it).
type Store interface {
	ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error)
	Reservation(ctx context.Context, ref string) (*store.Reservation, error)
	TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error)
	Transaction(ctx context.Context, key string) (*store.Transaction, error)
	ApplyPush(ctx context.Context, rec store.PushRecord, p *api.Push) (store.ApplyResult, error)
	AppendAudit(ctx context.Context, e store.AuditEntry) (uint64, error)
}

// Options tune a run.
type Options struct {
	// Since: reservations and transactions created or updated since then
	// are asked about; open reservations (awaiting the customer, reserved,
	// partly captured) always are. Zero means 30 days before Now.
	Since time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Workers bounds the invoices looked up and booked at once; 0 means 8.
	Workers int
	// Operator names who ran it in the audit log.
	Operator string
}

// DefaultWindow is how far back a run looks without Options.Since: a
// refund made in the gateway's back office weeks after the capture is
// still found.
const DefaultWindow = 30 * 24 * time.Hour

// Learned is one fact paydesk did not know and now does.
type Learned struct {
	Invoice  string
	Key      string
	Kind     string // the action (data request) or transaction type
	Amount   decimal.Decimal
	Currency string
	Status   store.Status
	// Was is what paydesk held for the key before: nothing (zero) or an
	// older status.
	Was    store.Status
	Result store.ApplyResult
}

// Result is what a run did.
type Result struct {
	Invoices int       // asked about
	NotFound []string  // invoices the gateway holds nothing for
	Learned  []Learned // in invoice, then gateway order
	Failed   map[string]error
}

// Run asks the gateway about every invoice of the open and recent
// reservations and transactions and books what differs from the store. A
// lookup changes nothing at the gateway, so a failed one is only reported;
// the next run asks again.
func Run(ctx context.Context, db Store, gw Lookup, o Options) (Result, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	since := o.Since
	if since.IsZero() {
		since = now().Add(-DefaultWindow)
	}
	workers := o.Workers
	if workers <= 0 {
		workers = 8
	}
	invoices, err := candidates(ctx, db, since)
	if err != nil {
		return Result{}, err
	}
	res := Result{Invoices: len(invoices), Failed: map[string]error{}}

	// Each worker looks an invoice up and books what it learned; the
	// entries of one invoice are booked in the gateway's order, and the
	// workers' bookings share the store's group commits.
	type answer struct {
		learned  []Learned
		notFound bool
		err      error // the lookup's: reported, asked again next run
		fatal    error // the store's: the run stops
	}
	answers := make([]answer, len(invoices))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(invoices)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				a := &answers[i]
				info, err := gw.InvoiceInfo(ctx, invoices[i])
				switch {
				case errors.Is(err, api.ErrUnknownTransaction):
					a.notFound = true
					continue
				case err != nil:
					a.err = err
					continue
				}
				for _, e := range info.Transactions {
					l, err := learn(ctx, db, invoices[i], e, now())
					if err != nil {
						a.fatal = err
						break
					}
					if l != nil {
						a.learned = append(a.learned, *l)
					}
				}
			}
		}()
	}
feed:
	for i := range invoices {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, a := range answers {
		switch {
		case a.fatal != nil:
			return res, a.fatal
		case a.notFound:
			res.NotFound = append(res.NotFound, invoices[i])
		case a.err != nil:
			res.Failed[invoices[i]] = a.err
		}
		res.Learned = append(res.Learned, a.learned...)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if len(res.Learned) > 0 {
		_, err := db.AppendAudit(ctx, store.AuditEntry{Time: now(), Operator: o.Operator, Action: "sync", Target: fmt.Sprintf("%d invoices", res.Invoices),
			Result: fmt.Sprintf("learned %d from the gateway", len(res.Learned))})
		if err != nil {
			return res, fmt.Errorf("sync: audit: %w", err)
		}
	}
	return res, nil
}

// candidates are the invoices to ask about, sorted: of every reservation
// still open or made since, and of every transaction made or changed
// since (gift cards, and captures made under an invoice of their own).
// Both lists are read a page at a time: a cache of a million reservations
// held whole took 300 MB, beside the console that had just opened it.
func candidates(ctx context.Context, db Store, since time.Time) ([]string, error) {
	seen := map[string]bool{}
	q := store.PageQuery{Sort: store.SortCreated, Limit: candidatePage}
	for {
		p, err := db.ReservationPage(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("sync: reservations: %w", err)
		}
		for _, r := range p.Rows {
			s := &r.Summary
			open := s.State == store.StateAwaitingCustomer || s.State == store.StateReserved || s.State == store.StatePartlyCaptured
			if s.Invoice != "" && (open || !s.Created.Before(since)) {
				seen[s.Invoice] = true
			}
		}
		if !p.More || len(p.Rows) == 0 {
			break
		}
		q.After = p.Rows[len(p.Rows)-1].Pos
	}
	q = store.PageQuery{Sort: store.TxSortCreated, Limit: candidatePage}
	for {
		p, err := db.TransactionPage(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("sync: transactions: %w", err)
		}
		for _, r := range p.Rows {
			t := r.Tx
			if t.Invoice != "" && (!t.Created.Before(since) || !t.Updated.Before(since) || !t.Status.IsFinal()) {
				seen[t.Invoice] = true
			}
		}
		if !p.More || len(p.Rows) == 0 {
			break
		}
		q.After = p.Rows[len(p.Rows)-1].Pos
	}
	out := make([]string, 0, len(seen))
	for inv := range seen {
		out = append(out, inv)
	}
	sort.Strings(out)
	return out, nil
}

// candidatePage is how many rows one read of candidates takes.
const candidatePage = 5000

// learn books one InvoiceInfo entry when the store holds nothing for its
// key or an older status; it returns nil when the store knew it already.
func learn(ctx context.Context, db Store, invoice string, e api.InvoiceTransaction, now time.Time) (*Learned, error) {
	p := e.Push()
	st := p.Status()
	was, err := known(ctx, db, p)
	if err != nil {
		return nil, err
	}
	if was.Code == st.Code.Code && was.SubCode == st.SubCodeString() {
		return nil, nil
	}
	if was.IsFinal() {
		return nil, nil // a final status never changes; the store would refuse it anyway
	}
	body, err := p.Encode()
	if err != nil {
		return nil, fmt.Errorf("sync: %s: encode: %w", p.Key(), err)
	}
	rec := store.PushRecord{ReceivedAt: now, RemoteAddr: Provenance, Method: http.MethodGet,
		URL: api.PathInvoiceInfo + invoice, Body: body, Signature: store.SignatureValid}
	r, err := db.ApplyPush(ctx, rec, p)
	if err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	if !r.Applied {
		return nil, nil
	}
	l := &Learned{Invoice: invoice, Key: p.Key(), Kind: p.Kind(), Currency: p.Currency(), Was: was, Result: r,
		Status: store.Status{Code: st.Code.Code, SubCode: st.SubCodeString(), Time: st.DateTime.Time}}
	if a := p.Amount(); a != nil {
		l.Amount = a.Decimal
	}
	return l, nil
}

// known is the status the store holds for the push's key: a transaction's,
// the Reserve's or a data request's of its reservation; zero when none.
func known(ctx context.Context, db Store, p *api.Push) (store.Status, error) {
	if p.Transaction != nil {
		t, err := db.Transaction(ctx, p.Key())
		switch {
		case errors.Is(err, store.ErrNotFound):
			return store.Status{}, nil
		case err != nil:
			return store.Status{}, fmt.Errorf("sync: transaction %s: %w", p.Key(), err)
		}
		return t.Status, nil
	}
	r, err := db.Reservation(ctx, p.Key())
	if err == nil {
		return r.Status, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return store.Status{}, fmt.Errorf("sync: reservation %s: %w", p.Key(), err)
	}
	r, err = db.Reservation(ctx, p.Invoice())
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAmbiguous) {
		return store.Status{}, nil
	}
	if err != nil {
		return store.Status{}, fmt.Errorf("sync: reservation of %s: %w", p.Invoice(), err)
	}
	for _, rq := range r.Requests {
		if rq.Key == p.Key() {
			return rq.Status, nil
		}
	}
	return store.Status{}, nil
}
