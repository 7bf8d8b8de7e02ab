package demo

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"paydesk/internal/pgtest"
	"testing"
	"time"

	"paydesk/api"
	"paydesk/api/sandbox"
	"paydesk/internal/ops"
	"paydesk/internal/webshop"
	"paydesk/pushlistener"
	"paydesk/store"
)

// The demo goes through the real wire: a signed client, the sandbox over
// HTTP, pushes to the real listener into the cache. Every state and
// transaction kind the console shows ends up in the cache.
func TestFillReachesEveryState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // only a stuck test
	defer cancel()
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "cache.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	creds := api.Credentials{WebsiteKey: "demo-test", SecretKey: "demo-secret"}
	ln, err := pushlistener.New(pushlistener.Config{DB: db, Verifier: api.VerifierFor(creds)})
	if err != nil {
		t.Fatal(err)
	}
	pushSrv := httptest.NewServer(ln)
	defer pushSrv.Close()
	sb, err := sandbox.New(sandbox.Config{Credentials: []api.Credentials{creds}, PushURL: pushSrv.URL + "/push"})
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(sb)
	defer gw.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sb.Run(runCtx) }()
	defer func() { stop(); <-done; sb.Close() }()

	client, err := api.NewClient(api.Config{BaseURL: gw.URL, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ops.New(ops.Config{Gateway: client, Store: db, Mode: ops.ModeSandbox, Operator: "demo",
		CustomerStep: func(ctx context.Context, key, _ string, approve bool) error {
			if approve {
				return sb.Approve(ctx, key)
			}
			return sb.Decline(ctx, key)
		}})
	if err != nil {
		t.Fatal(err)
	}
	var progress int
	shopClient, err := api.NewClient(api.Config{BaseURL: gw.URL, Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	shop := &webshop.Shop{Gateway: shopClient, IntakeURL: pushSrv.URL + pushlistener.OrdersPath, Credentials: creds}
	sum, err := Fill(ctx, Config{Ops: svc, Shop: shop, Progress: func(done, total int) { progress = done }})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Failed) > 0 {
		t.Fatalf("orders went wrong:\n%v", sum.Failed)
	}
	if sum.Orders < 18 || progress != sum.Orders {
		t.Fatalf("%d orders, progress %d", sum.Orders, progress)
	}
	t.Logf("%d orders in %s", sum.Orders, sum.Duration)

	sums, err := db.LoadReservationSummaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := map[store.State]int{}
	for _, s := range sums {
		states[s.State]++
	}
	for _, st := range []store.State{store.StateReserved, store.StateAwaitingCustomer, store.StateDeclined, store.StateCaptured,
		store.StatePartlyCaptured, store.StateClosed, store.StateCancelled} {
		if states[st] == 0 {
			t.Errorf("no reservation is %s (states: %v)", st, states)
		}
	}
	// The reservations came from the shop: their lines from its orders, but
	// for the one whose order never reached paydesk.
	pushOnly := 0
	for _, s := range sums {
		r, err := db.Reservation(ctx, s.Key)
		if err != nil {
			t.Fatal(err)
		}
		if !r.LinesKnown {
			pushOnly++
		}
	}
	if pushOnly != 1 {
		t.Errorf("%d reservations without their order, want the demo's 1", pushOnly)
	}
	txs, err := db.Transactions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[store.Kind]int{}
	partial := 0
	for _, tx := range txs {
		kinds[tx.Kind]++
		if tx.Status.SubCode == api.SubCodePartialPayment {
			partial++
		}
	}
	for _, k := range []store.Kind{store.KindCapture, store.KindRefund, store.KindGiftCardPay, store.KindGiftCardRefund} {
		if kinds[k] == 0 {
			t.Errorf("no %s transaction (kinds: %v)", k, kinds)
		}
	}
	if partial < 2 {
		t.Errorf("%d partial gift card payments, want 2", partial)
	}
	// Every push the sandbox sent is in the cache, each with a valid signature.
	deadline := time.Now().Add(2 * time.Minute) // only a stuck test
	for sb.PendingPushes() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := sb.PendingPushes(); n > 0 {
		t.Errorf("%d pushes not delivered", n)
	}
	// On PostgreSQL a delivered push is committed to the inbox and applied
	// by the store's applier afterwards: the count below waits for that.
	for {
		n, err := db.InboxWaiting(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pushes still waiting in the inbox", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rejected, _ := db.RejectedPushes(ctx, 0)
	if len(rejected) > 0 {
		t.Errorf("%d pushes rejected: %s", len(rejected), rejected[0].Reason)
	}
	c, _ := db.Counts(ctx)
	if c.Pushes < 30 {
		t.Errorf("%d pushes stored, want the demo's 30 or more", c.Pushes)
	}
}

func TestFillRefusesLive(t *testing.T) {
	client, _ := api.NewClient(api.Config{BaseURL: "https://gateway.example.com", Credentials: api.Credentials{WebsiteKey: "k", SecretKey: "s"}})
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "c.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc, _ := ops.New(ops.Config{Gateway: client, Store: db, Mode: ops.ModeLive})
	if _, err := Fill(context.Background(), Config{Ops: svc}); err == nil {
		t.Fatal("the demo ran against a live gateway")
	}
}
