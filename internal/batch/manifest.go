package batch

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/private"
	"paydesk/internal/textsafe"
)

// Limits of a manifest, read as a stream: a day of a large warehouse is a
// few megabytes, some tens of thousands of rows. A manifest over a limit is
// refused whole, naming it (nothing is planned or sent): never cut.
const (
	MaxManifestRows     = 250_000
	MaxManifestRowBytes = 64 << 10
	// maxField bounds a reference, article, parcel or tracking number; a
	// longer one makes its row a bad row, kept cut to name it.
	maxField = 128
)

// Row is one line of a shipment manifest: units of an article that left the
// building for an invoice (or a reservation number).
type Row struct {
	Line     int    // line number in the file (the header is line 1)
	Ref      string // invoice or reservation number, as written
	Article  string
	Quantity int
	// Amount is the row's amount as the warehouse reckons it (price ×
	// quantity), when the manifest has an amount column.
	Amount   *decimal.Decimal
	Parcel   string
	Tracking string
	// Problem says what is wrong with the row as written (a quantity that
	// is not a whole number, a missing field); the pre-flight refuses it.
	Problem string
}

// Manifest is a parsed manifest and the hash of its bytes, which names it
// across runs.
type Manifest struct {
	Rows []Row
	Hash string // SHA-256 of the bytes, hex
	// Ignored are header columns paydesk does not use (a WMS export has
	// many); the report lists them so a misspelt column is noticed.
	Ignored []string
}

type colKind int

const (
	cRef colKind = iota
	cArticle
	cQuantity
	cAmount
	cParcel
	cTracking
	nCols
)

// colNames are the header names a column is known by, folded: lower case
// without spaces, '_', '-', '.', '#', '&' (as internal/intake matches order CSVs).
var colNames = [nCols][]string{
	cRef: {"invoice", "invoicenumber", "invoiceno", "order", "ordernumber", "orderno", "orderid",
		"reservation", "reservationnumber", "reservationno"},
	cArticle:  {"article", "articlenumber", "articleno", "sku", "item", "itemnumber", "product", "productnumber"},
	cQuantity: {"quantity", "qty", "articlequantity", "shipped", "shippedquantity", "units", "count"},
	cAmount:   {"amount", "lineamount", "linetotal", "total", "linesum"},
	cParcel:   {"parcel", "parcelid", "parcelnumber", "package", "packageid", "shipment", "shipmentid", "colli"},
	cTracking: {"tracking", "trackingnumber", "trackingcode", "trackandtrace", "tracktrace", "barcode"},
}

// ColumnNames is the name the documentation gives each column, required
// ones first.
var ColumnNames = [nCols]string{"invoice", "article", "quantity", "amount", "parcel", "tracking"}

func fold(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch r {
		case ' ', '_', '-', '.', '#', '&', '\ufeff':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func columnOf(h string) (colKind, bool) {
	f := fold(h)
	for k, names := range colNames {
		for _, n := range names {
			if f == n {
				return colKind(k), true
			}
		}
	}
	return 0, false
}

// manifestReader is a CSV reader over a stream that hashes every byte it
// reads (the SHA-256 names the manifest across runs) and bounds the bytes
// one row may take: encoding/csv holds a whole record (all of a quoted
// cell) before it returns it.
type manifestReader struct {
	*csv.Reader
	guard *private.RowGuard
	hash  hash.Hash
}

func newManifestReader(r io.Reader) *manifestReader {
	h := sha256.New()
	cr, g := private.NewCSVReader(io.TeeReader(r, h), MaxManifestRowBytes)
	return &manifestReader{Reader: cr, guard: g, hash: h}
}

// read reads a record and marks where the next one starts.
func (m *manifestReader) read() ([]string, error) {
	rec, err := m.Read()
	if err == nil {
		m.guard.Mark(m.InputOffset())
	}
	return rec, err
}

// sum is the hash of every byte read; the file has been read to its end.
func (m *manifestReader) sum() string { return hex.EncodeToString(m.hash.Sum(nil)) }

// tooLong is the error for a row over the limit: the file is refused.
func tooLong(what string, line int) error {
	return fmt.Errorf("%s line %d: a row longer than %d KiB: the file is refused whole (nothing is planned or sent)", what, line, MaxManifestRowBytes>>10)
}

func tooMany(what string) error {
	return fmt.Errorf("%s: more than %d rows: split it (the file is refused whole; nothing is planned or sent)", what, MaxManifestRows)
}

// ReadManifest reads a shipment manifest: a header row naming the columns
// (invoice or reservation, article, quantity; optionally amount, parcel,
// tracking, in any order, other columns ignored), then one row per article
// and parcel. A row that cannot be read is kept with its Problem so the
// pre-flight can name it; a header without the required columns refuses the
// file.
func ReadManifest(r io.Reader) (*Manifest, error) {
	cr := newManifestReader(r)
	header, err := cr.read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("manifest is empty: expected a header row (invoice,article,quantity)")
	}
	if errors.Is(err, private.ErrRowTooLong) {
		return nil, tooLong("manifest", 1)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest header: %w", err)
	}
	header = slices.Clone(header)
	m := &Manifest{}
	idx := [nCols]int{}
	for i := range idx {
		idx[i] = -1
	}
	for i, h := range header {
		k, ok := columnOf(h)
		switch {
		case !ok:
			if strings.TrimSpace(h) != "" {
				m.Ignored = append(m.Ignored, textsafe.Bound(h, maxField))
			}
		case idx[k] >= 0:
			return nil, fmt.Errorf("manifest header: column %q given twice (as %q and %q)", ColumnNames[k], header[idx[k]], h)
		default:
			idx[k] = i
		}
	}
	var missing []string
	for _, k := range []colKind{cRef, cArticle, cQuantity} {
		if idx[k] < 0 {
			missing = append(missing, ColumnNames[k])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("manifest header %q: missing column %s (expected invoice or reservation, article, quantity)",
			textsafe.Bound(strings.Join(header, string(cr.Comma)), 4*maxField), strings.Join(missing, ", "))
	}
	long := ""
	field := func(rec []string, k colKind) string {
		if idx[k] < 0 || idx[k] >= len(rec) {
			return ""
		}
		v := strings.TrimSpace(rec[idx[k]])
		if len(v) > maxField {
			// Kept cut, to name the row; the row is refused.
			if long == "" {
				long = fmt.Sprintf("%s: longer than %d bytes", ColumnNames[k], maxField)
			}
			v = textsafe.Bound(v, maxField/2)
		}
		return v
	}
	for {
		rec, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if len(m.Rows) >= MaxManifestRows {
			return nil, tooMany("manifest")
		}
		if err != nil {
			var pe *csv.ParseError
			switch {
			case errors.Is(err, private.ErrRowTooLong):
				line, _ := cr.FieldPos(0)
				if errors.As(err, &pe) {
					line = pe.StartLine
				}
				return nil, tooLong("manifest", line)
			case errors.As(err, &pe):
				m.Rows = append(m.Rows, Row{Line: pe.StartLine, Problem: "cannot read the row: " + pe.Err.Error()})
				continue
			}
			return nil, fmt.Errorf("manifest: %w", err)
		}
		// FieldPos is only defined for a record that was read.
		line, _ := cr.FieldPos(0)
		if blank(rec) {
			continue
		}
		long = ""
		row := Row{Line: line, Ref: field(rec, cRef), Article: field(rec, cArticle), Parcel: field(rec, cParcel), Tracking: field(rec, cTracking)}
		q := field(rec, cQuantity)
		switch n, err := strconv.Atoi(q); {
		case long != "":
			row.Problem = long
		case row.Ref == "":
			row.Problem = "no invoice or reservation number"
		case row.Article == "":
			row.Problem = "no article number"
		case err != nil || n <= 0 || n > 1_000_000:
			row.Problem = fmt.Sprintf("quantity %q: must be a whole number of units, 1 or more", q)
		default:
			row.Quantity = n
		}
		if a := field(rec, cAmount); a != "" && row.Problem == "" {
			d, err := api.ParsePlainDecimal(strings.ReplaceAll(a, ",", "."))
			if err != nil {
				row.Problem = fmt.Sprintf("amount %q: %v", a, err)
			} else {
				row.Amount = &d
			}
		}
		m.Rows = append(m.Rows, row)
	}
	m.Hash = cr.sum()
	return m, nil
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// ReadRefs reads the file of cancel-rest: invoices (or reservation numbers)
// whose shipping is finished, one per line, or a CSV whose header names an
// invoice or reservation column (a manifest will do: other columns are
// ignored, each invoice counts once).
func ReadRefs(r io.Reader) (*Manifest, error) {
	m := &Manifest{}
	cr := newManifestReader(r)
	header, err := cr.read()
	if errors.Is(err, io.EOF) {
		m.Hash = cr.sum()
		return m, nil
	}
	if errors.Is(err, private.ErrRowTooLong) {
		return nil, tooLong("invoice list", 1)
	}
	if err != nil {
		return nil, fmt.Errorf("invoice list: %w", err)
	}
	col := -1
	for i, h := range header {
		if k, ok := columnOf(h); ok && k == cRef {
			col = i
		}
	}
	seen := map[string]bool{}
	add := func(line int, ref string) {
		ref = strings.TrimSpace(ref)
		if ref == "" || strings.HasPrefix(ref, "#") || seen[ref] {
			return
		}
		seen[ref] = true
		m.Rows = append(m.Rows, Row{Line: line, Ref: ref})
	}
	if col < 0 {
		// One reference per line: the first field of every line.
		if len(header) > 0 {
			add(1, header[0])
		}
		col = 0
	}
	for {
		rec, err := cr.read()
		if errors.Is(err, io.EOF) {
			break
		}
		if len(m.Rows) >= MaxManifestRows {
			return nil, tooMany("invoice list")
		}
		if errors.Is(err, private.ErrRowTooLong) {
			line, _ := cr.FieldPos(0)
			return nil, tooLong("invoice list", line)
		}
		if err != nil {
			return nil, fmt.Errorf("invoice list: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if col < len(rec) {
			if len(rec[col]) > maxField {
				return nil, fmt.Errorf("invoice list line %d: a reference longer than %d bytes: the file is refused whole", line, maxField)
			}
			add(line, rec[col])
		}
	}
	m.Hash = cr.sum()
	return m, nil
}
