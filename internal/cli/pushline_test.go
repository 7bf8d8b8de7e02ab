package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/pushlistener"
	"paydesk/store"
)

// TestReservePushShowsNoAmount: a Reserve push carries AmountDebit 0 by the
// spec; the listener's line, its JSON and `pushes --json` show no amount
// for it (not "amount 0.00 EUR"), and a capture push keeps its amount.
func TestReservePushShowsNoAmount(t *testing.T) {
	reserve := store.PushRecord{ID: 1, ReceivedAt: time.Unix(0, 0).UTC(), Envelope: api.EnvelopeDataRequest, Kind: api.ActionReserve, Key: "K",
		Amount: decimal.Zero, HasAmount: true, Currency: "EUR", Signature: "valid", Status: store.Status{Code: 190}}
	capture := reserve
	capture.Envelope, capture.Kind, capture.Amount = api.EnvelopeTransaction, "C700", decimal.RequireFromString("59.95")
	for _, c := range []struct {
		rec  store.PushRecord
		want string // "" for no amount
	}{{reserve, ""}, {capture, "59.95"}} {
		t.Run(c.rec.Kind, func(t *testing.T) {
			e := pushlistener.Event{Record: c.rec, HTTPStatus: 200}
			var b bytes.Buffer
			printLine(&b, e)
			line := b.String()
			if c.want == "" && strings.Contains(line, "amount") || c.want != "" && !strings.Contains(line, "amount "+c.want+" EUR") {
				t.Errorf("line %q, want amount %q", line, c.want)
			}
			b.Reset()
			printJSON(&b, e)
			var l map[string]any
			if err := json.Unmarshal(b.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			if got, _ := l["amount"].(string); got != c.want {
				t.Errorf("listen --json amount %q, want %q", got, c.want)
			}
			if got := pushOut(&c.rec).Amount; got != c.want {
				t.Errorf("pushes --json amount %q, want %q", got, c.want)
			}
		})
	}
}

// The listener's JSON lines write times in UTC, as every other command's
// JSON does, whatever zone the record was read in.
func TestListenJSONTimesInUTC(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 25, 17, 31, 54, 0, cet)
	e := pushlistener.Event{Record: store.PushRecord{ID: 1, ReceivedAt: at, Envelope: api.EnvelopeTransaction, Key: "K",
		Signature: "valid", Status: store.Status{Code: 190, Time: at}}, HTTPStatus: 200}
	var b bytes.Buffer
	printJSON(&b, e)
	var l map[string]any
	if err := json.Unmarshal(b.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if l["time"] != "2026-11-25T16:31:54Z" || l["statusTime"] != "2026-11-25T16:31:54Z" {
		t.Fatalf("listen --json times %v, %v; want UTC", l["time"], l["statusTime"])
	}
}
