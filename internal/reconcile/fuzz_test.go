package reconcile

import (
	"bytes"
	"os"
	"testing"
)

// Statements come from outside (a bank, the gateway's back office, a
// bookkeeper's spreadsheet): every input either reads or is refused with
// ErrFormat, never panics, and what reads keeps Net = Gross - Fee with a
// currency and a day.
func fuzzStatement(f *testing.F, read func([]byte) ([]Line, error)) {
	f.Helper()
	f.Fuzz(func(t *testing.T, b []byte) {
		lines, err := read(b)
		if err != nil {
			return
		}
		for _, l := range lines {
			if !l.Net.Equal(l.Gross.Sub(l.Fee)) || len(l.Currency) != 3 || l.Date.IsZero() {
				t.Fatalf("line %+v read from %q", l, b)
			}
		}
		Reconcile(lines, []Booked{{Key: "K", Invoice: "I", Currency: "EUR"}}, Options{SettleDays: 1})
	})
}

func FuzzReadCSV(f *testing.F) {
	f.Add([]byte("PayoutReference,SettlementDate,TransactionKey,Invoice,TransactionType,Service,Currency,Gross,Fee,Net,StatusDate\n" +
		"PO-1,2026-11-25,K1,INV-1,C700,deferredkp,EUR,25.00,0.25,24.75,2026-11-25\n"))
	f.Add([]byte("SettlementDate;Invoice;Currency;Gross\n2026-11-25;INV-2;EUR;-12,50\n"))
	f.Add([]byte("\xef\xbb\xbfSettlementDate,TransactionKey,Currency,Gross\n2026-11-25,\"K\"\"2\",EUR,1e3\n"))
	fuzzStatement(f, func(b []byte) ([]Line, error) { return Read(bytes.NewReader(b), "f.csv") })
}

func FuzzReadCamt053(f *testing.F) {
	b, err := os.ReadFile("testdata/camt053.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`<Document><BkToCstmrStmt><Stmt><Ntry><Amt Ccy="EUR">1</Amt><BookgDt><Dt>2026-01-01</Dt></BookgDt></Ntry></Stmt></BkToCstmrStmt></Document>`))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><Document>&a;</Document>`))
	fuzzStatement(f, func(b []byte) ([]Line, error) { return Read(bytes.NewReader(b), "f.xml") })
}
