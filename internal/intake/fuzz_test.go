package intake

import (
	"strings"
	"testing"
)

// FuzzOrderFromEnvelope: any body the intake receives is decoded without a
// panic, and an order it accepts has an invoice and at least one line with a
// positive quantity.
func FuzzOrderFromEnvelope(f *testing.F) {
	f.Add([]byte(reserveEnvelope(f, "SHOP-1")))
	f.Add([]byte(`{"Currency":"EUR","Services":{"ServiceList":[{"Name":"deferredkp","Action":"Reserve","Parameters":[{"Name":"ArticleNumber","GroupType":"Article","GroupID":1,"Value":7}]}]}}`))
	f.Add([]byte(`{"currency":"EUR","invoice":"x","services":{"serviceList":[{"name":"DEFERREDKP","action":"reserve"}]}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"Services":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := OrderFromEnvelope(body)
		if err != nil {
			return
		}
		if o.Invoice == "" || len(o.Articles) == 0 {
			t.Fatalf("accepted an order without invoice or lines: %+v", o)
		}
		for _, a := range o.Articles {
			if a.Quantity <= 0 {
				t.Fatalf("accepted quantity %d", a.Quantity)
			}
		}
	})
}

// FuzzReadCSV: any file is read without a panic; every order it yields has
// an invoice and lines with positive quantities and at most two decimals.
func FuzzReadCSV(f *testing.F) {
	f.Add("invoice,article_number,title,quantity,price,vat\nS-1,MUG,Mug,2,12.50,21\nS-1,TEE,Tee,1,24.95,21\n")
	f.Add("Order;SKU;Description;Qty;Unit Price;VAT %\nS-1;MUG;Mug;1;10,50;21\n")
	f.Add("invoice,article_number,title,quantity,price,vat,first_name\nS-1,M,\"a\"\"b\",1,1e2,21,x\n,,,\n")
	f.Add("\ufeffinvoice,article,title,qty,price,vat\r\nS,1,2,3,4,5\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		items, _ := ReadCSV(strings.NewReader(in))
		for _, it := range items {
			if it.Err != nil {
				if it.Where == "" {
					t.Fatalf("refusal without a place: %v", it.Err)
				}
				continue
			}
			if it.Invoice == "" || len(it.Order.Articles) == 0 {
				t.Fatalf("order without invoice or lines: %+v", it)
			}
			for _, a := range it.Order.Articles {
				if a.Quantity <= 0 || !a.Price.Equal(a.Price.Round(2)) {
					t.Fatalf("bad line accepted: %+v", a)
				}
			}
		}
	})
}
