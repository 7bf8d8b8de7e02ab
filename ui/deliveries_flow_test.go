package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"paydesk/api"
	"paydesk/internal/outbox"
	"paydesk/internal/pgtest"
	"paydesk/internal/pushrelay"
	"paydesk/store"
)

// TestFlowFailingEndpointResent drives the console as an operator would
// when the shop is down: a push is forwarded, the shop answers 500 and the
// outbox gives up; the console opens on the Attention tab with the
// endpoint's row; enter opens the Deliveries page filtered to it; the shop
// is mended; r resends the delivery (audited with the console's user);
// the worker delivers it, and the page shows it delivered and the
// Attention row is gone. The worker runs in the test's own steps (its
// RunOnce), the console in a real program: no sleeps, no timers.
func TestFlowFailingEndpointResent(t *testing.T) {
	var up atomic.Bool
	var got atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !up.Load() {
			http.Error(w, "shop down for maintenance", http.StatusInternalServerError)
			return
		}
		if len(body) > 0 {
			got.Add(1)
		}
	}))
	defer shop.Close()
	endpoint := shop.URL + "/push"

	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "paydesk.db")), store.Options{NoSync: true, ForwardTo: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	// An empty schedule: the first failure gives up (the default retries
	// for three days).
	w, err := outbox.New(outbox.Config{Store: db, Send: pushrelay.Sender{Credentials: flowCreds}.Send, Schedule: []time.Duration{}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p := &api.Push{Transaction: &api.TransactionPush{Key: "4F1C0E2D3B5A69788796A5B4C3D2E1F0", Invoice: "SHOP-1", ServiceCode: api.ServiceDeferred,
		Status: api.Status{Code: api.Code{Code: api.StatusSuccess, Description: api.StatusText(api.StatusSuccess)}, DateTime: api.NewDateTime(now, true)},
		IsTest: true, Currency: "EUR", TransactionType: api.TypeDeferredPay, AmountDebit: api.NewAmount(dec("25.00")), MutationType: api.MutationDeferred}}
	body, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyPush(ctx, store.PushRecord{Body: body, Signature: store.SignatureValid, Method: "POST", URL: "/push"}, p); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if ds, _ := db.Deliveries(ctx, store.DeliveryQuery{Failed: true}); len(ds) != 1 {
		t.Fatalf("want the delivery given up, got %+v", ds)
	}

	appCtx, stop := context.WithCancel(ctx)
	defer stop()
	e := &flowEnv{t: t, ctx: ctx, db: db, screen: &flowScreen{}}
	e.screen.app = New(Config{Store: db, Location: time.UTC, Context: appCtx, Forwarding: true, ExportDir: t.TempDir()})
	e.tm = teatest.NewTestModel(t, flowModel{e.screen}, teatest.WithInitialTermSize(flowWidth, flowHeight),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	defer func() {
		_ = e.tm.Quit()
		e.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
		e.screen.app.Close()
	}()

	e.waitText("shop not taking", "1 given up", "fix the shop's endpoint")
	e.press("enter")
	e.waitText("Pushes delivered to the shop", "1 · "+endpoint, "failed", "HTTP 500")
	up.Store(true)
	e.press("r")
	e.waitText("1 delivery queued again", "pending")
	if _, err := w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 1 {
		t.Fatalf("the shop got %d pushes, want 1", got.Load())
	}
	e.tm.Send(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}) // the operator reloads; a poll would, a few seconds later
	e.waitText("delivered", "HTTP 200")
	e.press("esc")
	e.waitText("Nothing needs attention")

	es, err := db.Audit(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 || es[0].Action != store.AuditDeliveryResend || es[0].Result != "1 delivery" || es[0].Operator == "" {
		t.Fatalf("the resend is not audited: %+v", es)
	}
}
