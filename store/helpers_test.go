package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store/domain"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// openTest opens an empty store for a test: a bbolt file, or with
// PAYDESK_STORE_BACKEND=postgres a fresh database (pgtest.Fresh) on the server at
// $PAYDESK_TEST_PG — the same tests are the contract both engines keep.
func openTest(t testing.TB) *DB {
	t.Helper()
	now := t0
	where := storeTemplate.StoreAt(t, filepath.Join(t.TempDir(), "sub", "paydesk.db"))
	db, err := Open(where, Options{NoSync: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// gw is a tiny stand-in for the gateway: it hands out keys and builds the
// responses and pushes the real one would send.
type gw struct {
	n     int
	clock time.Time
}

func (g *gw) key() string {
	g.n++
	return fmt.Sprintf("%032X", g.n)
}

func (g *gw) tick() api.DateTime {
	g.clock = g.clock.Add(time.Minute)
	return api.NewDateTime(g.clock, true)
}

func (g *gw) status(code int, sub string) api.Status {
	s := api.Status{Code: api.Code{Code: code, Description: api.StatusText(code)}, DateTime: g.tick()}
	if sub != "" {
		s.SubCode = &api.SubCode{Code: sub}
	}
	return s
}

func dataPush(key, invoice, action string, st api.Status, params ...api.ResponseParameter) *api.Push {
	d := &api.DataRequestPush{Key: key, Invoice: invoice, ServiceCode: api.ServiceDeferred, ActionCode: action,
		Status: st, IsTest: true, Currency: "EUR", MutationType: api.MutationDataRequest}
	if len(params) > 0 {
		d.Services = []api.ResponseService{{Name: api.ServiceDeferred, Parameters: params, VersionAsProperty: api.Ptr(1)}}
	}
	return &api.Push{DataRequest: d}
}

func txPush(key, invoice, service, typ string, amount decimal.Decimal, st api.Status, rel []api.RelatedTransaction, params ...api.ResponseParameter) *api.Push {
	tp := &api.TransactionPush{Key: key, Invoice: invoice, ServiceCode: service, Status: st, IsTest: true, Currency: "EUR",
		TransactionType: typ, RelatedTransactions: rel, MutationType: api.MutationDeferred}
	if typ == api.TypeDeferredRefund || typ == api.TypeGiftCardRefund {
		tp.AmountCredit = api.NewAmount(amount)
	} else {
		tp.AmountDebit = api.NewAmount(amount)
	}
	if len(params) > 0 {
		tp.Services = []api.ResponseService{{Name: service, Parameters: params, VersionAsProperty: api.Ptr(1)}}
	}
	return &api.Push{Transaction: tp}
}

func push(t testing.TB, db *DB, p *api.Push) ApplyResult {
	t.Helper()
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.ApplyPush(context.Background(), PushRecord{Body: body, Method: "POST", URL: "/push"}, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// scenario drives a reservation through ops, responses and pushes, and keeps
// every push it produced so tests can replay them.
type scenario struct {
	t      testing.TB
	db     *DB
	g      *gw
	inv    string
	resKey string
	resNum string
	pushes []*api.Push
}

func newScenario(t testing.TB, db *DB, g *gw, invoice string) *scenario {
	return &scenario{t: t, db: db, g: g, inv: invoice}
}

func (s *scenario) begin(op api.Operation) uint64 {
	s.t.Helper()
	id, err := s.db.BeginOp(context.Background(), PendingOp{Operator: "tester", Request: op.Request()})
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

func (s *scenario) respond(id uint64, r *api.Response) *PendingOp {
	s.t.Helper()
	op, err := s.db.ApplyResponse(context.Background(), id, r)
	if err != nil {
		s.t.Fatal(err)
	}
	return op
}

// reserve sends a Reserve and lets the customer approve it (push 190 with
// the reservation number). apply=false keeps the push for later.
func (s *scenario) reserve(articles []api.Article, applyPush bool) {
	s.t.Helper()
	id := s.begin(api.Reserve{Currency: "EUR", Invoice: s.inv, Articles: articles,
		Billing:               api.Address{FirstName: "Anna", LastName: "Jansen", Street: "Kade", HouseNumber: "1", City: "Utrecht", Country: "NL", Email: "anna@example.nl", PhoneNumber: "0301234567"},
		ShippingSameAsBilling: true, Customer: api.Customer{Gender: 2, OperatingCountry: "NL", Pno: "01011990"},
		ClientIP: api.ClientIP{Address: "127.0.0.1"}})
	s.resKey = s.g.key()
	s.resNum = "RES-" + s.resKey[28:]
	s.respond(id, &api.Response{Key: s.resKey, Status: s.g.status(api.StatusPendingProcessing, api.SubCodeRedirect),
		RequiredAction: &api.RequiredAction{RedirectURL: "http://sandbox/checkout/" + s.resKey, Name: "Redirect"}, ServiceCode: api.ServiceDeferred, IsTest: true})
	p := dataPush(s.resKey, s.inv, api.ActionReserve, s.g.status(api.StatusSuccess, ""), api.ResponseParameter{Name: api.PReservationNumber, Value: api.FlexString(s.resNum)})
	s.emit(p, applyPush)
}

func (s *scenario) emit(p *api.Push, apply bool) {
	s.t.Helper()
	s.pushes = append(s.pushes, p)
	if apply {
		push(s.t, s.db, p)
	}
}

// capture sends a deferred Pay for the lines (none: everything remaining)
// and returns its key.
func (s *scenario) capture(amount string, apply bool, lines ...api.CaptureLine) string {
	s.t.Helper()
	id := s.begin(api.Capture{Currency: "EUR", Invoice: s.inv, ReservationNumber: s.resNum, Amount: dec(amount), Lines: lines})
	k := s.g.key()
	inv := api.ResponseParameter{Name: api.PInvoiceNumber, Value: api.FlexString("INV-" + k[28:])}
	st := s.g.status(api.StatusSuccess, api.SubCodeProcessed)
	s.respond(id, &api.Response{Key: k, Status: st, Invoice: s.inv, ServiceCode: api.ServiceDeferred, IsTest: true, Currency: "EUR",
		AmountDebit: api.NewAmount(dec(amount)), TransactionType: api.Ptr(api.TypeDeferredPay), MutationType: 1,
		Services: []api.ResponseService{{Name: api.ServiceDeferred, Parameters: []api.ResponseParameter{inv}}}})
	s.emit(txPush(k, s.inv, api.ServiceDeferred, api.TypeDeferredPay, dec(amount), st, nil, inv), apply)
	return k
}

func (s *scenario) refund(original, amount string, apply bool) string {
	s.t.Helper()
	id := s.begin(api.Refund{Currency: "EUR", Invoice: s.inv, OriginalTransactionKey: original, Amount: dec(amount)})
	k := s.g.key()
	st := s.g.status(api.StatusSuccess, api.SubCodeProcessed)
	rel := []api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: original}}
	s.respond(id, &api.Response{Key: k, Status: st, Invoice: s.inv, ServiceCode: api.ServiceDeferred, IsTest: true, Currency: "EUR",
		AmountCredit: api.NewAmount(dec(amount)), TransactionType: api.Ptr(api.TypeDeferredRefund), MutationType: 1, RelatedTransactions: rel})
	s.emit(txPush(k, s.inv, api.ServiceDeferred, api.TypeDeferredRefund, dec(amount), st, rel), apply)
	return k
}

func (s *scenario) cancel(apply bool) string {
	s.t.Helper()
	id := s.begin(api.CancelReservation{Currency: "EUR", Invoice: s.inv, ReservationNumber: s.resNum})
	k := s.g.key()
	st := s.g.status(api.StatusSuccess, api.SubCodeProcessed)
	s.respond(id, &api.Response{Key: k, Status: st, ServiceCode: api.ServiceDeferred, IsTest: true})
	s.emit(dataPush(k, s.inv, api.ActionCancelReservation, st), apply)
	return k
}

func (s *scenario) update(articles []api.Article, apply bool) string {
	s.t.Helper()
	id := s.begin(api.UpdateReservation{Currency: "EUR", Invoice: s.inv, ReservationNumber: s.resNum, Articles: articles})
	k := s.g.key()
	st := s.g.status(api.StatusSuccess, api.SubCodeProcessed)
	s.respond(id, &api.Response{Key: k, Status: st, ServiceCode: api.ServiceDeferred, IsTest: true})
	s.emit(dataPush(k, s.inv, api.ActionUpdateReservation, st), apply)
	return k
}

func (s *scenario) reservation() *Reservation {
	s.t.Helper()
	r, err := s.db.Reservation(context.Background(), s.resKey)
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// openCutThenWhole opens the file at path once for every count in cutAfter
// with its fills cut short after that many chunks of chunk rows (each open
// must fail with domain.ErrFillCut, as a killed process's would), then
// opens it whole: the fills resume where the cut ones stopped. The store is
// closed when the test ends.
func openCutThenWhole(t *testing.T, path string, chunk int, cutAfter []int) *DB {
	t.Helper()
	for _, cut := range cutAfter {
		if _, err := Open(path, Options{NoSync: true, fillChunk: chunk, failFillAfter: cut}); !errors.Is(err, domain.ErrFillCut) {
			t.Fatalf("open cut after %d chunks: %v", cut, err)
		}
	}
	db, err := Open(path, Options{NoSync: true, fillChunk: chunk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// sampled says whether the i-th case of a property or table test runs.
// Those tests drive one goroutine through the store against a reference,
// which the race detector makes five to ten times dearer without checking
// more: under it they run every fourth case (a quarter of the seeds), and
// .ci/run runs them whole without it, beside the race pass.
func sampled(i int) bool { return !raceEnabled || i%4 == 0 }
