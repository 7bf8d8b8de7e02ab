package alert

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/internal/reconcile"
	"paydesk/store"
)

var t0 = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// Each alert is sent once when it appears and once when it is resolved,
// also across a restart (the state file); one whose send failed is tried
// again at the next step.
func TestStepOpensOnceAndResolvesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alerts.json")
	var sent []string
	fail := map[string]bool{}
	send := func(_ context.Context, ev Event) error {
		if fail[ev.ID] {
			return errors.New("webhook down")
		}
		sent = append(sent, ev.State+" "+ev.ID)
		return nil
	}
	a, b, c := Alert{ID: "a"}, Alert{ID: "b"}, Alert{ID: "c"}
	st, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	fail["c"] = true
	steps := []struct {
		current []Alert
		want    []string
		restart bool
	}{
		{[]Alert{a, b, c}, []string{"open a", "open b"}, false},
		{[]Alert{a, b, c}, nil, false},
		{[]Alert{a, c}, []string{"resolved b"}, true},
		{[]Alert{a, c}, []string{"open c"}, false}, // the webhook is back
		{nil, []string{"resolved a", "resolved c"}, true},
		{nil, nil, false},
	}
	for i, s := range steps {
		if i == 3 {
			fail["c"] = false
		}
		if s.restart {
			if st, err = LoadState(path); err != nil {
				t.Fatal(err)
			}
		}
		sent = nil
		_, err := st.Step(context.Background(), t0, s.current, send)
		if (err != nil) != fail["c"] && i < 3 && len(s.current) == 3 {
			t.Errorf("step %d: error %v", i, err)
		}
		if len(sent) != len(s.want) {
			t.Fatalf("step %d: sent %v, want %v", i, sent, s.want)
		}
		for j := range sent {
			if sent[j] != s.want[j] {
				t.Fatalf("step %d: sent %v, want %v", i, sent, s.want)
			}
		}
	}
}

// The webhook gets the event as JSON with an HMAC-SHA256 signature of the
// body that a receiver checks with the shared secret.
func TestWebhookIsSigned(t *testing.T) {
	secret := []byte("alert-secret")
	got := make(chan Event, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !hmac.Equal([]byte(r.Header.Get("X-Paydesk-Signature")), []byte(Sign(secret, body))) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev Event
		_ = json.Unmarshal(body, &ev)
		got <- ev
	}))
	defer srv.Close()
	n := Notifier{Webhook: srv.URL, Secret: secret}
	if err := n.Send(context.Background(), Event{State: "open", Alert: Alert{ID: "outcome-unknown/4", Kind: "outcome-unknown"}, At: t0}); err != nil {
		t.Fatal(err)
	}
	if ev := <-got; ev.State != "open" || ev.Kind != "outcome-unknown" || ev.ID != "outcome-unknown/4" {
		t.Fatalf("the receiver got %+v", ev)
	}
	n.Secret = []byte("wrong")
	if err := n.Send(context.Background(), Event{State: "open", Alert: Alert{ID: "x"}}); err == nil {
		t.Fatal("a webhook that refuses the signature: no error")
	}
}

type fakeSource struct {
	ops   []*store.PendingOp
	sums  []store.Summary
	audit []store.AuditEntry
}

func (f fakeSource) Ops(context.Context, ...store.OpState) ([]*store.PendingOp, error) {
	return f.ops, nil
}

// ReservationPage answers from the in-memory reference list, which every
// store's list is held to.
func (f fakeSource) ReservationPage(_ context.Context, q store.PageQuery) (store.Page, error) {
	return store.PageSummaries(f.sums, q), nil
}
func (f fakeSource) Audit(context.Context, int) ([]store.AuditEntry, error) { return f.audit, nil }

// TestClosingWindows: the reservations read from the list by state and
// creation time are exactly those with something left to ship and at most
// a day left, whatever the hour and the zone: creation times every 37
// minutes over three weeks, in a zone east of UTC and in UTC, at three
// hours of the day, in both open states and two closed ones; more than a
// page of them, so that the paging is crossed too.
func TestClosingWindows(t *testing.T) {
	east := time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, loc := range []*time.Location{time.UTC, east} {
		for _, hour := range []int{0, 9, 23} {
			now := time.Date(2026, 11, 27, hour, 41, 0, 0, loc)
			var sums []store.Summary
			want := map[string]bool{}
			states := []store.State{store.StateReserved, store.StatePartlyCaptured, store.StateCaptured, store.StateCancelled}
			for i := range 21 * 24 * 60 / 37 {
				s := store.Summary{Key: fmt.Sprintf("K%05d", i), State: states[i%len(states)], Created: now.Add(-time.Duration(i*37) * time.Minute).UTC()}
				sums = append(sums, s)
				if open := s.State == store.StateReserved || s.State == store.StatePartlyCaptured; open && s.DaysLeft(now) <= 1 {
					want[s.Key] = true
				}
			}
			got, err := closingWindows(t.Context(), pagedSource{fakeSource{sums: sums}}, now)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, s := range got {
				if !want[s.Key] || seen[s.Key] {
					t.Fatalf("%s: %s (created %s, %s) read, not wanted or twice", now, s.Key, s.Created, s.State)
				}
				seen[s.Key] = true
			}
			if len(seen) != len(want) || len(want) < 150 {
				t.Fatalf("%s: %d read, want %d (and more than 150)", now, len(seen), len(want))
			}
		}
	}
}

// pagedSource hands out pages of at most 25 rows.
type pagedSource struct{ fakeSource }

func (p pagedSource) ReservationPage(ctx context.Context, q store.PageQuery) (store.Page, error) {
	q.Limit = min(q.Limit, 25)
	return p.fakeSource.ReservationPage(ctx, q)
}

func TestCurrent(t *testing.T) {
	src := fakeSource{
		ops: []*store.PendingOp{{ID: 4, State: store.OpOutcomeUnknown, Action: "Pay", Target: "R-1", Amount: decimal.NewFromInt(10), Currency: "EUR"}},
		sums: []store.Summary{
			{Key: "K1", ReservationNumber: "R-1", State: store.StateReserved, Created: t0.AddDate(0, 0, -13), Remaining: decimal.NewFromInt(5), Currency: "EUR"},
			{Key: "K2", ReservationNumber: "R-2", State: store.StateReserved, Created: t0.AddDate(0, 0, -5)},
			{Key: "K3", ReservationNumber: "R-3", State: store.StateCaptured, Created: t0.AddDate(0, 0, -13)},
		},
		audit: []store.AuditEntry{
			{Action: reconcile.ItemAction, Target: "FOREIGN", Result: "unknown", Time: t0.Add(-time.Hour)},
			{Action: reconcile.ItemAction, Target: "FOREIGN", Result: "unknown", Time: t0.Add(-2 * time.Hour)},
			{Action: reconcile.ItemAction, Target: "OLD", Result: "unknown", Time: t0.AddDate(0, 0, -8)},
		},
	}
	got, err := Current(t.Context(), src, t0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"not-reconciled/FOREIGN", "outcome-unknown/4", "window-closing/K1"}
	if len(got) != len(want) {
		t.Fatalf("alerts %+v, want %v", got, want)
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("alerts %+v, want %v", got, want)
		}
	}
}
