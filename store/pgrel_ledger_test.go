package store

import (
	"context"
	"encoding/json"
	"errors"
	neturl "net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
	"paydesk/store/domain"
	"paydesk/store/kv"
	"paydesk/store/kvlayout"
	"paydesk/store/postgres"
)

// layout7Ledger makes a PostgreSQL database the bucket engine writes
// (paydesk_kv, layout 7) with every shape of ledger record: a reservation
// captured by lines, refunded, updated and cancelled; one declined; one
// seen only in its Reserve push (lines unknown, captured in full by
// amount); an order's placeholder; a data request and a capture that came
// before their reservation (orphans); gift card payments with a partial
// refund. The clock has nanoseconds and a zone of its own, as a real one
// does. It returns the database's URL.
func layout7Ledger(t *testing.T) string {
	t.Helper()
	url := pgtest.Fresh(t)
	zone := time.FixedZone("CET", 3600)
	now := t0.In(zone).Add(123456789 * time.Nanosecond)
	// Written on the kv engine, as the release of 23 Nov wrote it.
	db, err := Open(url, Options{kvEngine: true, Now: func() time.Time { now = now.Add(time.Second + 987*time.Nanosecond); return now }})
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{clock: t0}
	arts := []api.Article{
		{Number: "A-1", Title: "Kaffeemühle «Müller»", Type: "General", Price: dec("49.95"), Quantity: 2, Vat: dec("19")},
		{Number: "A-2", Title: "Filter", Price: dec("3.5"), Quantity: 3, Vat: dec("7.7")},
		{Number: "SHIP", Title: "Versand", Type: "ShipmentFee", Price: dec("4.90"), Quantity: 1, Vat: dec("19")},
		{Number: "D", Title: "Rabatt", Price: dec("-5"), Quantity: 1, Vat: dec("19")},
	}

	full := newScenario(t, db, g, "INV-FULL")
	full.reserve(arts, true)
	c1 := full.capture("103.40", true, api.CaptureLine{ArticleNumber: "A-1", Quantity: 2}, api.CaptureLine{ArticleNumber: "A-2", Quantity: 1})
	full.refund(c1, "10.00", true)
	full.update([]api.Article{arts[0], {Number: "A-2", Title: "Filter", Price: dec("3.5"), Quantity: 2, Vat: dec("7.7")}, arts[2]}, true)
	full.cancel(true)

	open := newScenario(t, db, g, "INV-OPEN")
	open.reserve(arts[:2], true)
	c2 := open.capture("99.90", true, api.CaptureLine{ArticleNumber: "A-1", Quantity: 2})
	open.refund(c2, "99.90", true)

	// Declined: the Reserve's push says 690.
	declined := g.key()
	push(t, db, dataPush(declined, "INV-DECL", api.ActionReserve, g.status(690, "")))

	// Seen only in its Reserve push, captured elsewhere in full by amount.
	pushOnly := g.key()
	push(t, db, dataPush(pushOnly, "INV-PUSH", api.ActionReserve, g.status(api.StatusSuccess, ""),
		api.ResponseParameter{Name: api.PReservationNumber, Value: "RES-PUSHONLY"}))
	push(t, db, txPush(g.key(), "INV-PUSH", api.ServiceDeferred, api.TypeDeferredPay, dec("12.34"), g.status(api.StatusSuccess, ""), nil,
		api.ResponseParameter{Name: api.PReservationNumber, Value: "RES-PUSHONLY"}))

	// An order whose Reserve has not come: its placeholder.
	if _, err := db.PutOrder(t.Context(), Order{Invoice: "INV-ORDER", Currency: "EUR", Articles: arts[:1], Source: "import orders.csv",
		Billing: api.Address{FirstName: "Zoë", LastName: "Ångström", Email: "zoe@example.se", Country: "SE"}}); err != nil {
		t.Fatal(err)
	}

	// Pushes before their reservation: a cancel and a capture of an
	// invoice no reservation has yet.
	push(t, db, dataPush(g.key(), "INV-LATER", api.ActionCancelReservation, g.status(api.StatusPendingProcessing, "")))
	push(t, db, txPush(g.key(), "INV-LATER", api.ServiceDeferred, api.TypeDeferredPay, dec("5"), g.status(api.StatusSuccess, ""), nil))

	// Gift cards: a partial payment and a refund of it.
	gp := g.key()
	push(t, db, txPush(gp, "INV-GIFT", "vouchera", api.TypeGiftCardPay, dec("25"), g.status(api.StatusSuccess, ""),
		[]api.RelatedTransaction{{RelationType: api.RelationPartialPayment, RelatedTransactionKey: "GROUP-1"}}))
	push(t, db, txPush(g.key(), "INV-GIFT", "vouchera", api.TypeGiftCardRefund, dec("7.5"), g.status(api.StatusSuccess, ""),
		[]api.RelatedTransaction{{RelationType: api.RelationRefund, RelatedTransactionKey: gp}}))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return url
}

// kvLedger is the ledger as the bucket engine reads it: every record of
// its buckets, decoded.
type kvLedger struct {
	reservations map[string]*Reservation
	transactions map[string]*Transaction
	owners       map[string]string
	orphans      map[string]*orphanRequest
	numbers      map[string]string            // reservation number → key
	refunds      map[string][]string          // original → refunds, as the related bucket has them
	invoices     map[byte]map[string][]string // kind → invoice → keys, as the invoice index has them
	summaries    []Summary
}

func readKVLedger(t *testing.T, url string) kvLedger {
	t.Helper()
	eng, err := openPostgres(context.Background(), url, false)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	l := kvLedger{reservations: map[string]*Reservation{}, transactions: map[string]*Transaction{}, owners: map[string]string{},
		orphans: map[string]*orphanRequest{}, numbers: map[string]string{}, refunds: map[string][]string{},
		invoices: map[byte]map[string][]string{invReservation: {}, invTransaction: {}, invOrphan: {}}}
	err = eng.View(func(tx Tx) error {
		if err := tx.Bucket(bReservation).ForEach(func(k, _ []byte) error {
			r, err := kv.TxRepo(tx).Reservation(string(k))
			l.reservations[string(k)] = r
			return err
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bTransaction).ForEach(func(k, _ []byte) error {
			if kvlayout.IsPushIndexKey(k) {
				return nil
			}
			x, err := kv.TxRepo(tx).Transaction(string(k))
			l.transactions[string(k)] = x
			return err
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bKeyOwner).ForEach(func(k, v []byte) error { l.owners[string(k)] = string(v); return nil }); err != nil {
			return err
		}
		if err := tx.Bucket(bResNumber).ForEach(func(k, v []byte) error { l.numbers[string(k)] = string(v); return nil }); err != nil {
			return err
		}
		if err := tx.Bucket(bInvoice).ForEach(func(k, v []byte) error {
			inv, key, _ := cutZero(k)
			l.invoices[v[0]][inv] = append(l.invoices[v[0]][inv], key)
			return nil
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bSummary).ForEach(func(_, v []byte) error {
			s, err := kvlayout.DecodeSummary(v)
			l.summaries = append(l.summaries, s)
			return err
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bRelated).ForEach(func(k, _ []byte) error {
			orig, refund, _ := cutZero(k)
			l.refunds[orig] = append(l.refunds[orig], refund)
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bOrphan).ForEach(func(k, v []byte) error {
			var o orphanRequest
			l.orphans[string(k)] = &o
			return json.Unmarshal(v, &o)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func cutZero(k []byte) (string, string, bool) {
	for i, c := range k {
		if c == 0 {
			return string(k[:i]), string(k[i+1:]), true
		}
	}
	return string(k), "", false
}

// normTimes sets every time in v to what a timestamptz keeps of it: the
// instant to the microsecond, in UTC.
func normTimes(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			normTimes(v.Elem())
		}
	case reflect.Struct:
		if t, ok := v.Addr().Interface().(*time.Time); ok {
			if !t.IsZero() {
				*t = t.Truncate(time.Microsecond).UTC()
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				normTimes(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			normTimes(v.Index(i))
		}
	}
}

// sameRecord fails the test when got does not read as want (a record of
// the bucket engine), times taken as a timestamptz keeps them.
func sameRecord(t *testing.T, what string, want, got any) {
	t.Helper()
	normTimes(reflect.ValueOf(want))
	normTimes(reflect.ValueOf(got))
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(w) != string(g) {
		t.Errorf("%s reads differently after the conversion:\nwant %s\ngot  %s", what, w, g)
	}
}

// checkConverted reads every record of want from the tables and through
// each look-up the rules make, and compares.
func checkConverted(t *testing.T, e *postgres.Engine, want kvLedger) {
	t.Helper()
	if len(want.reservations) < 5 || len(want.transactions) < 8 || len(want.orphans) != 1 || len(want.refunds) < 3 ||
		len(want.invoices[invOrphan]) != 1 || len(want.invoices[invTransaction]) < 3 {
		t.Fatalf("the layout-7 ledger is smaller than made: %d reservations, %d transactions, %d orphans, %d refunded payments",
			len(want.reservations), len(want.transactions), len(want.orphans), len(want.refunds))
	}
	err := e.ViewTx(context.Background(), func(tx *postgres.Tx) error {
		for k, r := range want.reservations {
			got, err := tx.Reservation(k)
			if err != nil {
				return err
			}
			if got == nil {
				t.Errorf("reservation %s: missing after the conversion", k)
				continue
			}
			sameRecord(t, "reservation "+k, r, got)
		}
		sums, err := tx.Summaries()
		if err != nil {
			return err
		}
		sameRecord(t, "the reservation list", want.summaries, sums)
		for num, k := range want.numbers {
			got, err := tx.ReservationKeyByNumber(num)
			if err != nil {
				return err
			}
			if got != k {
				t.Errorf("reservation number %s: %q, want %q", num, got, k)
			}
		}
		for k, x := range want.transactions {
			got, err := tx.Transaction(k)
			if err != nil {
				return err
			}
			if got == nil {
				t.Errorf("transaction %s: missing after the conversion", k)
				continue
			}
			sameRecord(t, "transaction "+k, x, got)
		}
		for orig, keys := range want.refunds {
			got, err := tx.RefundKeys(orig)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, keys) {
				t.Errorf("refunds of %s: %v, want %v", orig, got, keys)
			}
		}
		for k, owner := range want.owners {
			got, err := tx.OwnerOf(k)
			if err != nil {
				return err
			}
			if got != owner {
				t.Errorf("owner of %s: %q, want %q", k, got, owner)
			}
		}
		for k, o := range want.orphans {
			got, err := tx.Orphan(k)
			if err != nil {
				return err
			}
			if got == nil {
				t.Errorf("orphan request %s: missing after the conversion", k)
				continue
			}
			sameRecord(t, "orphan request "+k, o, got)
		}
		for kind, byInv := range want.invoices {
			lookup := map[byte]func(string) ([]string, error){invReservation: tx.ReservationKeysByInvoice,
				invTransaction: tx.TransactionKeysByInvoice, invOrphan: tx.OrphanKeysByInvoice}[kind]
			for inv, keys := range byInv {
				got, err := lookup(inv)
				if err != nil {
					return err
				}
				if !reflect.DeepEqual(got, keys) {
					t.Errorf("invoice %s, records of kind %c: %v, want %v", inv, kind, got, keys)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pending, err := e.LedgerConversionPending(context.Background()); err != nil || pending {
		t.Errorf("conversion still pending (%v) after it ended", err)
	}
}

// A layout-7 database's ledger reads the same from the tables once
// converted: every reservation (lines included), transaction, key owner
// and orphan request, and the look-ups by number and refunds of a payment.
func TestPgRelConvertLedgerReadsTheSame(t *testing.T) {
	pgtest.OwnEngine(t)
	url := layout7Ledger(t)
	want := readKVLedger(t, url)
	e, err := postgres.Open(context.Background(), url, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.ConvertLedger(context.Background(), 3, 0); err != nil {
		t.Fatal(err)
	}
	checkConverted(t, e, want)
}

// A conversion cut short (killed between two chunks) goes on where it
// stopped at the next run, and ends reading the same as one run through.
func TestPgRelConvertLedgerCutShortGoesOn(t *testing.T) {
	pgtest.OwnEngine(t)
	for _, cut := range []int{1, 4, 7} {
		url := layout7Ledger(t)
		want := readKVLedger(t, url)
		e, err := postgres.Open(context.Background(), url, true)
		if err != nil {
			t.Fatal(err)
		}
		err = e.ConvertLedger(context.Background(), 2, cut)
		if !errors.Is(err, domain.ErrFillCut) {
			t.Fatalf("cut after %d chunks: %v, want the cut", cut, err)
		}
		if pending, err := e.LedgerConversionPending(context.Background()); err != nil || !pending {
			t.Fatalf("cut after %d chunks: pending %v (%v), want pending", cut, pending, err)
		}
		if err := e.ConvertLedger(context.Background(), 2, 0); err != nil {
			t.Fatalf("cut after %d chunks, rerun: %v", cut, err)
		}
		checkConverted(t, e, want)
		e.Close()
	}
}

// freshPgRel opens a fresh database on the native engine (skipped without
// a server).
func freshPgRel(t *testing.T) *postgres.Engine {
	t.Helper()
	e, err := postgres.Open(context.Background(), freshNative(t), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// ledgerReservation is a reservation with lines, requests and
// transactions, its ledger recomputed as the rules leave it.
func ledgerReservation(key, number, invoice string, created time.Time) *Reservation {
	r := &Reservation{Key: key, ReservationNumber: number, Invoice: invoice, Currency: "EUR", CustomerName: "Jörg Müller",
		CustomerEmail: "jm@example.de", Country: "DE", LinesKnown: true, Created: created, Updated: created.Add(time.Second),
		Status:   Status{Code: api.StatusSuccess, Time: created},
		Original: Update{Articles: []api.Article{{Number: "A-1", Title: "Mühle", Price: dec("49.95"), Quantity: 2, Vat: dec("19")}}},
		Lines: []Line{{ArticleNumber: "A-1", Title: "Mühle", Price: dec("49.95"), Vat: dec("19"), Reserved: 2, Captured: 1, Refunded: 1},
			{ArticleNumber: "F", Title: "Filter", Price: dec("3.5"), Vat: dec("7.7"), Reserved: 3}},
		Requests:       []Request{{Key: key, Action: api.ActionReserve, Status: Status{Code: api.StatusSuccess, Time: created}}},
		Transactions:   []string{key + "-C1", key + "-R1"},
		CapturedAmount: dec("49.95"), RefundedAmount: dec("49.95"), InvoiceNumbers: []string{"INV-9"}}
	return r
}

// The ledger's writes on the native engine keep the contract: a record
// reads back as put, a number leads to the reservation put last with it,
// a deleted reservation leaves no look-up behind, a refund is linked
// once, and the invoice look-ups keep the kinds the rules look for.
func TestPgRelLedgerWrites(t *testing.T) {
	pgtest.OwnEngine(t)
	e := freshPgRel(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 10, 0, 0, 123456000, time.UTC)
	r1 := ledgerReservation("K1", "RES-1", "INV-1", at)
	r2 := ledgerReservation("K2", "RES-2", "INV-1", at.Add(time.Hour))
	step := func(name string, fn func(tx *postgres.Tx) error) {
		t.Helper()
		if err := e.UpdateTx(ctx, fn); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	step("put", func(tx *postgres.Tx) error {
		for i, r := range []*Reservation{r1, r2, r1} {
			created, err := tx.PutReservation(r)
			if err != nil {
				return err
			}
			if created != (i < 2) {
				t.Errorf("put %d of %s: created %v", i, r.Key, created)
			}
		}
		got, err := tx.Reservation("K1")
		if err != nil {
			return err
		}
		sameRecord(t, "reservation K1", r1, got)
		keys, err := tx.ReservationKeysByInvoice("INV-1")
		if err != nil || !reflect.DeepEqual(keys, []string{"K1", "K2"}) {
			t.Errorf("reservations of INV-1: %v (%v)", keys, err)
		}
		for _, k := range []string{"K1", "K1-C1", "K1-R1"} {
			if owner, err := tx.OwnerOf(k); err != nil || owner != "K1" {
				t.Errorf("owner of %s: %q (%v)", k, owner, err)
			}
		}
		return nil
	})
	// The amounts read as `paydesk show` prints them.
	var captured, amount, price string
	if err := e.Pool().QueryRow(ctx, `SELECT captured::text, amount::text FROM paydesk_reservations WHERE key = 'K1'`).Scan(&captured, &amount); err != nil {
		t.Fatal(err)
	}
	if err := e.Pool().QueryRow(ctx, `SELECT price::text FROM paydesk_lines WHERE reservation_key = 'K1' AND article_number = 'F'`).Scan(&price); err != nil {
		t.Fatal(err)
	}
	if captured != r1.CapturedAmount.StringFixed(2) || amount != r1.Amount().StringFixed(2) || price != "3.50" {
		t.Errorf("SQL reads captured %s, amount %s, price %s; show prints %s, %s, 3.50", captured, amount, price,
			r1.CapturedAmount.StringFixed(2), r1.Amount().StringFixed(2))
	}

	step("a number claimed again", func(tx *postgres.Tx) error {
		r3 := ledgerReservation("K3", "RES-1", "INV-3", at)
		if _, err := tx.PutReservation(r3); err != nil {
			return err
		}
		if k, err := tx.ReservationKeyByNumber("RES-1"); err != nil || k != "K3" {
			t.Errorf("RES-1 leads to %q (%v), want K3, the last put", k, err)
		}
		if err := tx.DeleteReservation("K3"); err != nil {
			return err
		}
		if r, err := tx.Reservation("K3"); err != nil || r != nil {
			t.Errorf("K3 after its delete: %v (%v)", r, err)
		}
		for _, k := range []string{"K3", "K3-C1"} {
			if owner, err := tx.OwnerOf(k); err != nil || owner != "" {
				t.Errorf("owner of %s after the delete: %q (%v)", k, owner, err)
			}
		}
		if k, err := tx.ReservationKeyByNumber("RES-1"); err != nil || k != "" {
			t.Errorf("RES-1 after K3's delete leads to %q (%v)", k, err)
		}
		var lines int
		if err := tx.QueryRow(`SELECT count(*) FROM paydesk_lines WHERE reservation_key = 'K3'`).Scan(&lines); err != nil || lines != 0 {
			t.Errorf("K3's lines after the delete: %d (%v)", lines, err)
		}
		return nil
	})

	step("transactions", func(tx *postgres.Tx) error {
		xs := []*Transaction{
			{Key: "K1-C1", Kind: KindCapture, Invoice: "INV-1", Amount: dec("49.95"), Status: Status{Code: 190, Time: at},
				ReservationKey: "K1", Lines: []api.CaptureLine{}, Refunded: dec("49.95"), Refunds: []string{"K1-R1"}, Created: at},
			{Key: "K1-R1", Kind: KindRefund, Invoice: "INV-1", Amount: dec("49.95"), Original: "K1-C1", Status: Status{Code: 190, Time: at}},
			{Key: "G1", Kind: KindGiftCardPay, Invoice: "INV-1", Amount: dec("10"), Group: "GRP",
				Custom: []api.NameValue{{Name: "shop", Value: "a\tb"}}, Parcels: []Parcel{{ID: "P1", Tracking: "T1"}}},
			{Key: "GRP", Kind: KindGiftCardRemainder, Amount: dec("2.5")},
		}
		for _, x := range xs {
			created, err := tx.PutTransaction(x)
			if err != nil {
				return err
			}
			if !created {
				t.Errorf("first put of %s: not created", x.Key)
			}
			got, err := tx.Transaction(x.Key)
			if err != nil {
				return err
			}
			sameRecord(t, "transaction "+x.Key, x, got)
		}
		if created, err := tx.PutTransaction(xs[0]); err != nil || created {
			t.Errorf("second put of K1-C1: created %v (%v)", created, err)
		}
		if keys, err := tx.TransactionKeysByInvoice("INV-1"); err != nil || !reflect.DeepEqual(keys, []string{"K1-C1", "K1-R1"}) {
			t.Errorf("captures and refunds of INV-1: %v (%v)", keys, err)
		}
		if g, err := tx.TransactionGroup("GRP"); err != nil || len(g) != 2 {
			t.Errorf("gift card group: %d transactions (%v), want 2", len(g), err)
		}
		for _, l := range [][2]string{{"K1-C1", "b"}, {"K1-C1", "K1-R1"}, {"K1-C1", "K1-R1"}, {"K1-C1", "B"}} {
			if err := tx.LinkRefund(l[0], l[1]); err != nil {
				return err
			}
		}
		if keys, err := tx.RefundKeys("K1-C1"); err != nil || !reflect.DeepEqual(keys, []string{"B", "K1-R1", "b"}) {
			t.Errorf("refunds of K1-C1: %v (%v), want byte order, each once", keys, err)
		}
		return nil
	})

	step("orphans", func(tx *postgres.Tx) error {
		o := &orphanRequest{Request: Request{Key: "D1", Action: api.ActionCancelReservation, Status: Status{Code: 791, Time: at}}, Invoice: "INV-7"}
		if err := tx.PutOrphan(o); err != nil {
			return err
		}
		got, err := tx.Orphan("D1")
		if err != nil {
			return err
		}
		sameRecord(t, "orphan D1", o, got)
		if keys, err := tx.OrphanKeysByInvoice("INV-7"); err != nil || !reflect.DeepEqual(keys, []string{"D1"}) {
			t.Errorf("orphans of INV-7: %v (%v)", keys, err)
		}
		if err := tx.DeleteOrphan("D1"); err != nil {
			return err
		}
		if keys, err := tx.OrphanKeysByInvoice("INV-7"); err != nil || len(keys) != 0 {
			t.Errorf("orphans of INV-7 after the delete: %v (%v)", keys, err)
		}
		return nil
	})
}

// What the database's types cannot keep exactly is refused, naming the
// record and the field, and nothing of the transaction is written.
func TestPgRelLedgerRefusesWhatItCannotKeep(t *testing.T) {
	pgtest.OwnEngine(t)
	e := freshPgRel(t)
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, want string
		change     func(r *Reservation)
	}{
		{"NUL in a name", "customer holds a NUL byte", func(r *Reservation) { r.CustomerName = "Ann\x00a" }},
		{"NUL in an address", "billing address holds a NUL byte", func(r *Reservation) { r.Billing.Street = "a\x00" }},
		{"a tenth of a cent", "line 2: price 3.505", func(r *Reservation) { r.Lines[1].Price = dec("3.505") }},
		{"too large", "captured 1000000000000", func(r *Reservation) { r.CapturedAmount = dec("1000000000000") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ledgerReservation("K-"+c.name, "", "INV", at)
			c.change(r)
			err := e.UpdateTx(context.Background(), func(tx *postgres.Tx) error {
				if _, err := tx.PutTransaction(&Transaction{Key: "T-" + c.name, Kind: KindCapture, Amount: dec("1")}); err != nil {
					return err
				}
				_, err := tx.PutReservation(r)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), r.Key) {
				t.Fatalf("put: %v, want an error naming %s and %q", err, r.Key, c.want)
			}
			var n int
			if err := e.Pool().QueryRow(context.Background(), `SELECT count(*) FROM paydesk_transactions WHERE key = $1`, "T-"+c.name).Scan(&n); err != nil || n != 0 {
				t.Errorf("the refused transaction wrote %d rows (%v)", n, err)
			}
		})
	}
}

// The conversion runs at open: a role that may only read is refused while
// it is due (it would see part of the ledger), and the first open by a
// role that may write converts it, also after an open that was cut short.
func TestPgRelConvertLedgerAtOpen(t *testing.T) {
	pgtest.OwnEngine(t)
	url := layout7Ledger(t)
	want := readKVLedger(t, url)
	ctx := context.Background()
	owner, err := postgres.Open(ctx, url, true)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()

	role := "paydesk_test_reader_" + strings.ToLower(t.Name())
	role = role[:min(len(role), 60)]
	exec := func(q string) {
		t.Helper()
		if _, err := owner.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = owner.Pool().Exec(ctx, `DROP OWNED BY `+role)
	_, _ = owner.Pool().Exec(ctx, `DROP ROLE IF EXISTS `+role)
	exec(`CREATE ROLE ` + role + ` LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ` + role)
	t.Cleanup(func() { _, _ = owner.Pool().Exec(ctx, `DROP OWNED BY `+role+`; DROP ROLE IF EXISTS `+role) })
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	u.User = neturl.User(role)
	reader, err := postgres.Open(ctx, u.String(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := reader.ConvertLedgerAtOpen(ctx, 0, 0); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("a reader's open while the conversion is due: %v, want ErrNeedsMigration", err)
	}

	if err := owner.ConvertLedgerAtOpen(ctx, 3, 2); !errors.Is(err, domain.ErrFillCut) {
		t.Fatalf("an open cut short: %v", err)
	}
	if err := owner.ConvertLedgerAtOpen(ctx, 3, 0); err != nil {
		t.Fatal(err)
	}
	checkConverted(t, owner, want)
	if err := reader.ConvertLedgerAtOpen(ctx, 0, 0); err != nil {
		t.Fatalf("a reader's open once converted: %v", err)
	}
}

// Two processes opening the database at once take turns: each chunk is
// converted once, and both opens end with the whole ledger.
func TestPgRelConvertLedgerTwoAtOnce(t *testing.T) {
	pgtest.OwnEngine(t)
	url := layout7Ledger(t)
	want := readKVLedger(t, url)
	ctx := context.Background()
	var es [2]*postgres.Engine
	for i := range es {
		e, err := postgres.Open(ctx, url, true)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		es[i] = e
	}
	errs := make(chan error, len(es))
	for _, e := range es {
		go func() { errs <- e.ConvertLedgerAtOpen(ctx, 2, 0) }()
	}
	for range es {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkConverted(t, es[1], want)
}
