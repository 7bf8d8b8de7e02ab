package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"paydesk/internal/batch"
	"paydesk/internal/ops"
	"paydesk/store"
)

// TestGoldenReservationsMarked pins the list with marks at 90×24: the
// mark column, the count in the info line.
func TestGoldenReservationsMarked(t *testing.T) {
	a := newTestApp(t, fixture(), 90, 24)
	press(t, a, "space", "down", "down", "V", "down")
	golden.RequireEqual(t, ascii(a))
}

// TestFlowBulkCancelRest: 50 reservations shipped in part, all marked
// with *, their rest cancelled from the bulk menu: the batch page shows
// the pre-flight of the 50, is confirmed once, and the gateway gets 50
// cancels, once each; marking them again finds the batch, nothing left.
func TestFlowBulkCancelRest(t *testing.T) {
	e := newFlowEnv(t)
	svc := e.screen.app.cfg.Ops
	const n = 50
	var csv strings.Builder
	csv.WriteString("invoice,article,quantity\n")
	for i := range n {
		rs := ops.TestReservation(time.Now(), "EUR")
		rs.Invoice = fmt.Sprintf("BULK-%02d", i+1)
		res, err := svc.Reserve(e.ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sb.Approve(e.ctx, res.Key); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := svc.Waiter().Reservation(e.ctx, res.Key, flowWait); err != nil || !ok {
			t.Fatalf("reserve push: %v %v", ok, err)
		}
		fmt.Fprintf(&csv, "%s,SHIP,1\n", rs.Invoice)
	}
	// Shipped in part (cancel-rest needs a capture first), as a batch.
	m, err := batch.ReadManifest(strings.NewReader(csv.String()))
	if err != nil {
		t.Fatal(err)
	}
	rn := &batch.Runner{Svc: svc, Store: e.db}
	b, items, err := rn.Start(t.Context(), batch.PlanCapture(m, batch.Ledgers(e.db), time.Now(), false), "shipped.csv")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := rn.Run(e.ctx, b, items); err != nil || out.Counts[store.ItemSettled] != n {
		t.Fatalf("captures: %s %v", out.CountsText(), err)
	}
	e.waitText("50 reservations")
	e.press("*")
	e.waitText("50 marked (b: bulk)")
	e.press("b")
	e.waitText("x cancel the rest")
	e.press("x")
	e.waitText("Pre-flight of 50 marked reservations", "to cancel the rest of 50 reservations", "refused 0 reservations")
	before := e.requests.Load()
	e.press("enter")
	e.waitText("Cancel the rest of 50 reservations for")
	e.typeText("yes")
	e.press("enter")
	e.waitText("50 settled", "50/50")
	if got := e.requests.Load() - before; got != n {
		t.Fatalf("%d requests, want %d", got, n)
	}
	sums, err := e.db.LoadReservationSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		r := e.reservation(s.Key)
		cancels := 0
		for _, q := range r.Requests {
			if q.Action == "CancelReservation" {
				cancels++
			}
		}
		if cancels != 1 {
			t.Fatalf("%s: %d cancels", r.Invoice, cancels)
		}
	}
	// The same marks again: the batch is found, nothing is left to send.
	e.press("esc")
	e.press("b")
	e.press("x")
	e.waitText("is batch B2", "0 left to send")
	if got := e.requests.Load() - before; got != n {
		t.Fatalf("%d requests after marking again, want %d", got, n)
	}
}
