package gwsync_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/gwsync"
	"paydesk/internal/ops"
	"paydesk/internal/pgtest"
	"paydesk/store"
)

var creds = api.Credentials{WebsiteKey: "SYNCTESTKEY", SecretKey: "sync-test-secret-not-real"}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// env is paydesk (store and operations) beside a sandbox whose pushes lead
// nowhere: the sandbox never delivers one (its delivery loop is not run,
// and its push URL is a closed port), as for a shop whose stock plugin
// points every push at itself.
type env struct {
	db         *store.DB
	sb         *sandbox.Sandbox
	svc        *ops.Service
	backOffice *api.Client // the merchant in the gateway's own back office
	gateway    *api.Client
}

func newEnv(t testing.TB) *env {
	t.Helper()
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "paydesk.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, PushURL: "http://127.0.0.1:9/nowhere", Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(func() { srv.Close(); _ = sb.Close(); _ = db.Close() })
	client := func(base string) *api.Client {
		c, err := api.NewClient(api.Config{BaseURL: base, Credentials: creds, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	e := &env{db: db, sb: sb, backOffice: client(srv.URL + sandbox.PathAdminBackOffice), gateway: client(srv.URL)}
	e.svc, err = ops.New(ops.Config{Gateway: e.gateway, Store: db, Mode: ops.ModeSandbox, Operator: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func order(invoice string) api.Reserve {
	return api.Reserve{Currency: "EUR", Invoice: invoice, ClientIP: api.ClientIP{Address: "192.0.2.7"},
		Articles: []api.Article{
			{Number: "MUG", Title: "Mug", Price: dec("12.50"), Quantity: 2, Vat: dec("21")},
			{Number: "TEE", Title: "T-shirt", Price: dec("24.95"), Quantity: 1, Vat: dec("21")},
		},
		Billing: api.Address{FirstName: "Jürgen", LastName: "Müller", Street: "Hauptstraße", HouseNumber: "5", PostalCode: "50667",
			City: "Köln", Country: "DE", Email: "jm@example.de", PhoneNumber: "0221123456"},
		ShippingSameAsBilling: true, Customer: api.Customer{Gender: 1, OperatingCountry: "DE", Pno: "01011980"}}
}

// A reservation paydesk made; the customer approved it at the checkout,
// then the merchant captured one mug and refunded 5.00 of it in the
// gateway's back office. No push reached paydesk. Sync learns all three
// with their provenance, the ledger reads as the pushes would have made
// it, and a second run learns nothing.
func TestSyncLearnsWhatWasNotPushed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	res, err := e.svc.Reserve(ctx, order("INV-SYNC-1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.sb.Approve(ctx, res.Key); err != nil {
		t.Fatal(err)
	}
	r, err := e.db.Reservation(ctx, res.Key)
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != store.StateAwaitingCustomer {
		t.Fatalf("before sync paydesk holds %s, want %s (no push arrived)", r.State(), store.StateAwaitingCustomer)
	}
	// The reservation number is the gateway's: the back office reads it from
	// its own records, here from a status lookup.
	st, err := e.gateway.DataRequestStatus(ctx, res.Key)
	if err != nil {
		t.Fatal(err)
	}
	number := st.Param(api.PReservationNumber)
	capResp, err := e.backOffice.Send(ctx, api.Capture{Currency: "EUR", Invoice: "INV-SYNC-1", ReservationNumber: number,
		Amount: dec("12.50"), Lines: []api.CaptureLine{{ArticleNumber: "MUG", Quantity: 1}}})
	if err != nil || capResp.Status.Code.Code != api.StatusSuccess {
		t.Fatalf("back-office capture: %v %+v", err, capResp)
	}
	refResp, err := e.backOffice.Send(ctx, api.Refund{Currency: "EUR", Invoice: "INV-SYNC-1", OriginalTransactionKey: capResp.Key, Amount: dec("5")})
	if err != nil || refResp.Status.Code.Code != api.StatusSuccess {
		t.Fatalf("back-office refund: %v %+v", err, refResp)
	}
	if n := e.sb.PendingPushes(); n != 1 {
		t.Fatalf("the sandbox has %d pushes to deliver, want 1 (the approval's; the back office pushes nothing)", n)
	}

	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	got, err := gwsync.Run(ctx, e.db, e.gateway, gwsync.Options{Now: func() time.Time { return now }, Since: now.AddDate(-1, 0, 0), Operator: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Failed) > 0 {
		t.Fatalf("failed lookups: %v", got.Failed)
	}
	learned := map[string]gwsync.Learned{}
	for _, l := range got.Learned {
		learned[l.Key] = l
	}
	for _, want := range []struct {
		key, kind string
		was       int
	}{
		{res.Key, api.ActionReserve, api.StatusPendingProcessing},
		{capResp.Key, api.TypeDeferredPay, 0},
		{refResp.Key, api.TypeDeferredRefund, 0},
	} {
		l, ok := learned[want.key]
		if !ok || l.Kind != want.kind || l.Status.Code != api.StatusSuccess || l.Was.Code != want.was || !l.Result.Applied {
			t.Errorf("learned %+v for %s, want %s 190 (was %d), applied", l, want.key, want.kind, want.was)
		}
	}
	if len(got.Learned) != 3 {
		t.Errorf("learned %d facts, want 3: %+v", len(got.Learned), got.Learned)
	}

	r, err = e.db.Reservation(ctx, res.Key)
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != store.StatePartlyCaptured || !r.CapturedAmount.Equal(dec("12.50")) || !r.RefundedAmount.Equal(dec("5")) {
		t.Fatalf("after sync: %s captured %s refunded %s, want partly_captured 12.50 / 5.00", r.State(), r.CapturedAmount, r.RefundedAmount)
	}
	for _, l := range r.Lines {
		if l.ArticleNumber == "MUG" && l.Captured != 1 {
			t.Fatalf("MUG captured %d, want 1 (the back office's capture by line)", l.Captured)
		}
	}
	pushes, err := e.db.PushesFor(ctx, capResp.Key)
	if err != nil || len(pushes) != 1 {
		t.Fatalf("push log of the capture: %v %v", pushes, err)
	}
	if p := pushes[0]; p.RemoteAddr != gwsync.Provenance || p.URL != api.PathInvoiceInfo+"INV-SYNC-1" || !p.Applied {
		t.Fatalf("the capture's push log entry: from %q %s applied=%v, want the gateway's InvoiceInfo", p.RemoteAddr, p.URL, p.Applied)
	}
	audit, err := e.db.Audit(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range audit {
		found = found || (a.Action == "sync" && a.Result == "learned 3 from the gateway")
	}
	if !found {
		t.Fatalf("no audit entry of the run: %+v", audit)
	}

	again, err := gwsync.Run(ctx, e.db, e.gateway, gwsync.Options{Now: func() time.Time { return now }, Since: now.AddDate(-1, 0, 0)})
	if err != nil || len(again.Learned) != 0 {
		t.Fatalf("second run learned %+v (%v), want nothing", again.Learned, err)
	}
}
