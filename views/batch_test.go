package views

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/shopspring/decimal"

	"paydesk/store"
)

func asciiView(s string) []byte {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
	_, _ = w.WriteString(s)
	return b.Bytes()
}

// TestGoldenBatch pins the batch page at 100×16: the pre-flight with a
// refusal, then a run with a settled, an unknown and a failed reservation.
func TestGoldenBatch(t *testing.T) {
	ctx := NewContext(func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) })
	b := NewBatch(ctx)
	b.SetSize(100, 16)
	t.Run("ask", func(t *testing.T) { golden.RequireEqual(t, asciiView(b.View())) })
	plan := &BatchPlan{Path: "testdata/batch/shipments.csv", Hash: "e2a9c08317470000", Rows: 7, Reservations: 3, Total: "236.75 EUR",
		Refused: 1, RefusedRows: 1, Took: 1500 * time.Microsecond,
		Items: []BatchPlanItem{
			{Reservation: "cfa57e90-b332-4b79-ab82-b3bc2275257f", Invoice: "SHOP-77001", Rows: 3, Amount: "42.40 EUR", Lines: "MUG-BLUE=1 TEE-L=1 SHIP=1"},
			{Reservation: "0b1e2c3d-0000-4000-8000-000000000002", Invoice: "SHOP-77002", Rows: 2, Amount: "54.90 EUR", Lines: "MUG-BLUE=2 TEE-L=1"},
			{Reservation: "0b1e2c3d-0000-4000-8000-000000000003", Invoice: "SHOP-77003", Rows: 1, Amount: "139.45 EUR", Lines: "COAT=1"},
		},
		RefusedLines: []string{"line 8  SHOP-77009 MUG-BLUE  unknown-invoice: no reservation with invoice or number \"SHOP-77009\" in the cache"}}
	b.Update(BatchPlannedMsg{Plan: plan})
	t.Run("planned", func(t *testing.T) { golden.RequireEqual(t, asciiView(b.View())) })
	item := func(i int, st store.BatchItemState, msg string) {
		p := plan.Items[i]
		b.Update(BatchItemMsg{Batch: "B7", Done: i + 1, Total: 3,
			Item: store.BatchItem{Index: i, Reservation: p.Reservation, Invoice: p.Invoice, State: st, Message: msg, Amount: decimal.NewFromInt(1),
				Key: fmt.Sprintf("KEY%d", i)}})
	}
	// The first capture's push comes before its answer reaches the page.
	b.Update(BatchPushMsg{Batch: "B7", Keys: []string{"KEY0"}})
	item(0, store.ItemSettled, "190 S001 Success invoice 49647370")
	item(1, store.ItemOutcomeUnknown, "operation 12: outcome unknown (connection reset): check the gateway's back office, then paydesk resolve 12")
	item(2, store.ItemFailed, "490 Failed")
	b.Update(BatchDoneMsg{Batch: "B7", Text: "1 settled, 1 failed, 1 outcome unknown"})
	t.Run("done", func(t *testing.T) { golden.RequireEqual(t, asciiView(b.View())) })
}
