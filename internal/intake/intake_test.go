package intake

import (
	"os"
	"path/filepath"
	"paydesk/internal/pgtest"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store"
)

func reserveEnvelope(t testing.TB, invoice string) string {
	t.Helper()
	rs := api.Reserve{Currency: "EUR", Invoice: invoice, ClientIP: api.ClientIP{Address: "127.0.0.1"},
		Articles: []api.Article{{Number: "MUG", Title: "Mug", Price: decimal.RequireFromString("12.5"), Quantity: 2, Vat: decimal.RequireFromString("21")}},
		Billing: api.Address{FirstName: "Anna", LastName: "de Vries", Street: "Kade", HouseNumber: "1", City: "Utrecht",
			Country: "NL", Email: "anna@example.nl", PhoneNumber: "0301234567"},
		ShippingSameAsBilling: true, Customer: api.Customer{Gender: 2, OperatingCountry: "NL", Pno: "01011990"}}
	b, err := api.MarshalCanonical(rs.Request())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(pgtest.StoreAt(t, filepath.Join(t.TempDir(), "c.db")), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestReadEnvelopes(t *testing.T) {
	a, b := reserveEnvelope(t, "A-1"), reserveEnvelope(t, "B-2")
	pay := `{"Currency":"EUR","Invoice":"P","AmountDebit":10,"Services":{"ServiceList":[{"Name":"deferredkp","Action":"Pay","Parameters":[{"Name":"ReservationNumber","Value":"R"}]}]}}`
	noArticles := `{"Currency":"EUR","Invoice":"N","ClientIP":{"Type":0,"Address":"127.0.0.1"},"Services":{"ServiceList":[{"Name":"deferredkp","Action":"Reserve","Parameters":[]}]}}`
	cases := []struct {
		name     string
		in       string
		invoices []string
		errs     []string // per item, "" for none
		fileErr  string
	}{
		{"one object", a, []string{"A-1"}, []string{""}, ""},
		{"NDJSON", a + "\n" + b + "\n", []string{"A-1", "B-2"}, []string{"", ""}, ""},
		{"array", "[\n" + a + ",\n" + b + "\n]", []string{"A-1", "B-2"}, []string{"", ""}, ""},
		{"not a Reserve", a + "\n" + pay, []string{"A-1", ""}, []string{"", "not a Reserve: the envelope asks Pay of service deferredkp"}, ""},
		{"Reserve without articles", noArticles, []string{""}, []string{"Article"}, ""},
		{"broken JSON is a refused record", a + "\n{\"Currency\":", []string{"A-1", ""}, []string{"", "not complete"}, ""},
		{"broken line, then a good one", a + "\n{\"Currency\":\n" + b + "\n", []string{"A-1", "", "B-2"}, []string{"", "its line ends inside it", ""}, ""},
		{"garbage line", a + "\nhello\n" + b, []string{"A-1", "", "B-2"}, []string{"", "not a JSON object", ""}, ""},
		{"oversized envelope refused, not cut", a + "\n{" + strings.Repeat(" ", MaxEnvelope) + "}\n" + b, []string{"A-1", "", "B-2"}, []string{"", "larger than 1048576 bytes", ""}, ""},
		{"array not closed", "[" + a + ",", []string{"A-1"}, []string{""}, "ends inside the array"},
		{"data after the array", "[" + a + "] x", []string{"A-1"}, []string{""}, "after the end of the array"},
		{"pretty-printed object", strings.Replace(a, ",", ",\n  ", -1), []string{"A-1"}, []string{""}, ""},
		{"empty", "", nil, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, err := ReadEnvelopes(strings.NewReader(tc.in))
			if (err != nil) != (tc.fileErr != "") || (err != nil && !strings.Contains(err.Error(), tc.fileErr)) {
				t.Fatalf("file error %v, want %q", err, tc.fileErr)
			}
			if len(items) != len(tc.invoices) {
				t.Fatalf("%d items, want %d: %+v", len(items), len(tc.invoices), items)
			}
			for i, it := range items {
				if it.Invoice != tc.invoices[i] {
					t.Errorf("item %d invoice %q, want %q", i, it.Invoice, tc.invoices[i])
				}
				switch {
				case tc.errs[i] == "" && it.Err != nil:
					t.Errorf("item %d: %v", i, it.Err)
				case tc.errs[i] != "" && (it.Err == nil || !strings.Contains(it.Err.Error(), tc.errs[i])):
					t.Errorf("item %d error %v, want %q", i, it.Err, tc.errs[i])
				}
			}
		})
	}
	items, _ := ReadEnvelopes(strings.NewReader(a + "\n\n" + b))
	if items[1].Where != "line 3" {
		t.Fatalf("second envelope at %q, want line 3", items[1].Where)
	}
}

func TestReadCSV(t *testing.T) {
	const head = "invoice,article_number,title,quantity,price,vat,first_name,last_name,email\n"
	cases := []struct {
		name    string
		in      string
		want    []string // per order: "INVOICE lines amount" or "error: …"
		fileErr string
	}{
		{"two orders", head +
			"S-1,MUG,Mug,2,12.50,21,Jürgen,Müller,jm@example.de\n" +
			"S-1,SHIP,Shipping,1,4.95,21,,,\n" +
			"S-2,TEE,Tee,1,\"24,95\",9,Anna,Vries,a@example.nl\n",
			[]string{"S-1 2 29.95", "S-2 1 24.95"}, ""},
		// An order is its consecutive rows: an invoice that comes back is a
		// second order for it (the store answers known or conflict).
		{"invoice comes back", head +
			"S-1,MUG,Mug,2,12.50,21,,,\nS-2,TEE,Tee,1,1,9,,,\nS-1,SHIP,Shipping,1,4.95,21,,,\n",
			[]string{"S-1 1 25", "S-2 1 1", "S-1 1 4.95"}, ""},
		// The rules of a Reserve's lines, as /orders applies them (issue 24).
		{"duplicate article refused", head + "S-1,MUG,Mug,1,10,21,,,\nS-1,MUG,Mug again,1,10,21,,,\n",
			[]string{"error: Reserve rules: row 3: ArticleNumber: must be unique"}, ""},
		{"discount above the total refused", head + "S-1,MUG,Mug,1,10,21,,,\nS-1,DISC,Discount,1,-15.00,21,,,\n",
			[]string{"error: Reserve rules: ArticlePrice: the articles must add up to more than 0"}, ""},
		{"only a negative line refused", head + "S-1,DISC,Discount,1,-15.00,21,,,\n",
			[]string{"error: Reserve rules: ArticlePrice: the articles must add up to more than 0"}, ""},
		{"bad email refused", head + "S-1,MUG,Mug,1,10,21,A,B,not-an-email\n",
			[]string{"error: Reserve rules: BillingEmail"}, ""},
		{"row too long stops the file, refusing its order whole", head + "S-0,MUG,Mug,1,1,21,,,\nS-1,MUG,Mug,1,1,21,,,\nS-1,TEE,\"" + strings.Repeat("x", MaxRowBytes+256<<10) + "\",1,1,21,,,\nS-2,MUG,Mug,1,1,21,,,\n",
			[]string{"S-0 1 1", "error: the file stops at row 4, which may belong to this order"}, "longer than 1048576 bytes"},
		{"semicolons and decimal commas", "Invoice Number;SKU;Description;Qty;Unit Price;VAT %\nS-1;MUG;Mug;1;10,50;21\n", []string{"S-1 1 10.5"}, ""},
		{"header aliases", "Order,SKU,Description,Qty,Unit Price,VAT %\nS-1,MUG,Mug,1,10,21\n", []string{"S-1 1 10"}, ""},
		{"missing column", "invoice,article_number,title,quantity,price\nS-1,MUG,Mug,1,10\n", nil, "missing column vat"},
		{"unknown column", "invoice,article_number,title,quantity,price,vat,colour\n", nil, `unknown column "colour"`},
		{"exponent price", head + "S-1,MUG,Mug,1,1e2,21,,,\n", []string{"error: row 2: column price: \"1e2\" is not a plain decimal"}, ""},
		{"three decimals", head + "S-1,MUG,Mug,1,1.005,21,,,\n", []string{"error: row 2: column price: 1.005 has more than two decimals"}, ""},
		{"zero quantity", head + "S-1,MUG,Mug,0,1,21,,,\n", []string{"error: row 2: column quantity: \"0\" is not a whole number above 0"}, ""},
		{"bad row refuses its whole order", head + "S-1,MUG,Mug,1,1,21,,,\nS-1,TEE,,1,1,21,,,\nS-2,MUG,Mug,1,1,21,,,\n",
			[]string{"error: row 3: column title: empty", "S-2 1 1"}, ""},
		{"customer differs within an order", head + "S-1,MUG,Mug,1,1,21,Ann,,\nS-1,TEE,Tee,1,1,21,Bob,,\n",
			[]string{`error: row 3: column first_name: "Bob" differs from "Ann" on row 2`}, ""},
		{"no invoice", head + ",MUG,Mug,1,1,21,,,\n", []string{"error: row 2: column invoice: empty"}, ""},
		{"vat over 100", head + "S-1,MUG,Mug,1,1,121,,,\n", []string{"error: row 2: column vat: 121 is not a percentage"}, ""},
		{"discount line", head + "S-1,MUG,Mug,2,10,21,,,\nS-1,DISC,Discount,1,-5,21,,,\n", []string{"S-1 2 15"}, ""},
		{"blank lines skipped", head + "\nS-1,MUG,Mug,1,1,21,,,\n,,,,,,,,\n", []string{"S-1 1 1"}, ""},
		{"empty file", "", nil, "empty file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, err := ReadCSV(strings.NewReader(tc.in))
			if (err != nil) != (tc.fileErr != "") || (err != nil && !strings.Contains(err.Error(), tc.fileErr)) {
				t.Fatalf("file error %v, want %q", err, tc.fileErr)
			}
			var got []string
			for _, it := range items {
				if it.Err != nil {
					got = append(got, "error: "+it.Err.Error())
					continue
				}
				got = append(got, it.Invoice+" "+itoa(len(it.Order.Articles))+" "+it.Order.Amount().String())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("order %d: %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestImportReportsPerOrder(t *testing.T) {
	db := openDB(t)
	f, err := os.Open(filepath.Join("..", "..", "testdata", "webshop", "orders.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	collect := func(out *[]Outcome) func(Outcome) {
		*out = (*out)[:0]
		return func(o Outcome) { *out = append(*out, o) }
	}
	var out []Outcome
	n, err := Import(t.Context(), db, "orders.csv", "import orders.csv", f, collect(&out))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0].Result != ResultImported || out[1].Result != ResultImported || out[0].Where != "rows 2-4" ||
		n != (Counts{Read: 2, Imported: 2}) {
		t.Fatalf("first import: %+v %+v", out, n)
	}
	o, err := db.Order(t.Context(), "SHOP-88001")
	if err != nil || !o.Amount().Equal(decimal.RequireFromString("54.90")) || o.Customer() != "Jürgen Müller" || o.Billing.Country != "DE" {
		t.Fatalf("order %+v %v", o, err)
	}
	// The same file again changes nothing; an envelope with other lines for
	// a known invoice is a conflict; NDJSON from stdin is sniffed.
	f2, _ := os.Open(filepath.Join("..", "..", "testdata", "webshop", "orders.csv"))
	defer f2.Close()
	_, _ = Import(t.Context(), db, "orders.csv", "import", f2, collect(&out))
	if out[0].Result != ResultKnown || out[1].Result != ResultKnown {
		t.Fatalf("second import: %+v", out)
	}
	env := reserveEnvelope(t, "SHOP-88002") + "\n" + reserveEnvelope(t, "SHOP-88003") + "\n"
	_, _ = Import(t.Context(), db, "-", "import stdin", strings.NewReader(env), collect(&out))
	if len(out) != 2 || out[0].Result != ResultConflict || out[1].Result != ResultImported {
		t.Fatalf("envelopes: %+v", out)
	}
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		name, head string
		want       Format
	}{
		{"orders.csv", "{", FormatCSV},
		{"orders.ndjson", "invoice", FormatJSON},
		{"-", "  \n{\"Currency\"", FormatJSON},
		{"-", "[", FormatJSON},
		{"-", "invoice,article", FormatCSV},
		{"x.txt", "\ufeff{", FormatJSON},
	} {
		if got := Sniff(tc.name, []byte(tc.head)); got != tc.want {
			t.Errorf("Sniff(%q, %q) = %s, want %s", tc.name, tc.head, got, tc.want)
		}
	}
}
