package store

import (
	"encoding/json"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/store/kvlayout"
)

// TestReservationRecordBinary: a reservation is written in the binary
// form; a JSON record (as layout 7 wrote it) beside it reads the same
// through Reservation and ReservationLedgers, and turns binary when it is
// next written.
func TestReservationRecordBinary(t *testing.T) {
	db := openTest(t)
	if db.Shared() {
		t.Skip("the bucket records are bbolt's; the PostgreSQL engine keeps typed tables")
	}
	created := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	mk := func(key, number, invoice string) *Reservation {
		r := &Reservation{Key: key, ReservationNumber: number, Invoice: invoice, Currency: "EUR", CustomerName: "Eva Smit",
			Billing: api.Address{FirstName: "Eva", LastName: "Smit", City: "Utrecht"}, LinesKnown: true,
			Original: Update{Articles: []api.Article{{Number: "A1", Title: "Cap", Price: dec("17.49"), Quantity: 2, Vat: dec("21")}}},
			Status:   Status{Code: api.StatusSuccess, Time: created}, Created: created, CapturedAmount: dec("17.49")}
		r.Requests = []Request{{Key: key, Action: api.ActionReserve, Status: r.Status}}
		return r
	}
	fresh, old := mk("KEYBINARY", "R1", "INV-1"), mk("KEYJSON", "R2", "INV-2")
	if err := db.PutReservations(t.Context(), []*Reservation{fresh, old}); err != nil {
		t.Fatal(err)
	}
	raw := func(key string) []byte {
		var v []byte
		if err := db.bk.Engine().View(func(tx Tx) error {
			v = append(v, tx.Bucket(bReservation).Get([]byte(key))...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := raw(fresh.Key); kvlayout.IsJSONRecord(v) || len(v) == 0 {
		t.Fatalf("a new reservation was written as %q, want the binary form", v)
	}
	// The second record as layout 7 left it.
	stored, err := db.Reservation(t.Context(), old.Key)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.bk.Engine().Update(func(tx Tx) error { return tx.Bucket(bReservation).Put([]byte(old.Key), js) }); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Reservation(t.Context(), old.Key); err != nil || string(mustJSON(t, got)) != string(js) {
		t.Fatalf("the JSON record reads otherwise (%v):\n%s\nwant\n%s", err, mustJSON(t, got), js)
	}
	ledgers, err := db.ReservationLedgers(t.Context(), []string{old.Key, fresh.Key})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Reservation{old, fresh} {
		whole, err := db.Reservation(t.Context(), r.Key)
		if err != nil {
			t.Fatal(err)
		}
		l := ledgers[r.Key]
		if l == nil || !l.Billing.IsZero() || l.Original.Articles != nil ||
			string(mustJSON(t, l.Lines)) != string(mustJSON(t, whole.Lines)) || l.Status != whole.Status ||
			l.Invoice != whole.Invoice || l.CustomerName != whole.CustomerName || !l.CapturedAmount.Equal(whole.CapturedAmount) {
			t.Fatalf("ledger of %s: %+v\nwant the ledger of %+v", r.Key, l, whole)
		}
	}
	old.CustomerName = "Eva de Vries"
	if err := db.PutReservations(t.Context(), []*Reservation{old}); err != nil {
		t.Fatal(err)
	}
	if v := raw(old.Key); kvlayout.IsJSONRecord(v) {
		t.Fatal("a JSON record stayed JSON when it was written again")
	}
	if got, err := db.Reservation(t.Context(), old.Key); err != nil || got.CustomerName != "Eva de Vries" {
		t.Fatalf("rewritten record: %+v, %v", got, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
