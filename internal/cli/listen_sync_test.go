package cli

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/store"
)

// paydesk listen with a gateway asks it at start what no push told: the
// customer approved a reservation whose push leads nowhere, and the
// listener's cache has it reserved after the first sync.
func TestListenSyncsWithTheGateway(t *testing.T) {
	creds := api.Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, PushURL: "http://127.0.0.1:9/nowhere", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); _ = sb.Close() })
	gw, err := api.NewClient(api.Config{BaseURL: srv.URL, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := decimal.RequireFromString
	resp, err := gw.Send(ctx, api.Reserve{Currency: "EUR", Invoice: "INV-LS-1", ClientIP: api.ClientIP{Address: "192.0.2.7"},
		Articles: []api.Article{{Number: "MUG", Title: "Mug", Price: d("12.50"), Quantity: 2, Vat: d("21")}},
		Billing: api.Address{FirstName: "Anna", LastName: "Bakker", Street: "Dorpsstraat", HouseNumber: "1", PostalCode: "1234AB",
			City: "Utrecht", Country: "NL", Email: "a@example.nl", PhoneNumber: "0301234567"}, ShippingSameAsBilling: true,
		Customer: api.Customer{Gender: 2, OperatingCountry: "NL", Pno: "01011990"}})
	if err != nil {
		t.Fatal(err)
	}
	// The listener's cache knows the reservation as awaiting the customer.
	dbPath := filepath.Join(t.TempDir(), "listen.db")
	db, err := store.Open(dbPath, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	p := api.InvoiceTransaction{Action: api.ActionReserve, Response: *resp}.Push()
	p.DataRequest.Invoice = "INV-LS-1"
	if _, err := db.ApplyPush(ctx, store.PushRecord{}, p); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if err := sb.Approve(ctx, resp.Key); err != nil {
		t.Fatal(err)
	}

	env := map[string]string{"PAYDESK_SECRET_KEY": "s3cret"}
	args := []string{"listen", "--addr", "127.0.0.1:0", "--website-key", "WK", "--db", dbPath, "--gateway", srv.URL}
	var stdout, stderr lockedBuffer
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan int, 1)
	go func() {
		done <- Main(lctx, IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}, args)
	}()
	awaitListening(t, &stderr)
	for deadline := time.Now().Add(stuckAfter); !strings.Contains(stderr.String(), "sync: learned 1 from the gateway"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no sync line: %s", stderr.String())
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	db, err = store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Reservation(t.Context(), resp.Key)
	if err != nil || r.State() != store.StateReserved {
		t.Fatalf("after the listener's sync: %v %v, want reserved", r, err)
	}
}
