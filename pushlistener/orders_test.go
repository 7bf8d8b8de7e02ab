package pushlistener

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// shopReserve is a Reserve envelope as a webshop sends it to the gateway.
func shopReserve(t testing.TB, invoice string, mugs int) []byte {
	t.Helper()
	rs := api.Reserve{Currency: "EUR", Invoice: invoice, ClientIP: api.ClientIP{Address: "127.0.0.1"},
		Articles: []api.Article{
			{Number: "MUG", Title: "Mug", Price: decimal.RequireFromString("12.50"), Quantity: mugs, Vat: decimal.RequireFromString("21")},
			{Number: "TEE", Title: "T-shirt", Price: decimal.RequireFromString("24.95"), Quantity: 1, Vat: decimal.RequireFromString("21")},
		},
		Billing: api.Address{FirstName: "Jürgen", LastName: "Müller", Street: "Hauptstraße", HouseNumber: "5", PostalCode: "50667",
			City: "Köln", Country: "DE", Email: "jm@example.de", PhoneNumber: "0221123456"},
		ShippingSameAsBilling: true, Customer: api.Customer{Gender: 1, OperatingCountry: "DE", Pno: "01011980"}}
	b, err := api.MarshalCanonical(rs.Request())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOrderIntake(t *testing.T) {
	var mu sync.Mutex
	var events []Event
	db, srv := openServer(t, store.Options{NoSync: true}, Config{Logf: t.Logf, Observe: func(e Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	url := hs.URL + "/orders"
	now := time.Now().Unix()
	capture := api.Capture{Currency: "EUR", Invoice: "SHOP-1", ReservationNumber: "R1", Amount: decimal.RequireFromString("10")}
	notReserve, _ := api.MarshalCanonical(capture.Request())

	cases := []struct {
		name       string
		req        *http.Request
		wantStatus int
		wantResult string
		wantReason string
	}{
		{"new order", signedPost(t, url, shopReserve(t, "SHOP-1", 2), creds, now), 200, "imported", ""},
		{"the same order again", signedPost(t, url, shopReserve(t, "SHOP-1", 2), creds, now), 200, "already known", ""},
		{"other lines, same invoice", signedPost(t, url, shopReserve(t, "SHOP-1", 3), creds, now), 409, "conflict", `article "MUG": quantity 2 known, 3 sent`},
		{"wrong secret", signedPost(t, url, shopReserve(t, "SHOP-2", 1), api.Credentials{WebsiteKey: creds.WebsiteKey, SecretKey: "other"}, now), 401, "", ""},
		{"signed over the push URL", signedPost(t, hs.URL+"/push", shopReserve(t, "SHOP-2", 1), creds, now), 400, "", ""},
		{"not a Reserve", signedPost(t, url, notReserve, creds, now), 400, "refused", "not a Reserve: the envelope asks Pay"},
		{"not JSON", signedPost(t, url, []byte("invoice=1"), creds, now), 400, "refused", "decode request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "signed over the push URL" {
				// Posted to /orders but signed for /push: the signature fails.
				tc.req.URL.Path = "/orders"
				tc.wantStatus = 401
			}
			resp, err := http.DefaultClient.Do(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantResult == "" {
				return
			}
			var a orderAnswer
			if err := json.Unmarshal(body, &a); err != nil {
				t.Fatalf("answer %q: %v", body, err)
			}
			if a.Result != tc.wantResult || !strings.Contains(a.Reason, tc.wantReason) {
				t.Fatalf("answer %+v, want result %q reason containing %q", a, tc.wantResult, tc.wantReason)
			}
		})
	}
	if _, err := db.Order(t.Context(), "SHOP-2"); err == nil {
		t.Fatal("an order with a bad signature was stored")
	}
	o, err := db.Order(t.Context(), "SHOP-1")
	if err != nil || len(o.Articles) != 2 || o.Articles[0].Quantity != 2 || !strings.HasPrefix(o.Source, "intake 127.0.0.1:") {
		t.Fatalf("stored order %+v %v", o, err)
	}
	if cs, _ := db.OrderConflicts(t.Context(), "SHOP-1"); len(cs) != 1 {
		t.Fatalf("conflicting order not kept: %d", len(cs))
	}
	// Both bad signatures came from one source with one verdict: one entry
	// of the rejected log, counted twice, with bounded evidence.
	if err := srv.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	rej, _ := db.RejectedPushes(t.Context(), 10)
	n := 0
	for _, r := range rej {
		n += max(int(r.Count), 1)
		if !strings.Contains(r.Reason, "signature") {
			t.Errorf("rejected for %q", r.Reason)
		}
	}
	if n != 2 {
		t.Fatalf("%d rejected requests counted, want 2 (%d entries)", n, len(rej))
	}
	mu.Lock()
	defer mu.Unlock()
	var outcomes []string
	for _, e := range events {
		if e.Order != nil {
			outcomes = append(outcomes, e.Order.Outcome)
		}
	}
	if got := strings.Join(outcomes, ","); got != "imported,already known,conflict,refused,refused" {
		t.Fatalf("observed %s", got)
	}
}

func TestOrdersURL(t *testing.T) {
	for _, tc := range []struct{ push, want string }{
		{"http://127.0.0.1:8801/push", "http://127.0.0.1:8801/orders"},
		{"https://shop.example/paydesk/push", "https://shop.example/paydesk/orders"},
		{"http://127.0.0.1:8801/", "http://127.0.0.1:8801/orders"},
		{"http://127.0.0.1:8801", "http://127.0.0.1:8801/orders"},
		{"not a url", ""},
	} {
		if got := OrdersURL(tc.push); got != tc.want {
			t.Errorf("OrdersURL(%q) = %q, want %q", tc.push, got, tc.want)
		}
	}
}
