package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"paydesk/internal/pgtest"
)

// A resend by reservation queues again the deliveries of that
// reservation's pushes (its Reserve and its capture's), to every
// endpoint, and no other; it is one audit entry with who and how many.
// One by ID and those of a query are audited the same way; an empty
// selection writes nothing.
func TestRedeliverByReservation(t *testing.T) {
	pgtest.OwnEngine(t)
	eps := []string{"http://shop.test/a", "http://shop.test/b"}
	for name, open := range outboxEngines(t, eps) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			g := &gw{clock: t0}
			a := newScenario(t, db, g, "INV-A")
			a.reserve(articles(), false)
			a.capture("10.00", false)
			b := newScenario(t, db, g, "INV-B")
			b.reserve(articles(), false)
			for _, p := range append(a.pushes, b.pushes...) {
				applyEncoded(t, db, p)
			}
			all, err := db.Deliveries(ctx, DeliveryQuery{})
			if err != nil || len(all) != 6 {
				t.Fatalf("deliveries = %d, %v; want 6 (3 pushes × 2 endpoints)", len(all), err)
			}
			// Everything delivered: a resend makes them pending again.
			for _, d := range all {
				if err := db.RecordAttempt(ctx, d.ID, Attempt{At: t0, Status: 200}, AttemptOutcome{Delivered: true}); err != nil {
					t.Fatal(err)
				}
			}
			n, err := db.Redeliver(ctx, ResendRequest{Reservations: []string{a.resKey}, Operator: "alice", Via: "console"})
			if err != nil || n != 4 {
				t.Fatalf("resend of reservation A = %d, %v; want 4", n, err)
			}
			all, _ = db.Deliveries(ctx, DeliveryQuery{})
			pending := map[string]int{}
			for _, d := range all {
				if d.State == DeliveryPending {
					if d.Resent != 1 || !d.NextAt.Equal(t0) {
						t.Fatalf("resent delivery %+v: want resent once, due now", d)
					}
					pending[d.Endpoint]++
				} else if d.Resent != 0 {
					t.Fatalf("delivery %d of B resent", d.ID)
				}
			}
			if pending[eps[0]] != 2 || pending[eps[1]] != 2 {
				t.Fatalf("pending per endpoint = %v, want 2 each", pending)
			}
			// By reservation number too; an unknown one is refused.
			if n, err := db.Redeliver(ctx, ResendRequest{Reservations: []string{b.resNum}, Operator: "bob"}); err != nil || n != 2 {
				t.Fatalf("resend of B by number = %d, %v", n, err)
			}
			if _, err := db.Redeliver(ctx, ResendRequest{Reservations: []string{"RES-NONE"}, Operator: "bob"}); !errors.Is(err, ErrNotFound) {
				t.Fatalf("unknown reservation: %v", err)
			}
			if n, err := db.Redeliver(ctx, ResendRequest{ID: 1, Endpoint: eps[0], Operator: "carol", Via: "cli"}); err != nil || n != 1 {
				t.Fatalf("resend one = %d, %v", n, err)
			}
			if _, err := db.Redeliver(ctx, ResendRequest{Query: DeliveryQuery{Failed: true}, Operator: "carol"}); !errors.Is(err, ErrNothingToResend) {
				t.Fatalf("nothing failed: %v", err)
			}
			if _, err := db.Redeliver(ctx, ResendRequest{ID: 1, Query: DeliveryQuery{Failed: true}}); err == nil {
				t.Fatal("an ID and a query: no error")
			}
			es, err := db.Audit(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				if e.Action == AuditDeliveryResend {
					got = append(got, e.Operator+"|"+e.Target+"|"+e.Result+"|"+e.Reason)
				}
			}
			want := []string{
				"carol|delivery 1|1 delivery|queued again from the cli",
				"bob|reservation " + b.resNum + "|2 deliveries|queued again",
				"alice|reservation " + a.resKey + "|4 deliveries|queued again from the console",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("audit:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestFailingEndpoints(t *testing.T) {
	const a, b = "http://a.test/", "http://b.test/"
	at := func(min int, status int) Attempt {
		return Attempt{At: t0.Add(time.Duration(min) * time.Minute), Status: status}
	}
	refused := func(min int) Attempt {
		return Attempt{At: t0.Add(time.Duration(min) * time.Minute), Error: "connection refused"}
	}
	cases := []struct {
		name string
		ds   []*Delivery
		want []EndpointTrouble
	}{
		{"none", nil, nil},
		{"all delivered", []*Delivery{{ID: 1, Endpoint: a, State: DeliveryDelivered, Attempts: []Attempt{at(0, 200)}}}, nil},
		{"two failures are a retry, not yet failing",
			[]*Delivery{{ID: 1, Endpoint: a, State: DeliveryPending, Attempts: []Attempt{at(0, 500), refused(1)}}}, nil},
		{"three in a row over several deliveries",
			[]*Delivery{
				{ID: 1, Endpoint: a, State: DeliveryDelivered, Attempts: []Attempt{at(0, 200)}},
				{ID: 2, Endpoint: a, State: DeliveryPending, Attempts: []Attempt{at(5, 500), refused(7)}},
				{ID: 3, Endpoint: a, State: DeliveryPending, Attempts: []Attempt{at(6, 503)}},
				{ID: 4, Endpoint: b, State: DeliveryDelivered, Attempts: []Attempt{at(6, 200)}},
			},
			[]EndpointTrouble{{Endpoint: a, Since: t0.Add(5 * time.Minute), Failing: 2, Last: refused(7)}}},
		{"one given up is failing at once",
			[]*Delivery{{ID: 1, Endpoint: b, State: DeliveryFailed, Attempts: []Attempt{at(0, 200), at(1, 404)}}},
			[]EndpointTrouble{{Endpoint: b, Since: t0.Add(time.Minute), GivenUp: 1, Last: at(1, 404)}}},
		{"a later 200 ends it",
			[]*Delivery{
				{ID: 1, Endpoint: b, State: DeliveryFailed, Attempts: []Attempt{at(0, 500), at(1, 500), at(2, 500)}},
				{ID: 2, Endpoint: b, State: DeliveryDelivered, Attempts: []Attempt{at(3, 200)}},
			}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FailingEndpoints(c.ds)
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for i := range got {
				g, w := got[i], c.want[i]
				if g.Endpoint != w.Endpoint || !g.Since.Equal(w.Since) || g.GivenUp != w.GivenUp || g.Failing != w.Failing || g.Last != w.Last {
					t.Fatalf("got %+v, want %+v", g, w)
				}
			}
		})
	}
}

// TestRedeliverTellsTheWorker: a resend's commit says so in its change
// notice (Change.Deliveries), which kicks the outbox worker of the process
// and, through the bus, of the others sharing a database.
func TestRedeliverTellsTheWorker(t *testing.T) {
	db, _ := outboxCache(t)
	changes, unsubscribe := db.Subscribe()
	defer unsubscribe()
	if err := db.RecordAttempt(t.Context(), 3, Attempt{At: t0, Error: "refused"}, AttemptOutcome{GaveUp: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Redeliver(t.Context(), ResendRequest{ID: 3, Operator: "alice"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute) // only a stuck test waits this long
	for {
		select {
		case ch := <-changes:
			if ch.Deliveries {
				return
			}
			if ch.Audit { // the resend's commit (its audit entry) without the word
				t.Fatalf("the resend's change %+v does not say deliveries were queued", ch)
			}
		case <-deadline:
			t.Fatal("no change notice for the resend")
		}
	}
}
