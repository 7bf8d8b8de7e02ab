package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

// putCache writes reservations and orders into the cache the commands of
// runCLI use, and closes it.
func putCache(t *testing.T, dir string, rs []*store.Reservation, orders ...store.Order) {
	t.Helper()
	db, err := store.Open(filepath.Join(dir, "paydesk", "paydesk.db"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(rs) > 0 {
		if err := db.PutReservations(t.Context(), rs); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range orders {
		if _, err := db.PutOrder(t.Context(), o); err != nil && o.Source != "conflict" {
			t.Fatal(err)
		}
	}
}

// TestShowSpeaksPlainly: `show` of a reservation seen only in its Reserve
// push, past its shipment window, says the window passed (not "-6 days
// left") and that the customer is unknown because the order is not in
// paydesk (not "Customer  () ·"), and names the state in words.
func TestShowSpeaksPlainly(t *testing.T) {
	dir := t.TempDir()
	created := time.Now().AddDate(0, 0, -20)
	putCache(t, dir, []*store.Reservation{{Key: "K-PUSHONLY", ReservationNumber: "R-PUSHONLY",
		Currency: "EUR", Status: store.Status{Code: api.StatusSuccess, Time: created}, Created: created}},
		// A conflict of another invoice is not this reservation's, even
		// though this one has no invoice.
		store.Order{Invoice: "INV-OTHER", Currency: "EUR", Source: "first", Received: created,
			Articles: []api.Article{{Number: "MUG", Title: "Mug", Quantity: 1, Price: decimal.RequireFromString("5"), Vat: decimal.RequireFromString("21")}}},
		store.Order{Invoice: "INV-OTHER", Currency: "EUR", Source: "conflict", Received: created,
			Articles: []api.Article{{Number: "MUG", Title: "Mug", Quantity: 2, Price: decimal.RequireFromString("5"), Vat: decimal.RequireFromString("21")}}})
	code, out, errs := runCLI(t, dir, "", "show", "R-PUSHONLY")
	if code != 0 {
		t.Fatalf("show: exit %d %s", code, errs)
	}
	for _, want := range []string{"· reserved\n", "shipment window passed 6 days ago", "Customer unknown: its order is not in paydesk",
		"paydesk import FILE"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"-6 days", "Customer  ()", "RESERVED", "409"} {
		if strings.Contains(out, bad) {
			t.Errorf("show says %q:\n%s", bad, out)
		}
	}
}

// TestShowOrderConflictAndTimes: an order the intake refused (409) for an
// invoice known with other lines shows in `show` (text and JSON), the
// state reads as in the console, a capture is called a capture, and every
// JSON time is RFC 3339 in UTC, in `show` as in `reservations`.
func TestShowOrderConflictAndTimes(t *testing.T) {
	dir := t.TempDir()
	number := newReservation(t, dir)
	code, out, errs := runCLI(t, dir, "", "capture", number, "SHOE-42=1", "--yes")
	if code != 0 || !strings.HasPrefix(out, "Capture "+number+": 190") {
		t.Fatalf("capture: exit %d %q %s", code, out, errs)
	}
	code, out, _ = runCLI(t, dir, "", "show", number, "--json")
	show := decodeJSON[reservationJSON](t, out)
	if code != 0 {
		t.Fatalf("show: exit %d", code)
	}
	putCache(t, dir, nil, store.Order{Invoice: show.Invoice, Currency: "EUR", Source: "conflict", Received: time.Now(),
		Articles: []api.Article{{Number: "SHOE-42", Title: "Trail running shoe", Quantity: 9, Price: decimal.RequireFromString("59.95"), Vat: decimal.RequireFromString("21")}}})

	code, out, _ = runCLI(t, dir, "", "show", number)
	if code != 0 || !strings.Contains(out, "refused (409): conflict at ") || !strings.Contains(out, "SHOE-42 ×9 at 59.95") {
		t.Errorf("show does not name the refused order:\n%s", out)
	}
	if !strings.Contains(out, "· partly captured\n") {
		t.Errorf("show names the state otherwise than the console:\n%s", out)
	}

	code, out, _ = runCLI(t, dir, "", "show", number, "--json")
	show = decodeJSON[reservationJSON](t, out)
	if code != 0 || len(show.OrderConflicts) != 1 || show.OrderConflicts[0].Source != "conflict" {
		t.Errorf("show --json conflicts %+v", show.OrderConflicts)
	}
	utc := func(what, s string) {
		t.Helper()
		if tm, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") || tm.Location() != time.UTC {
			t.Errorf("%s %q: not RFC 3339 in UTC", what, s)
		}
	}
	utc("show created", show.Created)
	for _, tx := range show.Transactions {
		utc("show transaction created", tx.Created)
	}
	for _, c := range show.OrderConflicts {
		utc("show conflict received", c.Received)
	}
	_, out, _ = runCLI(t, dir, "", "reservations", "--json")
	for _, r := range decodeJSON[[]map[string]any](t, out) {
		s, _ := r["created"].(string)
		utc("reservations created", s)
	}
}

// TestAuditSaysWhenItShowsPart: `audit --limit N` under the total says it
// shows the newest N of how many and how to see more; --all lists all.
func TestAuditSaysWhenItShowsPart(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		if code, out, errs := runCLI(t, dir, "", "test-reservation", "--approve"); code != 0 {
			t.Fatalf("test-reservation: exit %d %s %s", code, out, errs)
		}
	}
	_, out, _ := runCLI(t, dir, "", "audit", "--all")
	total := strings.Count(out, "\n") - 2 // the header and the count line
	if total < 3 || !strings.HasSuffix(out, count(total, "entry", "entries")+"\n") {
		t.Fatalf("audit --all:\n%s", out)
	}
	code, out, _ := runCLI(t, dir, "", "audit", "--limit", "2")
	want := "showing the newest 2 of " + strconv.Itoa(total) + " entries; --all or --limit N for more\n"
	if code != 0 || !strings.HasSuffix(out, want) || strings.Count(out, "\n") != 4 {
		t.Fatalf("audit --limit 2:\n%s\nwant it to end %q", out, want)
	}
	if _, js, _ := runCLI(t, dir, "", "audit", "--limit", "2", "--json"); len(decodeJSON[[]map[string]any](t, js)) != 2 {
		t.Fatalf("audit --json --limit 2: %s", js)
	}
}

// TestManifestParcelsOnTheCapture: the parcel and tracking number of a
// manifest's rows are kept on the capture they made (not only in the audit
// log): `show` prints them beside the capture, `show --json` lists them.
func TestManifestParcelsOnTheCapture(t *testing.T) {
	dir := t.TempDir()
	number := newReservation(t, dir)
	manifest := filepath.Join(dir, "shipments.csv")
	csv := "Reservation Number;SKU;Qty;Parcel;Track & Trace\n" + number + ";SHOE-42;1;P1;3S001\n" + number + ";SOCK-3P;2;P2;3S002\n"
	if err := os.WriteFile(manifest, []byte(csv), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, dir, "", "batch", "capture", manifest, "--yes"); code != 0 {
		t.Fatalf("batch capture: exit %d\n%s%s", code, out, errs)
	}
	_, out, _ := runCLI(t, dir, "", "show", number, "--json")
	show := decodeJSON[reservationJSON](t, out)
	if len(show.Transactions) != 1 {
		t.Fatalf("transactions %+v", show.Transactions)
	}
	want := []parcelJSON{{Parcel: "P1", Tracking: "3S001"}, {Parcel: "P2", Tracking: "3S002"}}
	if got := show.Transactions[0].Parcels; !slices.Equal(got, want) {
		t.Fatalf("the capture's parcels %+v, want %+v", got, want)
	}
	_, out, _ = runCLI(t, dir, "", "show", number)
	if !strings.Contains(out, "· parcel P1 tracking 3S001 · parcel P2 tracking 3S002") {
		t.Fatalf("show does not print the parcels:\n%s", out)
	}
}
