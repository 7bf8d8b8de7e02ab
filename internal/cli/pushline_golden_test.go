package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/pushlistener"
	"paydesk/store"
)

var updateLines = flag.Bool("update-lines", false, "rewrite testdata/TestPushLineGolden/lines.txt")

// TestPushLineGolden: the listener's human lines, byte for byte, for every
// shape a line takes — an applied push, a duplicate, an ignored one with
// its reason, a rejected request, a data request without an amount, an
// order, and fields from outside holding control characters and escapes,
// which are shown inert.
func TestPushLineGolden(t *testing.T) {
	at := time.Date(2026, 11, 26, 18, 4, 5, 678_000_000, time.UTC)
	cet := time.FixedZone("CET", 3600)
	base := store.PushRecord{ID: 41, ReceivedAt: at, Envelope: api.EnvelopeTransaction, Key: "00000000000000000002D3B37496F577",
		Invoice: "GC-795717662078327", Service: "customgiftcard", Kind: "V238", Status: store.Status{Code: 190, SubCode: "S001"},
		Amount: decimal.RequireFromString("1.5"), HasAmount: true, Currency: "EUR", Signature: "valid"}
	with := func(f func(r *store.PushRecord)) store.PushRecord { r := base; f(&r); return r }
	events := []pushlistener.Event{
		{Record: base, Result: store.ApplyResult{Applied: true}, HTTPStatus: 200},
		{Record: with(func(r *store.PushRecord) { r.ReceivedAt = at.In(cet) }), Result: store.ApplyResult{Duplicate: true}, HTTPStatus: 200},
		{Record: with(func(r *store.PushRecord) { r.Status.SubCode = "" }), Result: store.ApplyResult{Ignored: "older than the status it has"}, HTTPStatus: 200},
		{Record: with(func(r *store.PushRecord) {
			r.Rejected, r.Signature, r.Reason = true, "invalid", "signature: HMAC does not match"
		}), HTTPStatus: 401},
		{Record: with(func(r *store.PushRecord) {
			r.Envelope, r.Kind, r.Amount, r.Status, r.Invoice = api.EnvelopeDataRequest, api.ActionReserve, decimal.Zero, store.Status{}, ""
		}), Result: store.ApplyResult{Applied: true}, HTTPStatus: 200},
		{Record: with(func(r *store.PushRecord) { r.Key, r.Invoice = "K\x1b[2J\u202e", "INV\r\n42" }), Result: store.ApplyResult{Applied: true}, HTTPStatus: 200},
		{Record: store.PushRecord{ReceivedAt: at}, Order: &pushlistener.OrderEvent{Invoice: "INV-1", Outcome: "imported", Lines: 2,
			Amount: decimal.RequireFromString("59.95"), Currency: "EUR", Customer: "Jörg \x07Müller"}, HTTPStatus: 200},
		{Record: store.PushRecord{ReceivedAt: at}, Order: &pushlistener.OrderEvent{Invoice: "", Outcome: "refused", Reason: "bad\tline",
			ReservationKey: "R1"}, HTTPStatus: 400},
	}
	var b bytes.Buffer
	for _, e := range events {
		printLine(&b, e)
	}
	path := filepath.Join("testdata", "TestPushLineGolden", "lines.txt")
	if *updateLines {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestPushLineGolden -update-lines writes it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("lines\n%s\nwant\n%s", b.Bytes(), want)
	}
}

// BenchmarkPrintLine is one applied push's line, as the listener prints it
// for every push it answers.
func BenchmarkPrintLine(b *testing.B) {
	e := pushlistener.Event{Record: store.PushRecord{ID: 41, ReceivedAt: time.Date(2026, 11, 26, 18, 4, 5, 678_000_000, time.UTC), Envelope: api.EnvelopeTransaction,
		Key: "00000000000000000002D3B37496F577", Invoice: "GC-795717662078327", Service: "customgiftcard", Kind: "V238",
		Status: store.Status{Code: 190, SubCode: "S001"}, Amount: decimal.RequireFromString("1.14"), HasAmount: true,
		Currency: "EUR", Signature: "valid"}, Result: store.ApplyResult{Applied: true}, HTTPStatus: 200}
	var w bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		w.Reset()
		printLine(&w, e)
	}
}
