package reconcile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

var creds = api.Credentials{WebsiteKey: "SHOP1", SecretKey: "reconcile-test-secret"}

// The sandbox settles what it captured and refunded on the day's
// statement, with its fee. One line removed, one foreign line added and
// one amount changed give each outcome once; the rest match; the fees and
// the payout's totals add up.
func TestStatementOutcomes(t *testing.T) {
	now := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, PushURL: "http://127.0.0.1:9/nowhere", Seed: 5,
		Now: func() time.Time { return now }, SettleFee: dec("0.25")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); _ = sb.Close() })
	gw, err := api.NewClient(api.Config{BaseURL: srv.URL, Credentials: creds, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var booked []Booked
	for i := range 4 {
		inv := fmt.Sprintf("ORDER-%d", i)
		res, err := gw.Send(ctx, api.Reserve{Currency: "EUR", Invoice: inv, ClientIP: api.ClientIP{Address: "192.0.2.7"},
			Articles: []api.Article{{Number: "MUG", Title: "Mug", Price: dec("12.50"), Quantity: 2, Vat: dec("21")}},
			Billing: api.Address{FirstName: "Anna", LastName: "Bakker", Street: "Dorpsstraat", HouseNumber: "1", PostalCode: "1234AB",
				City: "Utrecht", Country: "NL", Email: "a@example.nl", PhoneNumber: "0301234567"}, ShippingSameAsBilling: true,
			Customer: api.Customer{Gender: 2, OperatingCountry: "NL", Pno: "01011990"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := sb.Approve(ctx, res.Key); err != nil {
			t.Fatal(err)
		}
		st, err := gw.DataRequestStatus(ctx, res.Key)
		if err != nil {
			t.Fatal(err)
		}
		capt, err := gw.Send(ctx, api.Capture{Currency: "EUR", Invoice: inv, ReservationNumber: st.Param(api.PReservationNumber), Amount: dec("25")})
		if err != nil || capt.Status.Code.Code != api.StatusSuccess {
			t.Fatalf("capture: %v %+v", err, capt)
		}
		booked = append(booked, Booked{Key: capt.Key, Invoice: inv, Kind: "capture", Currency: "EUR", Amount: dec("25"), At: now})
		if i == 0 {
			ref, err := gw.Send(ctx, api.Refund{Currency: "EUR", Invoice: inv, OriginalTransactionKey: capt.Key, Amount: dec("12.5")})
			if err != nil || ref.Status.Code.Code != api.StatusSuccess {
				t.Fatalf("refund: %v %+v", err, ref)
			}
			booked = append(booked, Booked{Key: ref.Key, Invoice: inv, Kind: "refund", Currency: "EUR", Amount: dec("-12.5"), At: now})
		}
	}
	resp, err := http.Get(srv.URL + sandbox.PathStatement + "?date=2026-11-25")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("statement: HTTP %d %s", resp.StatusCode, body)
	}
	lines, err := Read(strings.NewReader(string(body)), "statement.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 5 {
		t.Fatalf("the statement has %d lines, want 5 (4 captures, 1 refund):\n%s", len(lines), body)
	}
	all := Reconcile(lines, booked, Options{})
	if all.Counts[Matched] != 5 || len(all.Unsettled) != 0 {
		t.Fatalf("the whole statement: %v, want 5 matched", all.Counts)
	}
	if p := all.Payouts; len(p) != 1 || p[0].Reference != "PO-20261125-SHOP1" || p[0].Lines != 5 ||
		!p[0].Gross.Equal(dec("87.5")) || !p[0].Fees.Equal(dec("1.25")) || !p[0].Net.Equal(dec("86.25")) {
		t.Fatalf("payouts %+v, want PO-20261125-SHOP1: 5 lines, 87.50 gross, 1.25 fees, 86.25 net", p)
	}

	// The bookkeeper's copy: the second capture's line is gone, a line
	// paydesk never booked is added and the third capture's amount differs.
	var edited []Line
	for _, l := range lines {
		switch l.Key {
		case booked[2].Key:
			continue
		case booked[3].Key:
			l.Gross, l.Net = dec("24"), dec("23.75")
		}
		edited = append(edited, l)
	}
	edited = append(edited, Line{Source: "x", Payout: "PO-20261125-SHOP1", Date: lines[0].Date, Key: "FOREIGN", Invoice: "ORDER-99",
		Currency: "EUR", Gross: dec("10"), Net: dec("10")})
	got := Reconcile(edited, booked, Options{})
	want := map[Outcome]int{Matched: 3, Unsettled: 1, Unknown: 1, Differs: 1}
	for o, n := range want {
		if got.Counts[o] != n {
			t.Errorf("%s: %d, want %d (all: %v)", o, got.Counts[o], n, got.Counts)
		}
	}
	if len(got.Unsettled) != 1 || got.Unsettled[0].Key != booked[2].Key {
		t.Errorf("unsettled %+v, want the removed capture", got.Unsettled)
	}
	for _, m := range got.Lines {
		switch m.Line.Key {
		case "FOREIGN":
			if m.Outcome != Unknown || m.Booked != nil {
				t.Errorf("the foreign line: %+v", m)
			}
		case booked[3].Key:
			if m.Outcome != Differs || !m.Booked.Amount.Equal(dec("25")) {
				t.Errorf("the changed line: %+v", m)
			}
		}
	}
	// Not yet due: with three days to settle, today's captures are not
	// unsettled on today's statement.
	if late := Reconcile(edited, booked, Options{SettleDays: 3}); len(late.Unsettled) != 0 {
		t.Errorf("with 3 settle days: unsettled %+v, want none", late.Unsettled)
	}
}

// A line without a key matches by invoice and amount, once.
func TestMatchByInvoice(t *testing.T) {
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	booked := []Booked{{Key: "A", Invoice: "INV-1", Currency: "EUR", Amount: dec("10"), At: day}}
	lines := []Line{
		{Invoice: "INV-1", Currency: "EUR", Gross: dec("10"), Date: day},
		{Invoice: "INV-1", Currency: "EUR", Gross: dec("10"), Date: day},
	}
	got := Reconcile(lines, booked, Options{})
	if got.Lines[0].Outcome != Matched || !got.Lines[0].ByInvoice || got.Lines[1].Outcome != Unknown {
		t.Fatalf("got %+v %+v, want matched by invoice, then unknown", got.Lines[0], got.Lines[1])
	}
	twice := Reconcile([]Line{{Key: "A", Currency: "EUR", Gross: dec("10"), Date: day}, {Key: "A", Currency: "EUR", Gross: dec("10"), Date: day}}, booked, Options{})
	if twice.Lines[0].Outcome != Matched || twice.Lines[1].Outcome != Differs || !twice.Lines[1].Twice {
		t.Fatalf("a key paid twice: %+v", twice.Lines)
	}
}

func TestReadCamt053(t *testing.T) {
	f, err := os.Open("testdata/camt053.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := Read(f, "camt053.xml")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key, invoice, payout, gross, fee, net string
	}{
		{"7145B2EB7193D770274B1C673872E17B", "ORDER-1001", "PO-20261125-SHOP1", "25", "0.25", "24.75"},
		{"", "ORDER-1002", "PO-20261125-SHOP1", "37.5", "0", "37.5"},
		{"108893F72E7A37435718D447DD71A6B5", "ORDER-1001", "PO-20261125-SHOP1", "-12.5", "0", "-12.5"},
		{"", "", "FEE-NOV", "-5", "0", "-5"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		if l.Key != w.key || l.Invoice != w.invoice || l.Payout != w.payout || !l.Gross.Equal(dec(w.gross)) || !l.Fee.Equal(dec(w.fee)) ||
			!l.Net.Equal(dec(w.net)) || l.Currency != "EUR" || l.Date.Format(time.DateOnly) != "2026-11-25" {
			t.Errorf("line %d: %+v, want %+v", i, l, w)
		}
	}
}
