package reconcile

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Line is one settled transaction of a statement.
type Line struct {
	Source   string // file:line (CSV) or file:entry/detail (camt.053)
	Payout   string // the payout reference the money came with
	Date     time.Time
	Key      string // the gateway's transaction key, "" when the statement has none
	Invoice  string
	Type     string // the transaction type, as the statement names it
	Currency string
	Gross    decimal.Decimal // signed: a refund is negative
	Fee      decimal.Decimal
	Net      decimal.Decimal
}

// Limits of what a statement may hold: a day's statement of a large shop
// is some 100,000 lines; a field is a key, an invoice or an amount.
const (
	MaxLines      = 2_000_000
	maxFieldBytes = 256
)

// ErrFormat wraps every refusal of a statement's content.
var ErrFormat = errors.New("statement")

func formatErr(src, field, rule string) error {
	return fmt.Errorf("%w %s: %s: %s", ErrFormat, src, field, rule)
}

// Read reads a statement in either format: camt.053 when its first
// non-blank byte is '<', the family's CSV otherwise.
func Read(r io.Reader, name string) ([]Line, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, formatErr(name, "file", "empty")
			}
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
			continue
		case 0xEF: // a UTF-8 byte order mark, as spreadsheets write
			if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
				_, _ = br.Discard(3)
				continue
			}
		case '<':
			return ReadCamt053(br, name)
		}
		return ReadCSV(br, name)
	}
}

// csvColumns are the CSV's columns paydesk reads, by the names the
// family's statement header gives them (matched without regard to case,
// spaces or underscores); the others are ignored.
var csvColumns = map[string]string{
	"payoutreference": "payout", "settlementdate": "date", "transactionkey": "key", "invoice": "invoice",
	"transactiontype": "type", "currency": "currency", "gross": "gross", "fee": "fee", "net": "net",
}

func columnName(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.NewReplacer(" ", "", "_", "", "-", "").Replace(h)
}

// ReadCSV reads the family's settlement CSV: a header naming the columns
// (StatementHeader of the sandbox), then one transaction a line. A comma
// or a semicolon separates the fields (spreadsheets in Europe write the
// latter). Each refusal names the line and the field.
func ReadCSV(r io.Reader, name string) ([]Line, error) {
	br := bufio.NewReader(r)
	first, _ := br.Peek(4096)
	cr := csv.NewReader(br)
	if nl := bytes.IndexByte(first, '\n'); bytes.Count(first[:max(nl, 0)], []byte(";")) > bytes.Count(first[:max(nl, 0)], []byte(",")) {
		cr.Comma = ';'
	}
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, formatErr(name+":1", "header", csvError(err))
	}
	col := map[string]int{}
	for i, h := range head {
		if c, ok := csvColumns[columnName(h)]; ok {
			col[c] = i
		}
	}
	for _, need := range []string{"date", "currency", "gross"} {
		if _, ok := col[need]; !ok {
			return nil, formatErr(name+":1", "header", "no "+need+" column (want "+strings.Join(wantedHeader, ",")+")")
		}
	}
	if _, ok := col["key"]; !ok {
		if _, ok := col["invoice"]; !ok {
			return nil, formatErr(name+":1", "header", "neither a TransactionKey nor an Invoice column")
		}
	}
	var out []Line
	for n := 2; ; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		src := fmt.Sprintf("%s:%d", name, n)
		if err != nil {
			return nil, formatErr(src, "line", csvError(err))
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(out) == MaxLines {
			return nil, formatErr(src, "file", fmt.Sprintf("more than %d lines", MaxLines))
		}
		get := func(c string) (string, error) {
			i, ok := col[c]
			if !ok || i >= len(rec) {
				return "", nil
			}
			v := strings.TrimSpace(rec[i])
			if len(v) > maxFieldBytes {
				return "", formatErr(src, head[i], fmt.Sprintf("longer than %d bytes", maxFieldBytes))
			}
			return v, nil
		}
		l := Line{Source: src}
		var date, gross, fee, net string
		for _, f := range []struct {
			c   string
			dst *string
		}{{"payout", &l.Payout}, {"key", &l.Key}, {"invoice", &l.Invoice}, {"type", &l.Type}, {"currency", &l.Currency},
			{"date", &date}, {"gross", &gross}, {"fee", &fee}, {"net", &net}} {
			v, err := get(f.c)
			if err != nil {
				return nil, err
			}
			*f.dst = v
		}
		if l.Key == "" && l.Invoice == "" {
			return nil, formatErr(src, "TransactionKey", "empty, and so is Invoice: the line names no transaction")
		}
		if l.Date, err = time.Parse(time.DateOnly, date); err != nil {
			return nil, formatErr(src, "SettlementDate", fmt.Sprintf("%q is not a date (YYYY-MM-DD)", date))
		}
		if len(l.Currency) != 3 {
			return nil, formatErr(src, "Currency", fmt.Sprintf("%q is not a currency code (three letters)", l.Currency))
		}
		if l.Gross, err = amount(gross); err != nil {
			return nil, formatErr(src, "Gross", err.Error())
		}
		if fee != "" {
			if l.Fee, err = amount(fee); err != nil {
				return nil, formatErr(src, "Fee", err.Error())
			}
		}
		l.Net = l.Gross.Sub(l.Fee)
		if net != "" {
			n, err := amount(net)
			if err != nil {
				return nil, formatErr(src, "Net", err.Error())
			}
			if !n.Equal(l.Net) {
				return nil, formatErr(src, "Net", fmt.Sprintf("%s is not Gross less Fee (%s)", n.StringFixed(2), l.Net.StringFixed(2)))
			}
		}
		out = append(out, l)
	}
}

var wantedHeader = []string{"PayoutReference", "SettlementDate", "TransactionKey", "Invoice", "TransactionType", "Currency", "Gross", "Fee", "Net"}

func csvError(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	if errors.Is(err, io.EOF) {
		return "empty"
	}
	return err.Error()
}

// amount reads a statement amount: a decimal point (or a comma, as
// European spreadsheets write), at most two decimals, a sign in front.
func amount(s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Zero, errors.New("empty")
	}
	t := s
	if strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
		t = strings.Replace(t, ",", ".", 1)
	}
	for i, c := range t {
		if !(c >= '0' && c <= '9' || c == '.' || (i == 0 && (c == '-' || c == '+'))) {
			return decimal.Zero, fmt.Errorf("%q is not an amount", s)
		}
	}
	d, err := decimal.NewFromString(t)
	if err != nil {
		return decimal.Zero, fmt.Errorf("%q is not an amount", s)
	}
	if d.Exponent() < -2 {
		return decimal.Zero, fmt.Errorf("%q has more than two decimals", s)
	}
	if d.Abs().GreaterThan(decimal.New(1, 12)) {
		return decimal.Zero, fmt.Errorf("%q is out of range", s)
	}
	return d, nil
}
