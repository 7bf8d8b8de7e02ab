package ui

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// fakeStore is a fixed, in-memory cache for the golden screens: the same
// rows on every machine.
type fakeStore struct {
	res      []*store.Reservation
	txs      []*store.Transaction
	pushes   []*store.PushRecord
	rejected []*store.PushRecord
	ops      []*store.PendingOp
	audit    []store.AuditEntry
	xs       []store.Exchange
	ch       chan store.Change
	repeats  map[uint64]*store.PushRepeats // repeated receipts, by push ID
}

func (f *fakeStore) PushReceiptsOf(ctx context.Context, ps []*store.PushRecord) (map[uint64]store.PushReceipts, error) {
	out := map[uint64]store.PushReceipts{}
	for _, p := range ps {
		if !p.Rejected {
			out[p.ID] = store.ReceiptsOf(p, f.repeats[p.ID])
		}
	}
	return out, nil
}

func (f *fakeStore) LoadReservationSummaries(ctx context.Context) ([]store.Summary, error) {
	out := make([]store.Summary, len(f.res))
	for i, r := range f.res {
		out[i] = r.Summary()
	}
	return out, nil
}

// ReservationPage and ReservationCount answer from memory, sorted and
// filtered the way the stores do (store.PageSummaries is their reference).
func (f *fakeStore) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	all, _ := f.LoadReservationSummaries(ctx)
	return store.PageSummaries(all, q), nil
}

func (f *fakeStore) ReservationCount(ctx context.Context, q store.PageQuery) (int, error) {
	all, _ := f.LoadReservationSummaries(ctx)
	q.Limit = 1
	return store.PageSummaries(all, q).Total, nil
}

func (f *fakeStore) Reservation(ctx context.Context, ref string) (*store.Reservation, error) {
	for _, r := range f.res {
		if r.Key == ref || (ref != "" && r.ReservationNumber == ref) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("reservation %s: %w", ref, store.ErrNotFound)
}

func (f *fakeStore) Transaction(ctx context.Context, key string) (*store.Transaction, error) {
	for _, t := range f.txs {
		if t.Key == key {
			return t, nil
		}
	}
	return nil, fmt.Errorf("transaction %s: %w", key, store.ErrNotFound)
}

func (f *fakeStore) TransactionsFor(ctx context.Context, ref string) ([]*store.Transaction, error) {
	r, err := f.Reservation(ctx, ref)
	if err != nil {
		return nil, err
	}
	var out []*store.Transaction
	for _, t := range f.txs {
		if slices.Contains(r.Transactions, t.Key) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

func (f *fakeStore) Transactions(ctx context.Context) ([]*store.Transaction, error) {
	out := slices.Clone(f.txs)
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}

// TransactionPage, TransactionCount and TransactionGroup answer from
// memory like the stores (store.PageTransactions is their reference).
func (f *fakeStore) TransactionPage(ctx context.Context, q store.PageQuery) (store.TxPage, error) {
	return store.PageTransactions(f.txs, q), nil
}

func (f *fakeStore) TransactionCount(ctx context.Context, q store.PageQuery) (int, error) {
	q.Limit = 1
	return store.PageTransactions(f.txs, q).Total, nil
}

func (f *fakeStore) TransactionGroup(ctx context.Context, group string) ([]*store.Transaction, error) {
	var out []*store.Transaction
	for _, t := range f.txs {
		if t.Group == group || t.Key == group {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

func (f *fakeStore) Pushes(ctx context.Context, limit int, before uint64) ([]*store.PushRecord, error) {
	var out []*store.PushRecord
	for i := len(f.pushes) - 1; i >= 0 && len(out) < limit; i-- {
		if before == 0 || f.pushes[i].ID < before {
			out = append(out, f.pushes[i])
		}
	}
	return out, nil
}

func (f *fakeStore) PushesFor(ctx context.Context, keys ...string) ([]*store.PushRecord, error) {
	var out []*store.PushRecord
	for _, p := range f.pushes {
		if slices.Contains(keys, p.Key) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *fakeStore) PushesForReservation(ctx context.Context, ref string) ([]*store.PushRecord, error) {
	r, err := f.Reservation(ctx, ref)
	if err != nil {
		return nil, err
	}
	var out []*store.PushRecord
	for _, p := range f.pushes {
		if p.ReservationKey == r.Key {
			out = append(out, p)
		}
	}
	return out, nil
}

func (f *fakeStore) RejectedPushes(ctx context.Context, limit int) ([]*store.PushRecord, error) {
	out := slices.Clone(f.rejected)
	slices.Reverse(out)
	return out[:min(len(out), limit)], nil
}

func (f *fakeStore) Op(ctx context.Context, id uint64) (*store.PendingOp, error) {
	for _, op := range f.ops {
		if op.ID == id {
			return op, nil
		}
	}
	return nil, fmt.Errorf("operation %d: %w", id, store.ErrNotFound)
}

func (f *fakeStore) Ops(ctx context.Context, states ...store.OpState) ([]*store.PendingOp, error) {
	var out []*store.PendingOp
	for _, op := range f.ops {
		if len(states) == 0 || slices.Contains(states, op.State) {
			out = append(out, op)
		}
	}
	return out, nil
}

func (f *fakeStore) Audit(ctx context.Context, limit int) ([]store.AuditEntry, error) {
	return f.audit, nil
}
func (f *fakeStore) Exchanges(ctx context.Context, limit int) ([]store.Exchange, error) {
	return f.xs, nil
}

func (f *fakeStore) Counts(ctx context.Context) (store.Counts, error) {
	n := 0
	for _, op := range f.ops {
		if op.State == store.OpOutcomeUnknown {
			n++
		}
	}
	return store.Counts{Pushes: uint64(len(f.pushes)), Rejected: uint64(len(f.rejected)), OutcomeUnknown: n,
		Reservations: len(f.res), Transactions: len(f.txs)}, nil
}

func (f *fakeStore) Subscribe() (<-chan store.Change, func()) {
	if f.ch == nil {
		f.ch = make(chan store.Change, 16)
	}
	return f.ch, func() {}
}

// testNow is the fixed clock of every golden.
var testNow = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func key32(n int) string { return fmt.Sprintf("%032X", n*7919+0xA1B2C3) }

func line(num, title string, price string, reserved, captured, cancelled int) store.Line {
	return store.Line{ArticleNumber: num, Title: title, Type: "General", Price: dec(price), Vat: dec("21"),
		Reserved: reserved, Captured: captured, Cancelled: cancelled}
}

func ok190(at time.Time) store.Status { return store.Status{Code: 190, SubCode: "S001", Time: at} }

// fixture is a small cache with every state, transaction kind and push
// verdict the screens draw.
func fixture() *fakeStore {
	day := 24 * time.Hour
	f := &fakeStore{}
	mk := func(n int, inv, name, email, cc string, created time.Time, status store.Status, lines ...store.Line) *store.Reservation {
		r := &store.Reservation{Key: key32(n), ReservationNumber: fmt.Sprintf("R%07d", 4100+n), Invoice: inv, Currency: "EUR",
			IsTest: true, CustomerName: name, CustomerEmail: email, Country: cc, Lines: lines, LinesKnown: true,
			Status: status, Created: created, Updated: created,
			Billing: api.Address{Street: "Keizersgracht", HouseNumber: fmt.Sprint(10 + n), PostalCode: "1015 CJ", City: "Amsterdam", Country: cc}}
		r.Requests = []store.Request{{Key: r.Key, Action: api.ActionReserve, Status: status}}
		f.res = append(f.res, r)
		return r
	}
	r1 := mk(1, "INV-2026-0101", "Jan de Vries", "jan@example.nl", "NL", testNow.Add(-2*day), ok190(testNow.Add(-2*day)),
		line("SCARF-01", "Wool scarf, grey", "39.95", 2, 0, 0), store.Line{ArticleNumber: "SHIP", Title: "Shipping", Type: "ShipmentFee", Price: dec("4.95"), Vat: dec("21"), Reserved: 1})
	_ = r1
	r2 := mk(2, "INV-2026-0102", "Anna Müller", "anna@example.de", "DE", testNow.Add(-12*day), ok190(testNow.Add(-12*day)),
		line("CUP-6", "Espresso cups (6)", "12.50", 3, 2, 0), line("GRIND-X", "Burr grinder", "89.00", 1, 0, 0))
	r2.CapturedAmount = dec("25.00")
	r3 := mk(3, "INV-2026-0103", "Lukas Gruber", "lukas@example.at", "AT", testNow.Add(-5*day), ok190(testNow.Add(-5*day)),
		line("BOOT-42", "Hiking boots 42", "149.00", 1, 1, 0), line("SOCK-3", "Socks, 3 pairs", "14.99", 2, 2, 0))
	r3.CapturedAmount, r3.RefundedAmount = dec("178.98"), dec("14.99")
	r3.Lines[1].Refunded = 1
	r4 := mk(4, "INV-2026-0104", "Sophie Jansen", "sophie@example.nl", "NL", testNow.Add(-3*day), ok190(testNow.Add(-3*day)),
		line("LAMP-2", "Desk lamp", "59.00", 1, 0, 1))
	r4.Cancelled = true
	mk(5, "INV-2026-0105", "Max Decline", "max@example.de", "DE", testNow.Add(-1*day), store.Status{Code: 690, Time: testNow.Add(-day)},
		line("TV-55", "Television 55\"", "899.00", 1, 0, 0)).ReservationNumber = ""
	r6 := mk(6, "INV-2026-0106", "Eva Bakker", "eva@example.nl", "NL", testNow.Add(-20*time.Minute), store.Status{Code: 791, SubCode: "S002", Time: testNow.Add(-20 * time.Minute)},
		line("MUG-1", "Mug", "9.95", 4, 0, 0))
	r6.ReservationNumber = ""
	mk(7, "INV-2026-0107", "Tom Visser", "tom@example.nl", "NL", testNow.Add(-16*day), ok190(testNow.Add(-16*day)),
		line("BIKE-B", "Bike bell", "7.50", 2, 0, 0))
	r8 := mk(8, "INV-2026-0108", "Mia Schmidt", "mia@example.de", "DE", testNow.Add(-4*time.Hour), ok190(testNow.Add(-4*time.Hour)),
		line("PAN-28", "Frying pan 28 cm", "44.90", 1, 0, 0))
	r8.OutcomeUnknown = true

	tx := func(n int, kind store.Kind, typ, svc, inv string, amount string, created time.Time) *store.Transaction {
		t := &store.Transaction{Key: key32(100 + n), Kind: kind, TransactionType: typ, ServiceCode: svc, Invoice: inv, Currency: "EUR",
			Amount: dec(amount), Status: ok190(created), IsTest: true, Created: created, Updated: created}
		f.txs = append(f.txs, t)
		return t
	}
	c2 := tx(1, store.KindCapture, "C700", "deferredkp", "INV-2026-0102", "25.00", testNow.Add(-11*day))
	c2.ReservationKey, c2.ReservationNumber, c2.InvoiceNumber = r2.Key, r2.ReservationNumber, "PRV-88001"
	c2.Lines = []api.CaptureLine{{ArticleNumber: "CUP-6", Quantity: 2}}
	r2.Transactions = []string{c2.Key}
	c3 := tx(2, store.KindCapture, "C700", "deferredkp", "INV-2026-0103", "178.98", testNow.Add(-4*day))
	c3.ReservationKey, c3.ReservationNumber, c3.InvoiceNumber, c3.FullCapture = r3.Key, r3.ReservationNumber, "PRV-88002", true
	f3 := tx(3, store.KindRefund, "C701", "deferredkp", "INV-2026-0103", "14.99", testNow.Add(-2*day))
	f3.Original, f3.ReservationKey, f3.ReservationNumber = c3.Key, r3.Key, r3.ReservationNumber
	c3.Refunded, c3.Refunds = dec("14.99"), []string{f3.Key}
	r3.Transactions = []string{c3.Key, f3.Key}
	g1 := tx(4, store.KindGiftCardPay, "V238", "voucherb", "GC-2026-0201", "25.00", testNow.Add(-30*time.Hour))
	g1.Provider = api.Provider("B")
	g2 := tx(5, store.KindGiftCardPay, "V238", "customgiftcard", "GC-2026-0202", "10.00", testNow.Add(-3*time.Hour))
	g2.Status.SubCode, g2.RemainderAmount = "S003", dec("30.00")
	g3 := tx(6, store.KindGiftCardRemainder, "V238", "customgiftcard", "GC-2026-0202", "30.00", testNow.Add(-170*time.Minute))
	g2.Group, g3.Group = key32(999), key32(999)

	id := uint64(0)
	push := func(p *api.Push, at time.Time, resKey string) *store.PushRecord {
		id++
		body, err := p.Encode()
		if err != nil {
			panic(err)
		}
		rec := &store.PushRecord{ID: id, ReceivedAt: at, RemoteAddr: "127.0.0.1:51234", Method: "POST", URL: "/push",
			Header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"hmac paydesk-test:c2lnbmF0dXJl:nonce1:1795345581"}},
			Body:   body, Signature: store.SignatureValid, Applied: true, ReservationKey: resKey, WebsiteKey: "paydesk-test"}
		rec.Describe(p)
		f.pushes = append(f.pushes, rec)
		return rec
	}
	reservePush := func(r *store.Reservation, at time.Time) *api.Push {
		dt := api.NewDateTime(at, true)
		return &api.Push{DataRequest: &api.DataRequestPush{Key: r.Key, Invoice: r.Invoice, ServiceCode: "deferredkp", ActionCode: "Reserve",
			Status: api.Status{Code: api.Code{Code: 190, Description: "Success"}, DateTime: dt}, IsTest: true, Currency: "EUR",
			Services: []api.ResponseService{{Name: "deferredkp", Parameters: []api.ResponseParameter{{Name: "ReservationNumber", Value: api.FlexString(r.ReservationNumber)}}}}}}
	}
	for _, r := range []*store.Reservation{r1, r2, r3, r4} {
		push(reservePush(r, r.Created.Add(time.Minute)), r.Created.Add(time.Minute), r.Key)
	}
	payPush := func(t *store.Transaction) *api.Push {
		return &api.Push{Transaction: &api.TransactionPush{Key: t.Key, Invoice: t.Invoice, ServiceCode: t.ServiceCode,
			Status: api.Status{Code: api.Code{Code: 190, Description: "Success"}, SubCode: &api.SubCode{Code: "S001", Description: "Transaction successfully processed"}, DateTime: api.NewDateTime(t.Created, true)},
			IsTest: true, Currency: "EUR", AmountDebit: api.NewAmount(t.Amount), TransactionType: t.TransactionType, MutationType: 1}}
	}
	push(payPush(c2), c2.Created.Add(2*time.Second), r2.Key)
	dup := push(payPush(c2), c2.Created.Add(30*time.Second), r2.Key)
	dup.Applied, dup.Ignored = false, "duplicate of push 5"
	p3 := push(payPush(c3), c3.Created.Add(2*time.Second), r3.Key)
	// The gateway delivered it twice more: a retry, then a resend.
	at := c3.Created.Add(2 * time.Second)
	f.repeats = map[uint64]*store.PushRepeats{p3.ID: {Count: 2, First: at.Add(40 * time.Second), Last: at.Add(5 * time.Minute),
		Recent: []store.PushReceipt{{At: at.Add(40 * time.Second), RemoteAddr: "127.0.0.1:51240", Signature: store.SignatureValid},
			{At: at.Add(5 * time.Minute), RemoteAddr: "127.0.0.1:51302", Signature: store.SignatureValid}}}}
	push(payPush(g1), g1.Created.Add(time.Second), "")

	rej := &store.PushRecord{ID: 1, ReceivedAt: testNow.Add(-90 * time.Minute), RemoteAddr: "203.0.113.9:40112", Method: "POST", URL: "/push",
		Header:    http.Header{"Content-Type": {"application/json"}, "Authorization": {"hmac paydesk-test:Zm9yZ2Vk:n2:1795345000"}},
		Body:      []byte(`{"Transaction":{"Key":"` + key32(777) + `","Invoice":"INV-FORGED","ServiceCode":"deferredkp","Status":{"Code":{"Code":190}},"AmountDebit":999}}`),
		Signature: store.SignatureMismatch, Rejected: true, Reason: "signature: signature does not match the body and URL", WebsiteKey: "paydesk-test",
		Envelope: "Transaction", Key: key32(777), Invoice: "INV-FORGED", Service: "deferredkp", Status: store.Status{Code: 190}}
	f.rejected = append(f.rejected, rej)

	f.ops = []*store.PendingOp{{ID: 9, Created: testNow.Add(-4 * time.Hour), Action: "Pay", Service: "deferredkp", Target: r8.ReservationNumber,
		ReservationKey: r8.Key, Invoice: r8.Invoice, Currency: "EUR", Amount: dec("44.90"), State: store.OpOutcomeUnknown,
		Error: "no answer within 30s (the gateway may have captured)"}}
	f.audit = []store.AuditEntry{
		{ID: 1, Time: c2.Created, Operator: "sam", Action: "capture", Target: r2.ReservationNumber, Amount: dec("25.00"), Currency: "EUR", Result: "settled 190", OpID: 1},
		{ID: 2, Time: f3.Created, Operator: "sam", Action: "refund", Target: c3.Key, Amount: dec("14.99"), Currency: "EUR", Result: "settled 190", Reason: "returned goods", OpID: 3},
		{ID: 3, Time: testNow.Add(-4 * time.Hour), Operator: "sam", Action: "capture", Target: r8.ReservationNumber, Amount: dec("44.90"), Currency: "EUR", Result: "outcome unknown", OpID: 9},
	}
	f.xs = []store.Exchange{
		{ID: 1, Time: c2.Created, Action: "Pay", Service: "deferredkp", Method: "POST", URL: "http://127.0.0.1:8800/json/Transaction", HTTPStatus: 200,
			RequestBody: []byte(`{"Currency":"EUR","AmountDebit":25}`), ResponseBody: []byte(`{"Key":"` + c2.Key + `","Status":{"Code":{"Code":190,"Description":"Success"}}}`), Duration: 42 * time.Millisecond},
	}
	return f
}
