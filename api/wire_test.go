package api

import (
	"math/rand/v2"

	"bytes"
	"encoding/json"
	"github.com/shopspring/decimal"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Responses and pushes written from the document's field tables decode and
// re-encode to the same bytes: every field, null-valued ones included, and
// amounts as bare numbers in shortest form.
func TestWireFilesRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "wire", "*.json"))
	if err != nil || len(files) < 17 {
		t.Fatalf("wire files: %v (%d)", err, len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Compact(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			if strings.Contains(f, "-push") {
				p, err := DecodePush(raw)
				if err != nil {
					t.Fatal(err)
				}
				got, err = p.Encode()
				if err != nil {
					t.Fatal(err)
				}
			} else {
				r, err := DecodeResponse(raw)
				if err != nil {
					t.Fatal(err)
				}
				got, err = MarshalCanonical(r)
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("re-encoded differs\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestDecodedFieldsMatchTheDocument(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "wire", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	r, err := DecodeResponse(read("pay-response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.Code.Code != 190 || r.Status.SubCodeString() != SubCodeProcessed || r.Type() != TypeDeferredPay ||
		r.MutationType != MutationDeferred || r.Param(PInvoiceNumber) != "880011223" || r.AmountDebit.Dec().String() != "39.98" {
		t.Fatalf("pay response = %+v", r)
	}
	p, err := DecodePush(read("reserve-push.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Envelope() != EnvelopeDataRequest || p.Kind() != ActionReserve || p.Param(PReservationNumber) != "RSV-7F3A9C21" ||
		p.Status().SubCode != nil || !p.Amount().Dec().IsZero() {
		t.Fatalf("reserve push = %+v", p.DataRequest)
	}
	// The push's DateTime carries an offset; the response's does not and is
	// read as the gateway's Dutch local time.
	if got := p.Status().DateTime.UTC(); !got.Equal(time.Date(2026, 11, 20, 13, 6, 40, 0, time.UTC)) {
		t.Fatalf("push time %v", got)
	}
	if got := r.Status.DateTime.UTC(); !got.Equal(time.Date(2026, 11, 20, 13, 5, 12, 0, time.UTC)) {
		t.Fatalf("response time %v", got)
	}
	g, err := DecodePush(read("giftcard-partial-push.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Status().SubCodeString() != SubCodePartialPayment || g.Related(RelationPartialPayment) == "" {
		t.Fatalf("partial push = %+v", g.Transaction)
	}
	v, err := DecodeResponse(read("validation-491-response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if all := v.RequestErrors.All(); len(all) != 1 || all[0].Name != "BillingEmail" {
		t.Fatalf("request errors = %+v", v.RequestErrors)
	}
}

func TestAmountWireForm(t *testing.T) {
	for in, want := range map[string]string{
		"25": "25", "25.00": "25", "12.50": "12.5", "19.99": "19.99", "0.005": "0.01", "-5.00": "-5",
		"100.30": "100.3", "3.14159": "3.14", "0": "0",
	} {
		b, err := json.Marshal(Request{Currency: "EUR", AmountDebit: MustAmount(in)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"AmountDebit":`+want+",")) {
			t.Errorf("%s encodes as %s, want AmountDebit %s", in, b, want)
		}
	}
	var r Request
	if err := json.Unmarshal([]byte(`{"amountdebit":"12.30","currency":"EUR"}`), &r); err != nil || r.AmountDebit.Dec().String() != "12.3" {
		t.Fatalf("quoted amount: %v %v", r.AmountDebit, err)
	}
}

func TestDecodeLiberally(t *testing.T) {
	body := `{"currency":"EUR","invoice":"I","services":{"serviceList":[{"name":"deferredkp","action":"Pay","version":1,
	"parameters":[{"name":"ReservationNumber","value":123},{"name":"ArticleQuantity","value":2,"groupType":"Article","groupID":7},
	{"name":"Flag","value":true},{"name":"Nothing","value":null}]}]},"ServicesSelectableByClient":"","ExtraThing":{"a":[1,2]}}`
	r, err := DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	ps := r.Service().Parameters
	if ps[0].Value != "123" || ps[1].GroupID != "7" || ps[1].Value != "2" || ps[2].Value != "true" || ps[3].Value != "" {
		t.Fatalf("params = %+v", ps)
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"Currency":"EUR"}`, `{"Currency":"EUR","Services":{"ServiceList":[]}}`, `{} {}`} {
		if _, err := DecodeRequest([]byte(bad)); err == nil {
			t.Errorf("DecodeRequest(%q) accepted", bad)
		}
	}
	for _, bad := range []string{`{}`, `{"Transaction":{"Key":""}}`, `{"Transaction":{"Key":"A"},"DataRequest":{"Key":"B"}}`, `null`} {
		if _, err := DecodePush([]byte(bad)); err == nil {
			t.Errorf("DecodePush(%q) accepted", bad)
		}
	}
}

// Pushes are written without HTML escaping: the family's SDKs verify by
// re-serialising, which would not reproduce \u003c or \/.
func TestCanonicalEncodingKeepsTextRaw(t *testing.T) {
	b, err := MarshalCanonical(Push{Transaction: &TransactionPush{Key: "K", Invoice: "A&B <c> é/ü"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"Invoice":"A&B <c> é/ü"`)) || bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("canonical = %s", b)
	}
}

// The fast path of WireString agrees with decimal's own rounding and
// formatting for every amount of at most two decimals.
func TestWireStringMatchesDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		c := rng.Int64N(2_000_000_000) - 1_000_000_000
		e := -rng.Int32N(4)
		d := decimal.New(c, e)
		if got, want := WireString(d), d.Round(2).String(); got != want {
			t.Fatalf("WireString(%s) = %s, want %s", d, got, want)
		}
	}
}
