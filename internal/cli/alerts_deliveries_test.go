package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"paydesk/internal/alert"
	"paydesk/store"
)

type failingShop []*store.Delivery

func (f failingShop) RecentDeliveries(context.Context, int) ([]*store.Delivery, error) { return f, nil }

// A paydesk listen on its own file sends the alert of a shop endpoint
// failing longer than alert-delivery-failing to the configured webhook,
// at start; its state is listen-alerts.json beside the cache, not the
// console's alerts.json.
func TestListenAlertsFailingEndpoint(t *testing.T) {
	events := make(chan alert.Event, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev alert.Event
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Errorf("webhook body %q: %v", b, err)
		}
		events <- ev
	}))
	defer hook.Close()
	dir := t.TempDir()
	secret := filepath.Join(dir, "alert.secret")
	if err := os.WriteFile(secret, []byte("alert-test-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var shop failingShop
	for i := range 20 { // twenty pushes waiting for one endpoint
		shop = append(shop, &store.Delivery{ID: uint64(i + 1), Endpoint: "https://shop.test/push", State: store.DeliveryPending,
			Attempts: []store.Attempt{{At: now.Add(-time.Hour), Status: 500}}})
	}
	// The console's state beside it says the alert was sent: the
	// listener keeps its own (listen-alerts.json) and sends it all the same.
	open := `{"open":{"delivery-failing/https://shop.test/push":{"id":"delivery-failing/https://shop.test/push"}}}`
	if err := os.WriteFile(filepath.Join(dir, "alerts.json"), []byte(open), 0o600); err != nil {
		t.Fatal(err)
	}
	set := settings{AlertWebhook: hook.URL, AlertSecretFile: secret, AlertDeliveryFailing: 15 * time.Minute}
	stop, err := listenAlerts(set, shop, filepath.Join(dir, "listen.db"), func() time.Time { return now }, t.Logf)
	if err != nil || stop == nil {
		t.Fatalf("listenAlerts: %v (stop %v)", err, stop != nil)
	}
	select {
	case ev := <-events:
		if ev.State != "open" || ev.Kind != "delivery-failing" || ev.Subject != "https://shop.test/push" {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(time.Minute): // only ends a stuck test
		t.Fatal("no alert reached the webhook")
	}
	stop()
	// Nothing to send to, or the alert off: no loop at all.
	for _, s := range []settings{{AlertDeliveryFailing: time.Minute}, {AlertWebhook: hook.URL, AlertSecretFile: secret}} {
		if stop, err := listenAlerts(s, shop, filepath.Join(dir, "listen.db"), func() time.Time { return now }, t.Logf); stop != nil || err != nil {
			t.Fatalf("%+v: a loop (%v)", s, err)
		}
	}
}

// alertLoop steps at once and at each tick: an alert is opened once
// however many steps see it, and resolved once when it is gone.
func TestAlertLoopSteps(t *testing.T) {
	st, err := alert.LoadState(filepath.Join(t.TempDir(), "alerts.json"))
	if err != nil {
		t.Fatal(err)
	}
	tick := make(chan time.Time)
	sent := make(chan string, 8)
	steps := make(chan []alert.Alert, 8)
	a := alert.Alert{ID: "delivery-failing/x", Kind: "delivery-failing"}
	for _, cur := range [][]alert.Alert{{a}, {a}, nil} {
		steps <- cur
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		alertLoop(ctx, tick, st, func(_ context.Context, ev alert.Event) error { sent <- ev.State + " " + ev.ID; return nil },
			func(context.Context) (time.Time, []alert.Alert, error) {
				select {
				case cur := <-steps:
					return time.Time{}, cur, nil
				default:
					return time.Time{}, nil, nil
				}
			}, t.Logf)
	}()
	tick <- time.Time{}
	tick <- time.Time{}
	cancel()
	<-done
	close(sent)
	var got []string
	for s := range sent {
		got = append(got, s)
	}
	if len(got) != 2 || got[0] != "open delivery-failing/x" || got[1] != "resolved delivery-failing/x" {
		t.Fatalf("sent %v", got)
	}
}
