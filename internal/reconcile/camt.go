package reconcile

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// camtAmount is an ISO 20022 amount: <Amt Ccy="EUR">12.50</Amt>.
type camtAmount struct {
	Ccy   string `xml:"Ccy,attr"`
	Value string `xml:",chardata"`
}

// camtTx is one TxDtls of an entry: a transaction the payout carries.
// Versions differ in where the amount sits (TxDtls/Amt from .001.04 on,
// AmtDtls before) and how charges are listed; both are read.
type camtTx struct {
	Refs struct {
		EndToEndID string `xml:"EndToEndId"`
		TxID       string `xml:"TxId"`
		AcctSvcr   string `xml:"AcctSvcrRef"`
	} `xml:"Refs"`
	Amt     *camtAmount `xml:"Amt"`
	AmtDtls struct {
		TxAmt   *camtAmount `xml:"TxAmt>Amt"`
		InstdAm *camtAmount `xml:"InstdAmt>Amt"`
	} `xml:"AmtDtls"`
	CdtDbtInd string       `xml:"CdtDbtInd"`
	Chrgs     []camtAmount `xml:"Chrgs>Amt"`
	ChrgsRcrd []camtAmount `xml:"Chrgs>Rcrd>Amt"`
	Ustrd     []string     `xml:"RmtInf>Ustrd"`
	StrdRef   []string     `xml:"RmtInf>Strd>CdtrRefInf>Ref"`
	AddtlInf  string       `xml:"AddtlTxInf"`
}

// ReadCamt053 reads an ISO 20022 bank-to-customer statement (camt.053, any
// version: elements are matched by their local names). Each transaction
// detail (Ntry/NtryDtls/TxDtls) is a line, with the entry's booking date
// and reference (AcctSvcrRef, else NtryRef) as its payout; an entry
// without details is one line of its own. The end-to-end id (else TxId)
// is the transaction key; the first unstructured remittance line (else a
// structured creditor reference) the invoice. It streams: a file of a
// million details is read one detail at a time.
func ReadCamt053(r io.Reader, name string) ([]Line, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	var (
		out     []Line
		inNtry  bool
		entry   Line // the entry's context: payout, date, currency, amount
		entryCd string
		details int
		entries int
		path    []string
	)
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, formatErr(name, "xml", err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			local := t.Name.Local
			path = append(path, local)
			if len(path) > 32 {
				return nil, formatErr(name, "xml", "nested more than 32 deep")
			}
			switch {
			case local == "Ntry":
				inNtry, details, entryCd = true, 0, ""
				entries++
				entry = Line{Source: fmt.Sprintf("%s:entry %d", name, entries)}
			case local == "TxDtls" && inNtry:
				var tx camtTx
				if err := d.DecodeElement(&tx, &t); err != nil {
					return nil, formatErr(fmt.Sprintf("%s:entry %d", name, entries), "TxDtls", err.Error())
				}
				path = path[:len(path)-1]
				details++
				src := fmt.Sprintf("%s:entry %d detail %d", name, entries, details)
				l, err := camtLine(entry, entryCd, tx, src)
				if err != nil {
					return nil, err
				}
				if len(out) == MaxLines {
					return nil, formatErr(src, "file", fmt.Sprintf("more than %d lines", MaxLines))
				}
				out = append(out, l)
			case inNtry && parentIs(path, "Ntry") && (local == "Amt" || local == "CdtDbtInd" || local == "AcctSvcrRef" || local == "NtryRef"):
				var v camtAmount
				if err := d.DecodeElement(&v, &t); err != nil {
					return nil, formatErr(entry.Source, local, err.Error())
				}
				path = path[:len(path)-1]
				val := strings.TrimSpace(v.Value)
				if len(val) > maxFieldBytes {
					return nil, formatErr(entry.Source, local, fmt.Sprintf("longer than %d bytes", maxFieldBytes))
				}
				switch local {
				case "Amt":
					a, err := amount(val)
					if err != nil {
						return nil, formatErr(entry.Source, "Amt", err.Error())
					}
					entry.Gross, entry.Currency = a, strings.TrimSpace(v.Ccy)
				case "CdtDbtInd":
					entryCd = val
				case "AcctSvcrRef":
					entry.Payout = val
				case "NtryRef":
					if entry.Payout == "" {
						entry.Payout = val
					}
				}
			case inNtry && (local == "Dt" || local == "DtTm") && len(path) >= 2 && (path[len(path)-2] == "BookgDt" || path[len(path)-2] == "ValDt"):
				var v string
				if err := d.DecodeElement(&v, &t); err != nil {
					return nil, formatErr(entry.Source, local, err.Error())
				}
				path = path[:len(path)-1]
				if !entry.Date.IsZero() && path[len(path)-1] == "ValDt" {
					continue // the booking date wins
				}
				v = strings.TrimSpace(v)
				if len(v) >= 10 {
					v = v[:10]
				}
				day, err := time.Parse(time.DateOnly, v)
				if err != nil {
					return nil, formatErr(entry.Source, "BookgDt", fmt.Sprintf("%q is not a date", v))
				}
				entry.Date = day
			}
		case xml.EndElement:
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			if t.Name.Local == "Ntry" && inNtry {
				inNtry = false
				if details == 0 {
					l := entry
					if entryCd == "DBIT" {
						l.Gross = l.Gross.Neg()
					}
					l.Net = l.Gross
					// A booking of the bank's own (a fee, a correction)
					// names no transaction: it stays a line, unknown to
					// paydesk, so the totals still add up.
					if err := checkDayAndCurrency(l); err != nil {
						return nil, err
					}
					out = append(out, l)
				}
			}
		}
	}
	if entries == 0 {
		return nil, formatErr(name, "Ntry", "no entries: not a camt.053 statement")
	}
	return out, nil
}

func parentIs(path []string, name string) bool {
	return len(path) >= 2 && path[len(path)-2] == name
}

// camtLine makes a statement line of a transaction detail in its entry.
func camtLine(entry Line, entryCd string, tx camtTx, src string) (Line, error) {
	l := Line{Source: src, Payout: entry.Payout, Date: entry.Date, Currency: entry.Currency}
	key := strings.TrimSpace(tx.Refs.EndToEndID)
	if key == "" || strings.EqualFold(key, "NOTPROVIDED") {
		key = strings.TrimSpace(tx.Refs.TxID)
	}
	l.Key = key
	for _, u := range append(tx.Ustrd, tx.StrdRef...) {
		if u = strings.TrimSpace(u); u != "" {
			l.Invoice = u
			break
		}
	}
	amt := tx.Amt
	for _, a := range []*camtAmount{tx.AmtDtls.TxAmt, tx.AmtDtls.InstdAm} {
		if amt == nil {
			amt = a
		}
	}
	if amt == nil {
		return l, formatErr(src, "Amt", "the detail has no amount")
	}
	a, err := amount(strings.TrimSpace(amt.Value))
	if err != nil {
		return l, formatErr(src, "Amt", err.Error())
	}
	if c := strings.TrimSpace(amt.Ccy); c != "" {
		l.Currency = c
	}
	cd := strings.TrimSpace(tx.CdtDbtInd)
	if cd == "" {
		cd = entryCd
	}
	if cd == "DBIT" {
		a = a.Neg()
	}
	l.Gross = a
	for _, c := range append(tx.Chrgs, tx.ChrgsRcrd...) {
		f, err := amount(strings.TrimSpace(c.Value))
		if err != nil {
			return l, formatErr(src, "Chrgs", err.Error())
		}
		l.Fee = l.Fee.Add(f)
	}
	l.Net = l.Gross.Sub(l.Fee)
	l.Type = strings.TrimSpace(tx.AddtlInf)
	if len(l.Key) > maxFieldBytes || len(l.Invoice) > maxFieldBytes || len(l.Type) > maxFieldBytes {
		return l, formatErr(src, "TxDtls", fmt.Sprintf("a reference longer than %d bytes", maxFieldBytes))
	}
	return l, checkLine(l)
}

// checkLine refuses a line that names no transaction, no day or no
// currency.
func checkLine(l Line) error {
	if l.Key == "" && l.Invoice == "" {
		return formatErr(l.Source, "Refs", "neither an end-to-end id nor a remittance line: the line names no transaction")
	}
	return checkDayAndCurrency(l)
}

func checkDayAndCurrency(l Line) error {
	switch {
	case l.Date.IsZero():
		return formatErr(l.Source, "BookgDt", "no booking date")
	case len(l.Currency) != 3:
		return formatErr(l.Source, "Ccy", fmt.Sprintf("%q is not a currency code (three letters)", l.Currency))
	}
	return nil
}
