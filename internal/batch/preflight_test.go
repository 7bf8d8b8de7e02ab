package batch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

var testNow = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

// testReservation is SHOP-1 / RES-1: MUG 2 × 12.50, TEE 1 × 24.95, SHIP
// 4.95, DISC −5.00, reserved today.
func testReservation(inv, num string) *store.Reservation {
	d := decimal.RequireFromString
	return &store.Reservation{Key: "K-" + num, ReservationNumber: num, Invoice: inv, Currency: "EUR", LinesKnown: true,
		Status: store.Status{Code: api.StatusSuccess}, Created: testNow,
		Lines: []store.Line{
			{ArticleNumber: "MUG", Price: d("12.50"), Reserved: 2},
			{ArticleNumber: "TEE", Price: d("24.95"), Reserved: 1},
			{ArticleNumber: "SHIP", Price: d("4.95"), Reserved: 1},
			{ArticleNumber: "DISC", Price: d("-5.00"), Reserved: 1},
		}}
}

func lookupOf(rs ...*store.Reservation) Lookup {
	m := map[string]*store.Reservation{}
	for _, r := range rs {
		m[r.Invoice], m[r.ReservationNumber], m[r.Key] = r, r, r
	}
	return func(ref string) (*store.Reservation, error) {
		if r, ok := m[ref]; ok {
			cp := *r
			return &cp, nil
		}
		return nil, fmt.Errorf("reservation %q: %w", ref, store.ErrNotFound)
	}
}

func manifest(t *testing.T, csv string) *Manifest {
	t.Helper()
	m, err := ReadManifest(strings.NewReader(csv))
	if err != nil {
		t.Fatalf("ReadManifest: %v", err)
	}
	return m
}

// TestPreflightRules: each pre-flight rule refuses its reservation whole,
// naming the line and the rule, while the others go through.
func TestPreflightRules(t *testing.T) {
	old := testReservation("SHOP-OLD", "RES-OLD")
	old.Created = testNow.AddDate(0, 0, -20)
	cancelled := testReservation("SHOP-CAN", "RES-CAN")
	cancelled.Cancelled = true
	unknownOp := testReservation("SHOP-UNK", "RES-UNK")
	unknownOp.OutcomeUnknown, unknownOp.UnknownOps = true, []uint64{7}
	noLines := testReservation("SHOP-NOL", "RES-NOL")
	noLines.LinesKnown, noLines.Lines = false, nil
	partly := testReservation("SHOP-PART", "RES-PART")
	partly.Lines[0].Captured = 2
	partly.CapturedAmount = decimal.RequireFromString("25")
	awaiting := testReservation("SHOP-AW", "")
	awaiting.Status = store.Status{Code: api.StatusPendingProcessing}
	lookup := lookupOf(testReservation("SHOP-1", "RES-1"), old, cancelled, unknownOp, noLines, partly, awaiting)

	const header = "invoice,article,quantity,amount\n"
	for _, tc := range []struct {
		name     string
		rows     string
		late     bool
		rule     string // "" : accepted
		line     int
		amount   string
		contains string
	}{
		{name: "accepted, by invoice", rows: "SHOP-1,MUG,1,12.50\nSHOP-1,TEE,1,", amount: "37.45"},
		{name: "accepted, by reservation number, rows summed", rows: "RES-1,MUG,1,\nSHOP-1,MUG,1,", amount: "25.00"},
		{name: "unknown invoice", rows: "SHOP-404,MUG,1,", rule: RuleUnknown, line: 2, contains: "SHOP-404"},
		{name: "unknown article", rows: "SHOP-1,MUG,1,\nSHOP-1,HAT,1,", rule: RuleArticle, line: 3, contains: "HAT is not an article"},
		{name: "over-capture across rows", rows: "SHOP-1,MUG,1,\nSHOP-1,MUG,2,", rule: RuleOverCapture, line: 3, contains: "3 units of MUG shipped (lines 2, 3), only 2 left"},
		{name: "over-capture of a partly captured line", rows: "SHOP-PART,MUG,1,", rule: RuleOverCapture, line: 2, contains: "only 0 left"},
		{name: "window closed", rows: "SHOP-OLD,MUG,1,", rule: RuleWindow, line: 2, contains: "6 days past the 14-day shipment window"},
		{name: "window closed, --late", rows: "SHOP-OLD,MUG,1,", late: true, amount: "12.50"},
		{name: "cancelled", rows: "SHOP-CAN,MUG,1,", rule: RuleState, line: 2, contains: "nothing to capture"},
		{name: "awaiting the customer", rows: "SHOP-AW,MUG,1,", rule: RuleState, line: 2, contains: "awaiting"},
		{name: "outcome unknown", rows: "SHOP-UNK,MUG,1,", rule: RuleState, line: 2, contains: "operation 7 has an unknown outcome"},
		{name: "lines not known", rows: "SHOP-NOL,MUG,1,", rule: RuleState, line: 2, contains: "paydesk import"},
		{name: "line sum does not match", rows: "SHOP-1,MUG,2,24.00", rule: RuleLineSum, line: 2, contains: "says 24.00 for 2 × 12.50; the reservation's price makes 25.00"},
		{name: "lines add up to nothing (discount only)", rows: "SHOP-1,DISC,1,-5.00", rule: RuleLineSum, line: 2, contains: "add up to -5"},
		{name: "bad quantity", rows: "SHOP-1,MUG,two,", rule: RuleBadRow, line: 2, contains: `quantity "two"`},
		{name: "bad row refuses its reservation's good rows", rows: "SHOP-1,TEE,1,\nSHOP-1,MUG,0,", rule: RuleBadRow, line: 2, contains: "refused together"},
		{name: "no article", rows: "SHOP-1,,1,", rule: RuleBadRow, line: 2, contains: "no article number"},
		{name: "bad amount", rows: "SHOP-1,MUG,1,12.5.0", rule: RuleBadRow, line: 2, contains: "amount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pf := PlanCapture(manifest(t, header+tc.rows+"\n"), One(lookup), testNow, tc.late)
			if tc.rule == "" {
				if len(pf.Refused) != 0 || len(pf.Items) != 1 || pf.Items[0].Amount.StringFixed(2) != tc.amount {
					t.Fatalf("want one item of %s, got items %+v refused %+v", tc.amount, pf.Items, pf.Refused)
				}
				return
			}
			if len(pf.Items) != 0 || pf.RefusedReservations != 1 {
				t.Fatalf("want the reservation refused, got items %+v, %d refused", pf.Items, pf.RefusedReservations)
			}
			found := false
			for _, f := range pf.Refused {
				if f.Rule == tc.rule && f.Line == tc.line && strings.Contains(f.Message, tc.contains) {
					found = true
				}
			}
			if !found {
				t.Fatalf("want rule %s at line %d containing %q, got %+v", tc.rule, tc.line, tc.contains, pf.Refused)
			}
		})
	}
}

// TestPreflightMixed: refusals leave the other reservations, counts and
// totals right.
func TestPreflightMixed(t *testing.T) {
	lookup := lookupOf(testReservation("SHOP-1", "RES-1"), testReservation("SHOP-2", "RES-2"))
	m := manifest(t, "Invoice Number;SKU;Qty;Parcel ID;Track & Trace;Warehouse\n"+
		"SHOP-1;MUG;2;P1;T1;W\nSHOP-1;SHIP;1;P1;T1;W\nSHOP-2;TEE;1;P2;T2;W\nSHOP-3;TEE;1;P3;;W\nSHOP-3;MUG;1;P3;;W\n")
	pf := PlanCapture(m, One(lookup), testNow, false)
	if len(pf.Items) != 2 || pf.RefusedReservations != 1 || pf.RefusedRows != 2 || len(pf.Totals) != 1 ||
		pf.Totals[0].Amount.StringFixed(2) != "54.90" {
		t.Fatalf("items %d refused %d/%d totals %+v", len(pf.Items), pf.RefusedReservations, pf.RefusedRows, pf.Totals)
	}
	if it := pf.Items[0]; it.Note != "parcel P1 tracking T1" || fmt.Sprint(it.Rows) != "[2 3]" || linesText(it.Lines) != "MUG=2 SHIP=1" {
		t.Fatalf("item %+v", it)
	}
	if fmt.Sprint(m.Ignored) != "[Warehouse]" {
		t.Fatalf("ignored %v", m.Ignored)
	}
	var b strings.Builder
	WritePreflight(&b, pf)
	for _, want := range []string{"to capture            2 reservations, 3 rows, 54.90 EUR", "refused               1 reservation, 2 rows",
		"line 5  SHOP-3 TEE  unknown-invoice", "columns not used: Warehouse"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("pre-flight lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReadManifestHeader(t *testing.T) {
	for _, tc := range []struct{ csv, err string }{
		{"", "empty"},
		{"invoice,quantity\nA,1\n", "missing column article"},
		{"order,sku,qty,invoice\n", `column "invoice" given twice`},
	} {
		if _, err := ReadManifest(strings.NewReader(tc.csv)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: err %v, want %q", tc.csv, err, tc.err)
		}
	}
	a, _ := ReadManifest(strings.NewReader("invoice,article,quantity\nA,B,1\n"))
	b, _ := ReadManifest(strings.NewReader("invoice,article,quantity\nA,B,1\n"))
	c, _ := ReadManifest(strings.NewReader("invoice,article,quantity\nA,B,2\n"))
	if a.Hash != b.Hash || a.Hash == c.Hash {
		t.Fatal("the hash does not name the content")
	}
}

func TestReadRefs(t *testing.T) {
	for in, want := range map[string]string{
		"SHOP-1\nSHOP-2\n\n# done\nSHOP-1\n":                             "SHOP-1 SHOP-2",
		"invoice,article,quantity\nSHOP-1,A,1\nSHOP-2,B,1\nSHOP-1,C,1\n": "SHOP-1 SHOP-2",
		"Order No;Carrier\nSHOP-9;DHL\n":                                 "SHOP-9",
	} {
		m, err := ReadRefs(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range m.Rows {
			got = append(got, r.Ref)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q: got %v want %s", in, got, want)
		}
	}
}

func TestPlanCancelRest(t *testing.T) {
	partly := testReservation("SHOP-P", "RES-P")
	partly.Lines[0].Captured = 1
	partly.CapturedAmount = decimal.RequireFromString("12.50")
	m, _ := ReadRefs(strings.NewReader("SHOP-P\nSHOP-1\nSHOP-X\nRES-P\n"))
	pf := PlanCancelRest(m, lookupOf(partly, testReservation("SHOP-1", "RES-1")))
	if len(pf.Items) != 1 || pf.Items[0].Amount.StringFixed(2) != "37.40" || linesText(pf.Items[0].Lines) != "MUG=1 TEE=1 SHIP=1 DISC=1" {
		t.Fatalf("items %+v", pf.Items)
	}
	rules := []string{}
	for _, f := range pf.Refused {
		rules = append(rules, fmt.Sprintf("%d %s", f.Line, f.Rule))
	}
	if strings.Join(rules, ", ") != "2 nothing-shipped, 3 unknown-invoice, 4 listed-twice" {
		t.Fatalf("refused %v", rules)
	}
}

func FuzzReadManifest(f *testing.F) {
	f.Add("invoice,article,quantity,amount,parcel,tracking\nSHOP-77001,MUG-BLUE,1,12.50,P-1001,3SABC0001\n")
	f.Add("Order;SKU;Qty\nA;B;2\n;;\nA;\"x\ny\";3\n")
	f.Add("\ufeffinvoice,article,quantity\nA,B,\"1")
	f.Add("invoice,article,quantity,parcel,tracking\nA,MUG,1,P1,T1\nA,MUG,1,P1,T1\n")
	f.Add("invoice,article,quantity,parcel,tracking\nA,MUG,1,P1,T1\nRA,MUG,1,P1,T2\nA,TEE,1,,\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ReadManifest(strings.NewReader(s))
		if err != nil {
			return
		}
		pf := PlanCapture(m, One(lookupOf(testReservation("A", "RA"))), testNow, false)
		if pf.Rows != len(m.Rows) {
			t.Fatalf("rows %d != %d", pf.Rows, len(m.Rows))
		}
		// Every row is planned or refused; a repeated row is never summed.
		planned := 0
		for _, it := range pf.Items {
			planned += len(it.Rows)
		}
		if planned+pf.RefusedRows != len(m.Rows) {
			t.Fatalf("%d rows planned + %d refused != %d read", planned, pf.RefusedRows, len(m.Rows))
		}
		type key struct{ ref, article, parcel, tracking string }
		for _, it := range pf.Items {
			seen := map[key]bool{}
			for _, r := range m.Rows {
				if r.Parcel == "" && r.Tracking == "" || !containsInt(it.Rows, r.Line) {
					continue
				}
				k := key{it.Reservation, r.Article, r.Parcel, r.Tracking}
				if seen[k] {
					t.Fatalf("a repeated row was planned: %+v", r)
				}
				seen[k] = true
			}
		}
		for _, r := range m.Rows {
			if r.Problem == "" && r.Quantity <= 0 {
				t.Fatalf("row without problem has quantity %d", r.Quantity)
			}
		}
	})
}

func FuzzReadRefs(f *testing.F) {
	f.Add("SHOP-1\nSHOP-2\n# done\n")
	f.Add("invoice;article\nA;B\n\"x\ny\";C\n")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ReadRefs(strings.NewReader(s))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, r := range m.Rows {
			if r.Ref == "" || seen[r.Ref] {
				t.Fatalf("ref %q empty or twice", r.Ref)
			}
			seen[r.Ref] = true
		}
	})
}

func containsInt(v []int, n int) bool {
	for _, x := range v {
		if x == n {
			return true
		}
	}
	return false
}
