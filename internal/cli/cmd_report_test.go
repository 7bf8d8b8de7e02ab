package cli

import (
	"testing"

	"github.com/shopspring/decimal"
)

// A day of work on the embedded sandbox: the report's totals are the
// ledger's — captured and refunded as show has them, the cancelled rest,
// the refund by its reason, the gift card part paid.
func TestReportTotalsAreTheLedgers(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve", "--json")
	if code != 0 {
		t.Fatalf("test-reservation: exit %d\n%s%s", code, out, errs)
	}
	number, _ := decodeJSON[map[string]any](t, out)["target"].(string)
	code, out, errs = runCLI(t, dir, "", "capture", number, "SHOE-42=2", "SOCK-3P=2", "--json", "--yes")
	capt := decodeJSON[map[string]any](t, out)
	if code != 0 {
		t.Fatalf("capture: exit %d %s", code, errs)
	}
	steps := [][]string{
		{"refund", capt["key"].(string), "20", "--reason", "return", "--yes"},
		{"cancel", number, "--yes"},
		{"giftcard", "pay", "30", "--service", "voucherb", "--card", "6299440000000000023", "--pin", "2222", "--yes"},
	}
	for _, s := range steps {
		if code, out, errs := runCLI(t, dir, "", s...); code != 0 {
			t.Fatalf("%v: exit %d %s %s", s, code, out, errs)
		}
	}
	code, out, _ = runCLI(t, dir, "", "show", number, "--json")
	show := decodeJSON[reservationJSON](t, out)
	if code != 0 || show.State != "closed" {
		t.Fatalf("show: exit %d %+v", code, show)
	}

	code, out, errs = runCLI(t, dir, "", "report", "--json", "--since", "1d")
	rep := decodeJSON[struct {
		Rows   []figuresJSON `json:"rows"`
		Totals []figuresJSON `json:"totals"`
	}](t, out)
	if code != 0 || len(rep.Totals) != 1 {
		t.Fatalf("report: exit %d %s %s", code, out, errs)
	}
	tot := rep.Totals[0]
	d := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	wantCancelled := d(show.Amount).Sub(d(show.Captured))
	if tot.Currency != "EUR" || tot.Reserved != show.Amount || tot.Captured != show.Captured || tot.Refunded != show.Refunded ||
		!d(tot.Cancelled).Equal(wantCancelled) || tot.RefundedByReason["return"] != "20.00" || tot.GiftCardsPaid != "10.00" ||
		tot.Captures != 1 || tot.Refunds != 1 {
		t.Fatalf("report totals %+v\nwant the ledger's: reserved %s, captured %s, refunded %s (return), cancelled %s, gift cards 10.00",
			tot, show.Amount, show.Captured, show.Refunded, wantCancelled.StringFixed(2))
	}
	code, out, _ = runCLI(t, dir, "", "report", "--by", "operator", "--json", "--since", "1d")
	byOp := decodeJSON[struct {
		Rows []figuresJSON `json:"rows"`
	}](t, out)
	found := false
	for _, r := range byOp.Rows {
		found = found || (r.Group == "clitest" && r.Captured == show.Captured)
	}
	if code != 0 || !found {
		t.Fatalf("by operator: exit %d %+v, want clitest's capture", code, byOp.Rows)
	}
	if code, _, errs := runCLI(t, dir, "", "report", "--by", "week"); code != 2 {
		t.Fatalf("--by week: exit %d %s, want 2", code, errs)
	}
}
