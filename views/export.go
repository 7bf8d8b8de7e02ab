package views

import (
	"bufio"
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

// WriteCSV writes the table as CSV with a header line, ',' between cells.
// A cell is quoted when it holds a ',' or a ';' (the list separator of NL,
// DE and AT spreadsheets, which would otherwise split "x;=1+1" into a cell
// "=1+1" there), a quote, a tab, a line end or edge spaces, and always when
// the formula guard (csvCell) changed it.
func (t ExportTable) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	writeCSVRecord(bw, t.Columns, false)
	for i := 0; i < t.Len; i++ {
		writeCSVRecord(bw, cleanAll(t.Row(i)), true)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// writeCSVRecord writes one line of cells (RFC 4180, LF line ends).
func writeCSVRecord(w *bufio.Writer, cells []string, guard bool) {
	for i, v := range cells {
		if i > 0 {
			w.WriteByte(',')
		}
		quote := false
		if guard {
			g := csvCell(v)
			quote, v = g != v, g
		}
		if quote || v != strings.TrimSpace(v) || strings.ContainsAny(v, ",;\"\t\r\n") {
			w.WriteByte('"')
			w.WriteString(strings.ReplaceAll(v, `"`, `""`))
			w.WriteByte('"')
			continue
		}
		w.WriteString(v)
	}
	w.WriteByte('\n')
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

// csvCell makes a cell inert in a spreadsheet (OWASP "CSV injection"):
// a cell that starts with = + - @, a tab or a CR (or with spaces before one
// of them, which some spreadsheets skip) is read as a formula, so it gets a
// leading single quote (and WriteCSV quotes it). An unsigned push's invoice
// "=HYPERLINK(…)" once reached operators' spreadsheets that way. A cell
// holding a ';' or a ',' is quoted whole by WriteCSV, so no part of it
// starts a cell of its own whichever separator the spreadsheet splits on.
// Plain numbers (negative amounts) are left as they are: a spreadsheet
// reads "-12.50" as a number, not a formula.
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
