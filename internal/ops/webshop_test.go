package ops

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"paydesk/internal/pgtest"
	"strings"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/intake"
	"paydesk/internal/webshop"
	"paydesk/pushlistener"
	"paydesk/store"
)

// shopEnv is a webshop, the sandbox gateway, paydesk's real push listener
// with its order intake, the cache and the operations, all over real HTTP.
type shopEnv struct {
	sb   *sandbox.Sandbox
	db   *store.DB
	svc  *Service
	shop *webshop.Shop
}

func newShopEnv(t *testing.T) *shopEnv {
	t.Helper()
	e := &shopEnv{}
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "paydesk.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e.db = db
	lsrv, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(testCreds), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	listener := httptest.NewServer(lsrv)
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{testCreds}, PushURL: listener.URL + "/push",
		RetryBase: 20 * time.Millisecond, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	e.sb = sb
	gateway := httptest.NewServer(sb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sb.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		gateway.Close()
		listener.Close()
		_ = sb.Close()
		_ = db.Close()
	})
	client := func() *api.Client {
		c, err := api.NewClient(api.Config{BaseURL: gateway.URL, Credentials: testCreds, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// The shop and paydesk are two programs with the merchant's credentials.
	e.shop = &webshop.Shop{Gateway: client(), IntakeURL: listener.URL + pushlistener.OrdersPath, Credentials: testCreds}
	e.svc, err = New(Config{Gateway: client(), Store: db, Mode: ModeSandbox, Operator: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func shopOrder(invoice string) api.Reserve {
	return api.Reserve{Currency: "EUR", Invoice: invoice, ClientIP: api.ClientIP{Address: "192.0.2.7"},
		Articles: []api.Article{
			{Number: "MUG", Title: "Mug", Price: dec("12.50"), Quantity: 2, Vat: dec("21")},
			{Number: "TEE", Title: "T-shirt", Price: dec("24.95"), Quantity: 1, Vat: dec("21")},
			{Number: "SHIP", Title: "Shipping", Type: api.ArticleTypeShipment, Price: dec("4.95"), Quantity: 1, Vat: dec("21")},
		},
		Billing: api.Address{FirstName: "Jürgen", LastName: "Müller", Street: "Hauptstraße", HouseNumber: "5", PostalCode: "50667",
			City: "Köln", Country: "DE", Email: "jm@example.de", PhoneNumber: "0221123456"},
		ShippingSameAsBilling: true, Customer: api.Customer{Gender: 1, OperatingCountry: "DE", Pno: "01011980"}}
}

// orderCSV is the same order as CSV order lines, as a shop exports it.
func orderCSV(rs api.Reserve) string {
	var b strings.Builder
	b.WriteString("invoice,article_number,title,quantity,price,vat,type,first_name,last_name,email,country\n")
	for i, a := range rs.Articles {
		cust := ",,,"
		if i == 0 {
			cust = fmt.Sprintf("%s,%s,%s,%s", rs.Billing.FirstName, rs.Billing.LastName, rs.Billing.Email, rs.Billing.Country)
		}
		fmt.Fprintf(&b, "%s,%s,%s,%d,%s,%s,%s,%s\n", rs.Invoice, a.Number, a.Title, a.Quantity, a.Price.StringFixed(2), a.Vat, a.Type, cust)
	}
	return b.String()
}

// ledger is a reservation's ledger in one line, for comparisons.
func ledger(r *store.Reservation) string {
	var parts []string
	for _, l := range r.Lines {
		parts = append(parts, fmt.Sprintf("%s r%d c%d x%d", l.ArticleNumber, l.Reserved, l.Captured, l.Cancelled))
	}
	return fmt.Sprintf("%s captured %s refunded %s remaining %s [%s]", r.State(), r.CapturedAmount.StringFixed(2),
		r.RefundedAmount.StringFixed(2), r.RemainingAmount().StringFixed(2), strings.Join(parts, "; "))
}

// TestWebshopOrderEndToEnd: a shop's reservation, made the normal way, is
// captured line by line, refunded in part and its rest cancelled through
// paydesk, whichever way and whenever its order arrives.
func TestWebshopOrderEndToEnd(t *testing.T) {
	for _, how := range []string{"order before the push", "order after the push", "import CSV after the push"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			e := newShopEnv(t)
			invoice := "SHOP-" + strings.ReplaceAll(how, " ", "-")
			rs := shopOrder(invoice)
			envelope, resp, err := e.shop.Reserve(ctx, rs)
			if err != nil || resp.Status.Code.Code != api.StatusPendingProcessing {
				t.Fatalf("shop Reserve: %v %+v", err, resp)
			}
			if how == "order before the push" {
				a, err := e.shop.PostOrder(ctx, envelope)
				if err != nil || a.Result != "imported" || a.Reservation != "" {
					t.Fatalf("order before the push: %+v %v", a, err)
				}
			}
			if err := e.sb.Approve(ctx, resp.Key); err != nil {
				t.Fatal(err)
			}
			r, ok, err := e.svc.Waiter().Reservation(ctx, resp.Key, stuck)
			if err != nil || !ok {
				t.Fatalf("Reserve push: ok=%v err=%v", ok, err)
			}
			switch how {
			case "order after the push":
				if r.LinesKnown {
					t.Fatal("lines known before the order arrived")
				}
				a, err := e.shop.PostOrder(ctx, envelope)
				if err != nil || a.Result != "imported" || a.Reservation != resp.Key {
					t.Fatalf("order after the push: %+v %v", a, err)
				}
			case "import CSV after the push":
				var out []intake.Outcome
				_, err := intake.Import(t.Context(), e.db, "orders.csv", "import orders.csv", strings.NewReader(orderCSV(rs)), func(o intake.Outcome) { out = append(out, o) })
				if err != nil || len(out) != 1 || out[0].Result != intake.ResultImported || out[0].Reservation != resp.Key {
					t.Fatalf("import: %+v %v", out, err)
				}
			}
			// The same order again is one order.
			if a, err := e.shop.PostOrder(ctx, envelope); err != nil || a.Result != "already known" {
				t.Fatalf("order again: %+v %v", a, err)
			}
			r, err = e.db.Reservation(ctx, invoice)
			if err != nil {
				t.Fatal(err)
			}
			if r.CustomerName != "Jürgen Müller" || r.CustomerEmail != "jm@example.de" {
				t.Fatalf("customer %q %q", r.CustomerName, r.CustomerEmail)
			}
			steps := []struct {
				name string
				do   func() (Result, error)
				want string
			}{
				{"reserved", nil, "reserved captured 0.00 refunded 0.00 remaining 54.90 [MUG r2 c0 x0; TEE r1 c0 x0; SHIP r1 c0 x0]"},
				{"capture one mug, by invoice", func() (Result, error) {
					return e.svc.Capture(ctx, CaptureRequest{Reservation: invoice, Quantities: map[string]int{"MUG": 1}})
				}, "partly_captured captured 12.50 refunded 0.00 remaining 42.40 [MUG r2 c1 x0; TEE r1 c0 x0; SHIP r1 c0 x0]"},
				{"refund part of it, by invoice", func() (Result, error) {
					return e.svc.Refund(ctx, RefundRequest{Transaction: invoice, Amount: ptr(dec("5")), Reason: Reason{Code: "defect"}})
				}, "partly_captured captured 12.50 refunded 5.00 remaining 42.40 [MUG r2 c1 x0; TEE r1 c0 x0; SHIP r1 c0 x0]"},
				{"cancel the rest", func() (Result, error) {
					return e.svc.Cancel(ctx, CancelRequest{Reservation: invoice})
				}, "closed captured 12.50 refunded 5.00 remaining 0.00 [MUG r2 c1 x1; TEE r1 c0 x1; SHIP r1 c0 x1]"},
			}
			for _, st := range steps {
				if st.do != nil {
					res, err := st.do()
					if err != nil || res.State != store.OpSettled {
						t.Fatalf("%s: %+v %v", st.name, res, err)
					}
					// The push that follows changes nothing more.
					if ok, err := e.svc.Waiter().Push(ctx, res.Key, stuck); err != nil || !ok {
						t.Fatalf("%s: push of %s: ok=%v err=%v", st.name, res.Key, ok, err)
					}
				}
				r, err := e.db.Reservation(ctx, invoice)
				if err != nil {
					t.Fatal(err)
				}
				if got := ledger(r); got != st.want {
					t.Fatalf("after %s:\n got %s\nwant %s", st.name, got, st.want)
				}
			}
		})
	}
}

// TestPushOnlyReservation: the order never arrives. The reservation says
// what is missing, a capture by line is refused with the way out, and a full
// capture by the amount the operator types goes through.
func TestPushOnlyReservation(t *testing.T) {
	ctx := context.Background()
	e := newShopEnv(t)
	_, resp, err := e.shop.Reserve(ctx, shopOrder("SHOP-NOORDER"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.Approve(ctx, resp.Key); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.svc.Waiter().Reservation(ctx, resp.Key, stuck); err != nil || !ok {
		t.Fatalf("Reserve push: %v %v", ok, err)
	}
	_, err = e.svc.Capture(ctx, CaptureRequest{Reservation: "SHOP-NOORDER", Quantities: map[string]int{"MUG": 1}})
	if err == nil || !strings.Contains(err.Error(), "paydesk import") || !strings.Contains(err.Error(), "by amount") {
		t.Fatalf("capture by line of a push-only reservation: %v", err)
	}
	if _, err := e.svc.Capture(ctx, CaptureRequest{Reservation: "SHOP-NOORDER", Amount: ptr(dec("0"))}); err == nil {
		t.Fatal("a capture of 0 was accepted")
	}
	res, err := e.svc.Capture(ctx, CaptureRequest{Reservation: "SHOP-NOORDER", Amount: ptr(dec("54.90"))})
	if err != nil || res.State != store.OpSettled {
		t.Fatalf("capture by amount: %+v %v", res, err)
	}
	r, _ := e.db.Reservation(ctx, "SHOP-NOORDER")
	if r.State() != store.StateCaptured || !r.CapturedAmount.Equal(dec("54.90")) {
		t.Fatalf("after the capture by amount: %s", ledger(r))
	}
	audit, _ := e.db.Audit(ctx, 10)
	if len(audit) == 0 || !strings.Contains(audit[0].Reason, "by amount") {
		t.Fatalf("audit %+v", audit)
	}
}
