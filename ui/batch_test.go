package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"paydesk/internal/ops"
	"paydesk/store"
)

// TestFlowBatchPage: the batch page opens a manifest, shows its pre-flight
// with the refusals, is confirmed once with the total and shows the
// reservations settle; the cache has every capture once.
func TestFlowBatchPage(t *testing.T) {
	e := newFlowEnv(t)
	svc := e.screen.app.cfg.Ops
	var nums []string
	for i := range 3 {
		rs := ops.TestReservation(time.Now(), "EUR")
		rs.Invoice = fmt.Sprintf("BATCH-%d", i+1)
		res, err := svc.Reserve(e.ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.sb.Approve(e.ctx, res.Key); err != nil {
			t.Fatal(err)
		}
		r, ok, err := svc.Waiter().Reservation(e.ctx, res.Key, flowWait)
		if err != nil || !ok {
			t.Fatalf("reserve push: %v %v", ok, err)
		}
		nums = append(nums, r.ReservationNumber)
	}
	manifest := filepath.Join(t.TempDir(), "shipments.csv")
	csv := "invoice,article,quantity,parcel\nBATCH-1,SHOE-42,1,P1\nBATCH-1,SHIP,1,P1\nBATCH-2,SOCK-3P,2,P2\nBATCH-3,SHOE-42,3,P3\nBATCH-9,SHOE-42,1,P9\n"
	if err := os.WriteFile(manifest, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	e.press("B")
	e.waitText("Batch capture from a shipment manifest", "manifest:")
	e.typeText(manifest)
	e.press("enter")
	e.waitText("to capture 3 reservations, 273.75 EUR", "refused 1 reservation (1 row)", "unknown-invoice", "BATCH-9")
	before := e.requests.Load()
	e.press("enter")
	e.waitText("Capture 3 reservations for 273.75 EUR?")
	e.typeText("yes")
	e.press("enter")
	e.waitText("Batch B1: 3 settled", "3/3")
	e.waitText("3 pushes in") // each capture's push, as the listener stores it
	if got := e.requests.Load() - before; got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
	want := map[string]string{nums[0]: "64.90", nums[1]: "29.00", nums[2]: "179.85"}
	for n, amount := range want {
		r, err := e.db.Reservation(t.Context(), n)
		if err != nil {
			t.Fatal(err)
		}
		if r.CapturedAmount.StringFixed(2) != amount {
			t.Fatalf("%s captured %s, want %s", n, r.CapturedAmount.StringFixed(2), amount)
		}
	}
	// Opening the same manifest again shows its batch; running it sends nothing.
	e.press("o")
	e.press("enter")
	e.waitText("this manifest is batch B1", "0 left to send")
	audit, _ := e.db.Audit(t.Context(), 0)
	n := 0
	for _, a := range audit {
		if a.Action == "capture" && strings.Contains(a.Reason, "batch B1") && a.Operator == "flow-tester" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d batch captures in the audit log", n)
	}
	if b, items, err := e.db.Batch(t.Context(), "B1"); err != nil || b.Source != manifest || len(items) != 3 || items[0].State != store.ItemSettled {
		t.Fatalf("batch %+v %+v %v", b, items, err)
	}
}
