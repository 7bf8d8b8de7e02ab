package views

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"
)

const timeFormatExport = "2006-01-02T15:04:05Z07:00"

// ExportTable is a snapshot of a list for export: column names and a row
// function over rows that no longer change. Amounts are exact decimal
// strings; outside text is cleaned of control sequences.
type ExportTable struct {
	Columns []string
	Len     int
	Row     func(i int) []string
}

// WriteCSV writes the table as CSV with a header line.
func (t ExportTable) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Columns); err != nil {
		return fmt.Errorf("write csv header: %w", err)
	}
	for i := 0; i < t.Len; i++ {
		if err := cw.Write(csvCells(cleanAll(t.Row(i)))); err != nil {
			return fmt.Errorf("write csv row %d: %w", i+1, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// WriteJSON writes the table as a JSON array of objects whose values are all
// strings (amounts as exact decimals), keys in column order.
func (t ExportTable) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("[")
	for i := 0; i < t.Len; i++ {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n  {")
		for j, v := range cleanAll(t.Row(i)) {
			if j > 0 {
				bw.WriteString(", ")
			}
			k, _ := json.Marshal(t.Columns[j])
			val, _ := json.Marshal(v)
			bw.Write(k)
			bw.WriteString(": ")
			bw.Write(val)
		}
		bw.WriteString("}")
	}
	if t.Len > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("]\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

func cleanAll(vs []string) []string {
	for i, v := range vs {
		vs[i] = clean(v)
	}
	return vs
}

// csvCells makes each cell inert in a spreadsheet (OWASP "CSV injection"):
// a cell that starts with = + - @, a tab or a CR (or with spaces before one
// of them, which some spreadsheets skip) is read as a formula, so it gets a
// leading single quote. An unsigned push's invoice "=HYPERLINK(…)" once
// reached operators' spreadsheets that way. Plain numbers (negative amounts)
// are left as they are: a spreadsheet reads "-12.50" as a number, not a formula.
func csvCells(vs []string) []string {
	for i, v := range vs {
		vs[i] = csvCell(v)
	}
	return vs
}

func csvCell(v string) string {
	t := strings.TrimLeft(v, " ")
	if t == "" || !strings.ContainsRune("=+-@\t\r", rune(t[0])) && !strings.HasPrefix(v, "\t") && !strings.HasPrefix(v, "\r") {
		return v
	}
	if _, err := decimal.NewFromString(v); err == nil && t == v && (t[0] == '-' || t[0] == '+') && !strings.ContainsAny(v, "eE") {
		return v
	}
	return "'" + v
}

func itoa(n int) string { return strconv.Itoa(n) }
