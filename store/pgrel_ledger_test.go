package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/internal/pgtest"
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
	db, err := Open(url, Options{Now: func() time.Time { now = now.Add(time.Second + 987*time.Nanosecond); return now }})
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
	if _, err := db.PutOrder(Order{Invoice: "INV-ORDER", Currency: "EUR", Articles: arts[:1], Source: "import orders.csv",
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
			r, err := getReservation(tx, string(k))
			l.reservations[string(k)] = r
			return err
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bTransaction).ForEach(func(k, _ []byte) error {
			if isPushIndexKey(k) {
				return nil
			}
			x, err := getTx(tx, string(k))
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
			s, err := decodeSummary(v)
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
func checkConverted(t *testing.T, e *pgRelEngine, want kvLedger) {
	t.Helper()
	if len(want.reservations) < 5 || len(want.transactions) < 8 || len(want.orphans) != 1 || len(want.refunds) < 3 ||
		len(want.invoices[invOrphan]) != 1 || len(want.invoices[invTransaction]) < 3 {
		t.Fatalf("the layout-7 ledger is smaller than made: %d reservations, %d transactions, %d orphans, %d refunded payments",
			len(want.reservations), len(want.transactions), len(want.orphans), len(want.refunds))
	}
	err := e.view(context.Background(), func(tx *pgRelTx) error {
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
	if pending, err := e.ledgerConversionPending(context.Background()); err != nil || pending {
		t.Errorf("conversion still pending (%v) after it ended", err)
	}
}

// A layout-7 database's ledger reads the same from the tables once
// converted: every reservation (lines included), transaction, key owner
// and orphan request, and the look-ups by number and refunds of a payment.
func TestPgRelConvertLedgerReadsTheSame(t *testing.T) {
	url := layout7Ledger(t)
	want := readKVLedger(t, url)
	e, err := openPgRel(context.Background(), url, true)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.convertLedger(context.Background(), 3, 0); err != nil {
		t.Fatal(err)
	}
	checkConverted(t, e, want)
}

// A conversion cut short (killed between two chunks) goes on where it
// stopped at the next run, and ends reading the same as one run through.
func TestPgRelConvertLedgerCutShortGoesOn(t *testing.T) {
	for _, cut := range []int{1, 4, 7} {
		url := layout7Ledger(t)
		want := readKVLedger(t, url)
		e, err := openPgRel(context.Background(), url, true)
		if err != nil {
			t.Fatal(err)
		}
		err = e.convertLedger(context.Background(), 2, cut)
		if !errors.Is(err, errFillCut) {
			t.Fatalf("cut after %d chunks: %v, want the cut", cut, err)
		}
		if pending, err := e.ledgerConversionPending(context.Background()); err != nil || !pending {
			t.Fatalf("cut after %d chunks: pending %v (%v), want pending", cut, pending, err)
		}
		if err := e.convertLedger(context.Background(), 2, 0); err != nil {
			t.Fatalf("cut after %d chunks, rerun: %v", cut, err)
		}
		checkConverted(t, e, want)
		e.Close()
	}
}
