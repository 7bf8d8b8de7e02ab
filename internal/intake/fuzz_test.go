package intake

import (
	"errors"
	"io"
	"strings"
	"testing"

	"paydesk/api"
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
	f.Add("invoice,article_number,title,quantity,price,vat\nS-1,MUG,Mug,1,10,21\nS-1,MUG,Mug,1,10,21\n")
	f.Add("invoice,article_number,title,quantity,price,vat\nS-1,MUG,Mug,1,10,21\nS-1,DISC,Discount,1,-15.00,21\n")
	f.Add("invoice,article_number,title,quantity,price,vat\nS-1,MUG,Mug,1,10,21\nS-2,MUG,\"unterminated\n")
	f.Add("invoice,article_number,title,quantity,price,vat\nS-1,MUG,Mug,1,10,21\nS-2,MUG,Mug,1,10,21\nS-1,TEE,Tee,1,5,21\n")
	f.Fuzz(func(t *testing.T, in string) {
		items, _ := ReadCSV(strings.NewReader(in))
		for _, it := range items {
			if it.Err == nil {
				// Every order handed out passes the rules /orders applies
				// to a Reserve's lines.
				o := it.Order
				if err := api.ValidateOrder(o.Currency, o.Invoice, o.Articles, o.Billing, o.Shipping); err != nil {
					t.Fatalf("order %q handed out though %v", o.Invoice, err)
				}
			}
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

// FuzzReadEnvelopes: any file of envelopes is read to its end without a
// panic; every record is an item with its line (none is cut or dropped:
// the reader always moves on), and an order it accepts is a valid Reserve's.
func FuzzReadEnvelopes(f *testing.F) {
	a, b := reserveEnvelope(f, "SHOP-1"), reserveEnvelope(f, "SHOP-2")
	f.Add([]byte(a + "\n" + b + "\n"))
	f.Add([]byte("[" + a + "," + b + "]"))
	f.Add([]byte(a + "\n{\"Currency\":\n" + b))
	f.Add([]byte("[" + a + ",\n"))
	f.Add([]byte("\ufeff" + strings.ReplaceAll(a, ",", ",\n ")))
	f.Add([]byte("hello\n,\n}\n\"x\\\"\"\n" + a))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewEnvelopeReader(strings.NewReader(string(in)))
		for n := 0; ; n++ {
			if n > len(in)+1 {
				t.Fatalf("more records (%d) than bytes (%d): the reader does not move on", n, len(in))
			}
			it, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if it2, err2 := r.Next(); err2 == nil || !errors.Is(err2, io.EOF) {
					t.Fatalf("a record (%+v, %v) after the error that stopped the file", it2, err2)
				}
				return
			}
			if !strings.HasPrefix(it.Where, "line ") {
				t.Fatalf("record without its line: %+v", it)
			}
			if it.Err == nil && (it.Invoice == "" || len(it.Order.Articles) == 0) {
				t.Fatalf("accepted an order without invoice or lines: %+v", it)
			}
		}
	})
}
