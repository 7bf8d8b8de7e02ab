// Command make writes the layout-7 fixtures of store/testdata/layout7: a
// small bbolt cache file (layout7.db) and a plain-SQL dump (layout7.sql) of
// the same content written into a fresh PostgreSQL database, both by the
// store as it was at layout 7 (kv buckets; paydesk_kv on PostgreSQL).
//
// They are the upgrade tests' (store/upgrade_layout7_test.go) input: a
// cache or a team's database as the paydesk before the relational redesign
// left it. They were made once and are kept as they are: run this again
// only with the layout-7 store (git checkout of that code), never with a
// newer one, or the fixtures stop being what an upgrade meets.
//
//	go run ./store/testdata/layout7/make          # from the repository root
//
// With PAYDESK_TEST_PG set (`. .ci/pg`) it also writes layout7.sql, with
// pg_dump from PAYDESK_TEST_PG_BIN (or PATH). Then regenerate want.json:
//
//	go test -run 'TestUpgradeLayout7' ./store/ -layout7.update
//
// Everything is deterministic: keys come from a counter, the store's clock
// is set before each step, and the audit key is derived from a fixed
// secret (Secret), which the tests open the fixtures with.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"paydesk/api"
	"paydesk/store"
)

// Secret is the merchant secret the fixtures' audit key comes from; the
// tests use the same.
const Secret = "layout7-fixture-secret"

// t0 is the fixtures' first moment.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func main() {
	dir := flag.String("dir", "store/testdata/layout7", "the folder the fixtures are written to")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "layout7:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	boltPath := filepath.Join(dir, "layout7.db")
	tmp, err := os.MkdirTemp("", "layout7")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	written := filepath.Join(tmp, "paydesk.db")
	if err := fill(written); err != nil {
		return fmt.Errorf("bbolt: %w", err)
	}
	if err := compact(boltPath, written); err != nil {
		return fmt.Errorf("bbolt: %w", err)
	}
	fmt.Println("wrote", boltPath)

	base := os.Getenv("PAYDESK_TEST_PG")
	if base == "" {
		fmt.Println("PAYDESK_TEST_PG is not set: layout7.sql left as it is")
		return nil
	}
	ctx := context.Background()
	name := fmt.Sprintf("paydesk_layout7_%d", os.Getpid())
	dsn, err := withDatabase(base, name)
	if err != nil {
		return err
	}
	if err := execSQL(ctx, base, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	defer func() {
		_ = execSQL(ctx, base, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	}()
	if err := fill(dsn); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	sqlPath := filepath.Join(dir, "layout7.sql")
	dump := "pg_dump"
	if bin := os.Getenv("PAYDESK_TEST_PG_BIN"); bin != "" {
		dump = filepath.Join(bin, "pg_dump")
	}
	// Plain SQL with one INSERT per row, no owners or grants: it restores
	// into any fresh database on any server, by any role that may create
	// tables and an extension.
	cmd := exec.Command(dump, "--inserts", "--no-owner", "--no-privileges", "--no-comments", "-f", sqlPath, "-d", dsn)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pg_dump: %w", err)
	}
	fmt.Println("wrote", sqlPath)
	return nil
}

// compact copies the file the store wrote into dst without its free
// space (the store grows a file in large steps): the same buckets, keys,
// values and sequences, a fraction of the size.
func compact(dst, src string) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	from, err := bolt.Open(src, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := bolt.Open(dst, 0o600, nil)
	if err != nil {
		return err
	}
	if err := bolt.Compact(to, from, 1<<20); err != nil {
		_ = to.Close()
		return err
	}
	return to.Close()
}

// maker writes the content through the store's public API, as the console,
// the listener and the commands do.
type maker struct {
	ctx   context.Context
	db    *store.DB
	clock *time.Time
	n     int // keys handed out
	step  int // steps taken: every step moves the clock on
	err   error
}

func fill(where string) error {
	key, err := store.AuditKeyFromSecret(Secret)
	if err != nil {
		return err
	}
	clock := t0
	db, err := store.Open(where, store.Options{NoSync: true, AuditKey: key, Now: func() time.Time { return clock }})
	if err != nil {
		return err
	}
	m := &maker{ctx: context.Background(), db: db, clock: &clock}
	m.script()
	if m.err != nil {
		_ = db.Close()
		return m.err
	}
	return db.Close()
}

// tick moves the store's clock to the next step: a minute apart.
func (m *maker) tick() time.Time {
	m.step++
	*m.clock = t0.Add(time.Duration(m.step) * time.Minute)
	return *m.clock
}

func (m *maker) key() string {
	m.n++
	return fmt.Sprintf("%032X", m.n)
}

func (m *maker) fail(what string, err error) {
	if err != nil && m.err == nil {
		m.err = fmt.Errorf("%s: %w", what, err)
	}
}

func (m *maker) status(code int, sub string) api.Status {
	s := api.Status{Code: api.Code{Code: code, Description: api.StatusText(code)}, DateTime: api.NewDateTime(m.tick(), true)}
	if sub != "" {
		s.SubCode = &api.SubCode{Code: sub}
	}
	return s
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// begin journals an operation, with its audit entry as the console writes it.
func (m *maker) begin(op api.Operation, operator string, lines ...api.CaptureLine) uint64 {
	m.tick()
	if m.err != nil {
		return 0
	}
	req := op.Request()
	svc := req.Service()
	id, err := m.db.BeginOp(store.PendingOp{Operator: operator, Request: req, Lines: lines,
		Audit: &store.AuditEntry{Operator: operator, Action: svc.Action, Target: req.Invoice, Reason: "layout-7 fixture"}})
	m.fail("begin "+svc.Action+" "+req.Invoice, err)
	return id
}

func (m *maker) respond(id uint64, r *api.Response) {
	m.tick()
	if m.err != nil {
		return
	}
	op, err := m.db.ApplyResponse(id, r)
	m.fail(fmt.Sprintf("response to %d", id), err)
	if err == nil && !op.State.IsOpen() {
		m.fail(fmt.Sprintf("audit of %d", id), m.db.CompleteAudit(id, "answered: "+op.ResultStatus.Text()))
	}
}

// push delivers p as the listener does: ApplyPush on a file, the inbox and
// its applier on PostgreSQL.
func (m *maker) push(p *api.Push) {
	m.tick()
	if m.err != nil {
		return
	}
	body, err := p.Encode()
	if err != nil {
		m.fail("encode push", err)
		return
	}
	rec := store.PushRecord{Body: body, Method: "POST", URL: "/push", RemoteAddr: "192.0.2.10:40000",
		Header:    http.Header{"Content-Type": {"application/json"}, "Authorization": {"hmac WEBSITEKEY:c2ln:nonce:1772445600"}},
		Signature: store.SignatureValid, WebsiteKey: "WEBSITEKEY"}
	if m.db.Shared() {
		_, err = m.db.IngestPush(m.ctx, rec, p, nil)
		if err == nil {
			_, err = m.db.DrainInbox(m.ctx)
		}
	} else {
		_, err = m.db.ApplyPush(m.ctx, rec, p)
	}
	m.fail("push "+p.Key(), err)
}

func dataPush(key, invoice, action string, st api.Status, params ...api.ResponseParameter) *api.Push {
	dr := &api.DataRequestPush{Key: key, Invoice: invoice, ServiceCode: api.ServiceDeferred, ActionCode: action,
		Status: st, IsTest: true, Currency: "EUR", MutationType: api.MutationDataRequest}
	if len(params) > 0 {
		dr.Services = []api.ResponseService{{Name: api.ServiceDeferred, Parameters: params, VersionAsProperty: api.Ptr(1)}}
	}
	return &api.Push{DataRequest: dr}
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

// reservation is one deferred-invoice order's story.
type reservation struct {
	m        *maker
	invoice  string
	key, num string
	articles []api.Article
}

var customers = []api.Address{
	{FirstName: "Anna", LastName: "Jansen", Street: "Kade", HouseNumber: "1", PostalCode: "3511AA", City: "Utrecht", Country: "NL", Email: "anna@example.nl", PhoneNumber: "0301234567"},
	{FirstName: "Jörg", LastName: "Müller", Street: "Hauptstraße", HouseNumber: "7", PostalCode: "10115", City: "Berlin", Country: "DE", Email: "joerg@example.de", PhoneNumber: "030123456"},
	{FirstName: "Femke", LastName: "de Vries", Street: "Dorpsstraat", HouseNumber: "12b", PostalCode: "1234AB", City: "Ede", Country: "NL", Email: "femke@example.nl", PhoneNumber: "0318123456"},
}

func articles() []api.Article {
	return []api.Article{
		{Number: "TS-1", Title: "T-shirt organic cotton", Type: api.ArticleTypeGeneral, Price: d("19.99"), Quantity: 3, Vat: d("21")},
		{Number: "SH-2", Title: "Running shoes", Type: api.ArticleTypeGeneral, Price: d("89.95"), Quantity: 1, Vat: d("21")},
		{Number: "SOCK", Title: "Wool socks 3-pack", Type: api.ArticleTypeGeneral, Price: d("14.50"), Quantity: 2, Vat: d("9")},
		{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: d("4.95"), Quantity: 1, Vat: d("21")},
	}
}

// reserve sends a Reserve; approved: the customer comes back (push 190
// with the reservation number); declined: the risk check refuses it (690);
// otherwise it waits for the customer.
func (m *maker) reserve(invoice string, who int, approved, declined bool) *reservation {
	r := &reservation{m: m, invoice: invoice, articles: articles()}
	c := customers[who%len(customers)]
	id := m.begin(api.Reserve{Currency: "EUR", Invoice: invoice, Articles: r.articles, Billing: c, ShippingSameAsBilling: true,
		Customer: api.Customer{Gender: 2, OperatingCountry: c.Country, Pno: "01011990"}, ClientIP: api.ClientIP{Address: "192.0.2.1"}}, "anna@desk1")
	r.key = m.key()
	r.num = "RES-" + r.key[26:]
	if declined {
		m.respond(id, &api.Response{Key: r.key, Status: m.status(api.StatusRejected, "S990"), ServiceCode: api.ServiceDeferred, IsTest: true})
		return r
	}
	m.respond(id, &api.Response{Key: r.key, Status: m.status(api.StatusPendingProcessing, api.SubCodeRedirect),
		RequiredAction: &api.RequiredAction{RedirectURL: "http://sandbox/checkout/" + r.key, Name: "Redirect"}, ServiceCode: api.ServiceDeferred, IsTest: true})
	if approved {
		m.push(dataPush(r.key, invoice, api.ActionReserve, m.status(api.StatusSuccess, ""),
			api.ResponseParameter{Name: api.PReservationNumber, Value: api.FlexString(r.num)}))
	}
	return r
}

// capture captures lines (none: in full) and returns the capture's key;
// push: its push arrives too.
func (r *reservation) capture(amount string, push bool, lines ...api.CaptureLine) string {
	m := r.m
	id := m.begin(api.Capture{Currency: "EUR", Invoice: r.invoice, ReservationNumber: r.num, Amount: d(amount), Lines: lines}, "bob@desk2")
	k := m.key()
	inv := api.ResponseParameter{Name: api.PInvoiceNumber, Value: api.FlexString("INV-" + k[26:])}
	st := m.status(api.StatusSuccess, api.SubCodeProcessed)
	m.respond(id, &api.Response{Key: k, Status: st, Invoice: r.invoice, ServiceCode: api.ServiceDeferred, IsTest: true, Currency: "EUR",
		AmountDebit: api.NewAmount(d(amount)), TransactionType: api.Ptr(api.TypeDeferredPay), MutationType: 1,
		Services: []api.ResponseService{{Name: api.ServiceDeferred, Parameters: []api.ResponseParameter{inv}}}})
	if push {
		m.push(txPush(k, r.invoice, api.ServiceDeferred, api.TypeDeferredPay, d(amount), st, nil, inv))
	}
	return k
}

// refund refunds amount of capture original, by line when lines are given.
func (r *reservation) refund(original, amount string, lines ...api.CaptureLine) string {
	m := r.m
	id := m.begin(api.Refund{Currency: "EUR", Invoice: r.invoice, OriginalTransactionKey: original, Amount: d(amount)}, "bob@desk2", lines...)
	k := m.key()
	st := m.status(api.StatusSuccess, api.SubCodeProcessed)
	rel := []api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: original}}
	m.respond(id, &api.Response{Key: k, Status: st, Invoice: r.invoice, ServiceCode: api.ServiceDeferred, IsTest: true, Currency: "EUR",
		AmountCredit: api.NewAmount(d(amount)), TransactionType: api.Ptr(api.TypeDeferredRefund), MutationType: 1, RelatedTransactions: rel})
	m.push(txPush(k, r.invoice, api.ServiceDeferred, api.TypeDeferredRefund, d(amount), st, rel))
	return k
}

func (r *reservation) cancel() {
	m := r.m
	id := m.begin(api.CancelReservation{Currency: "EUR", Invoice: r.invoice, ReservationNumber: r.num}, "anna@desk1")
	k := m.key()
	st := m.status(api.StatusSuccess, api.SubCodeProcessed)
	m.respond(id, &api.Response{Key: k, Status: st, ServiceCode: api.ServiceDeferred, IsTest: true})
	m.push(dataPush(k, r.invoice, api.ActionCancelReservation, st))
}

func (r *reservation) update(as []api.Article) {
	m := r.m
	id := m.begin(api.UpdateReservation{Currency: "EUR", Invoice: r.invoice, ReservationNumber: r.num, Articles: as}, "anna@desk1")
	k := m.key()
	st := m.status(api.StatusSuccess, api.SubCodeProcessed)
	m.respond(id, &api.Response{Key: k, Status: st, ServiceCode: api.ServiceDeferred, IsTest: true})
	m.push(dataPush(k, r.invoice, api.ActionUpdateReservation, st))
}

func line(article string, qty int) api.CaptureLine {
	return api.CaptureLine{ArticleNumber: article, Quantity: qty}
}

// script is the fixtures' content: every state of a reservation, of an
// operation and of a batch item, each kind of transaction, pushes with a
// duplicate and rejected ones, orders with a conflict, the gateway log and
// the keyed audit chain.
func (m *maker) script() {
	ctx := m.ctx
	// An order that arrives before its reservation, and one that never gets one.
	first := articles()
	m.tick()
	_, err := m.db.PutOrder(store.Order{Invoice: "L7-1002", Currency: "EUR", Articles: first, Billing: customers[1], Shipping: customers[1],
		Source: "intake 192.0.2.20:51000"})
	m.fail("order L7-1002", err)
	m.tick()
	_, err = m.db.PutOrder(store.Order{Invoice: "L7-9000", Currency: "EUR", Articles: first[:2], Billing: customers[2], Shipping: customers[2],
		Source: "import orders.csv"})
	m.fail("order L7-9000", err)

	// Awaiting the customer; reserved (with its order); declined.
	m.reserve("L7-1001", 0, false, false)
	reserved := m.reserve("L7-1002", 1, true, false)
	m.reserve("L7-1003", 2, false, true)

	// The same invoice sent again with other lines: a conflict, both kept.
	m.tick()
	_, err = m.db.PutOrder(store.Order{Invoice: "L7-1002", Currency: "EUR", Articles: first[1:], Billing: customers[1], Shipping: customers[1],
		Source: "intake 192.0.2.20:51001"})
	if !errors.Is(err, store.ErrOrderConflict) {
		m.fail("order conflict L7-1002", fmt.Errorf("got %v, want a conflict", err))
	}

	// Partly captured by line, then a partial refund by amount.
	partly := m.reserve("L7-1004", 0, true, false)
	c1 := partly.capture("129.93", true, line("TS-1", 2), line("SH-2", 1))
	partly.refund(c1, "10.00")

	// Captured in full, then a return refunded by line.
	full := m.reserve("L7-1005", 1, true, false)
	c2 := full.capture("183.87", true)
	full.refund(c2, "39.98", line("TS-1", 2))

	// Cancelled.
	cancelled := m.reserve("L7-1006", 2, true, false)
	cancelled.cancel()

	// Closed: a shipment captured, the rest cancelled.
	closed := m.reserve("L7-1007", 0, true, false)
	closed.capture("94.90", true, line("SH-2", 1), line("SHIP", 1))
	closed.cancel()

	// Updated: fewer shoes, more socks; then captured by line without its
	// push yet.
	updated := m.reserve("L7-1008", 1, true, false)
	as := articles()
	as[2].Quantity = 4
	updated.update(as)
	updated.capture("29.00", false, line("SOCK", 2))

	// A reservation seen only in its push (no Reserve sent from here).
	k := m.key()
	m.push(dataPush(k, "L7-1009", api.ActionReserve, m.status(api.StatusSuccess, ""),
		api.ResponseParameter{Name: api.PReservationNumber, Value: api.FlexString("RES-" + k[26:])}))

	// Gift cards: a payment refunded in part; a partial payment and its
	// remainder.
	gid := m.begin(api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "L7-GC-1", Amount: d("25"),
		Card: api.Card{Provider: api.ProviderB, Number: "6000123412341234", PIN: "9999"}, LastName: "Jansen", Email: "anna@example.nl"}, "anna@desk1")
	gk := m.key()
	gst := m.status(api.StatusSuccess, api.SubCodeProcessed)
	m.respond(gid, &api.Response{Key: gk, Status: gst, Invoice: "L7-GC-1", ServiceCode: "voucherb", Currency: "EUR", IsTest: true,
		AmountDebit: api.NewAmount(d("25")), TransactionType: api.Ptr(api.TypeGiftCardPay), MutationType: 2})
	m.push(txPush(gk, "L7-GC-1", "voucherb", api.TypeGiftCardPay, d("25"), gst, nil))
	rid := m.begin(api.GiftCardRefund{ServiceCode: "voucherb", Currency: "EUR", Invoice: "L7-GC-1", OriginalTransactionKey: gk, Amount: d("10"),
		LastName: "Jansen", Email: "anna@example.nl"}, "anna@desk1")
	rk := m.key()
	rst := m.status(api.StatusSuccess, api.SubCodeProcessed)
	grel := []api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: gk}}
	m.respond(rid, &api.Response{Key: rk, Status: rst, Invoice: "L7-GC-1", ServiceCode: "voucherb", Currency: "EUR", IsTest: true,
		AmountCredit: api.NewAmount(d("10")), TransactionType: api.Ptr(api.TypeGiftCardRefund), MutationType: 2, RelatedTransactions: grel})
	m.push(txPush(rk, "L7-GC-1", "voucherb", api.TypeGiftCardRefund, d("10"), rst, grel))

	pid := m.begin(api.GiftCardPay{ServiceCode: "customgiftcard", Currency: "EUR", Invoice: "L7-GC-2", Amount: d("50"),
		Card: api.Card{Provider: api.ProviderA, Number: "7000999988887777", PIN: "1234"}}, "bob@desk2")
	pk := m.key()
	pst := m.status(api.StatusSuccess, api.SubCodePartialPayment)
	m.respond(pid, &api.Response{Key: pk, Status: pst, Invoice: "L7-GC-2", ServiceCode: "customgiftcard", Currency: "EUR", IsTest: true,
		AmountDebit: api.NewAmount(d("30")), TransactionType: api.Ptr(api.TypeGiftCardPay), MutationType: 2,
		RequiredAction: &api.RequiredAction{Name: "PayRemainder", PayRemainderDetails: &api.PayRemainderDetails{
			RemainderAmount: api.NewAmount(d("20")), Currency: "EUR", GroupTransaction: pk}}})
	remid := m.begin(api.GiftCardPay{ServiceCode: "customgiftcard", Currency: "EUR", Invoice: "L7-GC-2", Amount: d("20"),
		Card: api.Card{Provider: api.ProviderA, Number: "7000111122223333", PIN: "4321"}, GroupTransaction: pk}, "bob@desk2")
	remk := m.key()
	remst := m.status(api.StatusSuccess, api.SubCodeProcessed)
	m.respond(remid, &api.Response{Key: remk, Status: remst, Invoice: "L7-GC-2", ServiceCode: "customgiftcard", Currency: "EUR", IsTest: true,
		AmountDebit: api.NewAmount(d("20")), TransactionType: api.Ptr(api.TypeGiftCardPay), MutationType: 2,
		RelatedTransactions: []api.RelatedTransaction{{RelationType: api.RelationPartialPayment, RelatedTransactionKey: pk}}})
	// A gift card payment seen only in its push, delivered twice: the
	// second is a duplicate.
	dup := txPush(m.key(), "L7-GC-3", "customgiftcard", api.TypeGiftCardPay, d("12.50"), m.status(api.StatusSuccess, api.SubCodeProcessed), nil)
	m.push(dup)
	m.push(dup)

	// Operations in the open states: sent (a pending answer), outcome
	// unknown, resolved by hand after an unknown outcome, failed, and
	// pending (journaled, never answered).
	sent := reserved.capture("19.99", false, line("TS-1", 1)) // settled; then a pending one on another reservation
	_ = sent
	sid := m.begin(api.Capture{Currency: "EUR", Invoice: updated.invoice, ReservationNumber: updated.num, Amount: d("19.99"),
		Lines: []api.CaptureLine{line("TS-1", 1)}}, "bob@desk2")
	m.respond(sid, &api.Response{Key: m.key(), Status: m.status(api.StatusPendingProcessing, ""), Invoice: updated.invoice,
		ServiceCode: api.ServiceDeferred, IsTest: true, Currency: "EUR", AmountDebit: api.NewAmount(d("19.99")),
		TransactionType: api.Ptr(api.TypeDeferredPay), MutationType: 1})
	uid := m.begin(api.Capture{Currency: "EUR", Invoice: partly.invoice, ReservationNumber: partly.num, Amount: d("19.99"),
		Lines: []api.CaptureLine{line("TS-1", 1)}}, "anna@desk1")
	m.tick()
	m.fail("unknown", m.db.MarkOutcomeUnknown(uid, "read tcp 192.0.2.1:443: i/o timeout after sending"))
	vid := m.begin(api.CancelReservation{Currency: "EUR", Invoice: updated.invoice, ReservationNumber: updated.num}, "anna@desk1")
	m.tick()
	m.fail("unknown", m.db.MarkOutcomeUnknown(vid, "connection reset after sending"))
	m.tick()
	m.fail("resolve", m.db.ResolveOp(vid, "the gateway's back office shows no cancel: not sent"))
	m.tick()
	m.fail("audit resolve", m.db.CompleteAudit(vid, "resolved by hand"))
	fid := m.begin(api.Refund{Currency: "EUR", Invoice: full.invoice, OriginalTransactionKey: c2, Amount: d("5")}, "bob@desk2")
	m.tick()
	m.fail("fail", m.db.FailOp(fid, "HTTP 400: the gateway refused the request"))
	m.begin(api.Capture{Currency: "EUR", Invoice: closed.invoice + "-X", ReservationNumber: "RES-NONE", Amount: d("1")}, "carol@desk3")

	// A batch of captures from a manifest, its items in several states.
	m.tick()
	b, err := m.db.CreateBatch(store.Batch{Kind: store.BatchCapture, Hash: strings.Repeat("ab", 32), Source: "manifest-0302.csv",
		Operator: "bob@desk2", Rows: 3, Total: d("164.90"), Currency: "EUR"}, []store.BatchItem{
		{Index: 0, Reservation: reserved.num, Invoice: reserved.invoice, Rows: []int{2}, Lines: []api.CaptureLine{line("SH-2", 1)},
			Amount: d("89.95"), Currency: "EUR", Note: "parcel 3SABC0001", State: store.ItemPlanned,
			Parcels: []store.Parcel{{ID: "P1", Tracking: "3SABC0001"}}},
		{Index: 1, Reservation: updated.num, Invoice: updated.invoice, Rows: []int{3}, Lines: []api.CaptureLine{line("SOCK", 1)},
			Amount: d("14.50"), Currency: "EUR", State: store.ItemPlanned},
		{Index: 2, Reservation: "RES-GONE", Invoice: "L7-0000", Rows: []int{4}, Amount: d("60.45"), Currency: "EUR", State: store.ItemPlanned},
	})
	m.fail("batch", err)
	if err == nil {
		m.tick()
		m.fail("batch item", m.db.UpdateBatchItem(b.ID, store.BatchItem{Index: 2, Reservation: "RES-GONE", Invoice: "L7-0000", Rows: []int{4},
			Amount: d("60.45"), Currency: "EUR", State: store.ItemRefused, Rule: "unknown-reservation", Message: "no reservation RES-GONE"}))
		m.tick()
		m.fail("batch item", m.db.UpdateBatchItem(b.ID, store.BatchItem{Index: 1, Reservation: updated.num, Invoice: updated.invoice, Rows: []int{3},
			Lines: []api.CaptureLine{line("SOCK", 1)}, Amount: d("14.50"), Currency: "EUR", State: store.ItemOutcomeUnknown, OpID: uid,
			Message: "outcome unknown"}))
	}

	// Rejected requests: a bad signature (twice from one source: one
	// entry counting two) and a body that is no push.
	for i, rec := range []store.PushRecord{
		{Body: []byte(`{"Transaction":{"Key":"FORGED"}}`), Method: "POST", URL: "/push", RemoteAddr: "198.51.100.7:5000",
			Signature: store.SignatureMismatch, Reason: "signature mismatch", Header: http.Header{"Authorization": {"hmac WEBSITEKEY:Zm9yZ2Vk:n:1"}}},
		{Body: []byte(`{"Transaction":{"Key":"FORGED"}}`), Method: "POST", URL: "/push", RemoteAddr: "198.51.100.7:5001",
			Signature: store.SignatureMismatch, Reason: "signature mismatch", Header: http.Header{"Authorization": {"hmac WEBSITEKEY:Zm9yZ2Vk:n:2"}}},
		{Body: []byte("not json\x1b[31m"), Method: "POST", URL: "/push?x=1", RemoteAddr: "203.0.113.9:6000",
			Signature: store.SignatureUnchecked, Reason: "body is not JSON"},
	} {
		rec.ReceivedAt = m.tick()
		_, err := m.db.RecordRejectedPush(ctx, rec)
		m.fail(fmt.Sprintf("rejected %d", i), err)
	}

	// The gateway log: an answer, a refusal, a request that timed out.
	for i, x := range []store.Exchange{
		{Action: api.ActionPay, Service: api.ServiceDeferred, Method: "POST", URL: "https://testcheckout.example/json/Transaction",
			RequestBody: []byte(`{"Invoice":"L7-1004"}`), HTTPStatus: 200, ResponseBody: []byte(`{"Key":"K","Status":{"Code":{"Code":190}}}`), Duration: 120 * time.Millisecond},
		{Action: api.ActionRefund, Service: api.ServiceDeferred, Method: "POST", URL: "https://testcheckout.example/json/Transaction",
			RequestBody: []byte(`{"Invoice":"L7-1005"}`), HTTPStatus: 400, ResponseBody: []byte(`{"RequestErrors":{}}`), Duration: 80 * time.Millisecond},
		{Action: api.ActionPay, Service: "voucherb", Method: "POST", URL: "https://testcheckout.example/json/Transaction",
			RequestBody: []byte(`{"Invoice":"L7-GC-1","Services":{"ServiceList":[{"Parameters":[{"Name":"VoucherBPIN","Value":"9999"}]}]}}`),
			Duration:    30 * time.Second, Error: "read tcp: i/o timeout"},
	} {
		x.Time = m.tick()
		_, err := m.db.AppendExchange(x)
		m.fail(fmt.Sprintf("exchange %d", i), err)
	}

	// An audit entry of its own (an export).
	m.tick()
	_, err = m.db.AppendAudit(store.AuditEntry{Operator: "carol@desk3", Action: "export", Target: "reservations.csv", Result: "12 rows"})
	m.fail("audit", err)
}

// execSQL runs one statement on its own connection to the database at u.
func execSQL(ctx context.Context, u, sql string) error {
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns u naming database name instead.
func withDatabase(u, name string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "postgres" && pu.Scheme != "postgresql") {
		return "", fmt.Errorf("PAYDESK_TEST_PG: want a postgres:// URL")
	}
	pu.Path = "/" + name
	return pu.String(), nil
}
