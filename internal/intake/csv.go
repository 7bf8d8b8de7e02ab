package intake

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/internal/private"
	"paydesk/store"
)

// column is one column a CSV of order lines may have. Header names are
// matched without regard to case, spaces, '_', '-' and '%'.
type column struct {
	name     string   // as the README names it
	aliases  []string // folded
	required bool
	perOrder bool // the same on every row of an order (customer columns)
}

const (
	colInvoice = iota
	colArticle
	colTitle
	colQuantity
	colPrice
	colVat
	colType
	colCurrency
	colReservationNumber
	colFirstName
	colLastName
	colEmail
	colStreet
	colHouseNumber
	colHouseNumberSuffix
	colPostalCode
	colCity
	colCountry
	colPhone
	colCellPhone
	colCompany
	nColumns
)

var columns = [nColumns]column{
	colInvoice:           {"invoice", []string{"invoice", "invoicenumber", "order", "ordernumber"}, true, true},
	colArticle:           {"article_number", []string{"articlenumber", "article", "sku", "articleno"}, true, false},
	colTitle:             {"title", []string{"title", "articletitle", "description", "name"}, true, false},
	colQuantity:          {"quantity", []string{"quantity", "qty", "articlequantity"}, true, false},
	colPrice:             {"price", []string{"price", "priceinclvat", "articleprice", "unitprice"}, true, false},
	colVat:               {"vat", []string{"vat", "vatpercent", "vatrate", "articlevat"}, true, false},
	colType:              {"type", []string{"type", "articletype"}, false, false},
	colCurrency:          {"currency", []string{"currency"}, false, true},
	colReservationNumber: {"reservation_number", []string{"reservationnumber", "reservation"}, false, true},
	colFirstName:         {"first_name", []string{"firstname", "billingfirstname"}, false, true},
	colLastName:          {"last_name", []string{"lastname", "billinglastname"}, false, true},
	colEmail:             {"email", []string{"email", "billingemail"}, false, true},
	colStreet:            {"street", []string{"street", "billingstreet"}, false, true},
	colHouseNumber:       {"house_number", []string{"housenumber", "billinghousenumber"}, false, true},
	colHouseNumberSuffix: {"house_number_suffix", []string{"housenumbersuffix", "billinghousenumbersuffix"}, false, true},
	colPostalCode:        {"postal_code", []string{"postalcode", "zip", "billingpostalcode"}, false, true},
	colCity:              {"city", []string{"city", "billingcity"}, false, true},
	colCountry:           {"country", []string{"country", "billingcountry"}, false, true},
	colPhone:             {"phone", []string{"phone", "phonenumber", "billingphonenumber"}, false, true},
	colCellPhone:         {"cell_phone", []string{"cellphone", "cellphonenumber", "mobile", "billingcellphonenumber"}, false, true},
	colCompany:           {"company", []string{"company", "companyname", "billingcompanyname"}, false, true},
}

func foldHeader(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch r {
		case ' ', '_', '-', '%', '.', '\ufeff':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ColumnNames lists the columns a CSV of order lines may have, required
// ones first, as the README names them.
func ColumnNames() (required, optional []string) {
	for _, c := range columns {
		if c.required {
			required = append(required, c.name)
		} else {
			optional = append(optional, c.name)
		}
	}
	return required, optional
}

// Limits of a CSV import. A row longer than MaxRowBytes stops the file (a
// CSV cannot be resynchronised safely after it: a quote may be open); an
// order of more than MaxOrderLines rows is refused whole.
const (
	MaxRowBytes   = MaxEnvelope
	MaxOrderLines = 10_000
)

// CSVReader reads order lines as a stream: a header row naming the columns,
// then one row per article line. The consecutive rows of one invoice make
// one order, handed out when the next invoice (or the end of the file)
// shows it is complete; an invoice that comes back after another invoice's
// rows is a second order for it, which the store answers as already known
// or a conflict. An order with any bad row is refused whole, naming the row
// and the rule. It holds one order and one row, never the file.
type CSVReader struct {
	cr    *csv.Reader
	guard *private.RowGuard
	idx   [nColumns]int
	row   int      // the last row read (the header is row 1)
	cur   *pending // the order whose rows are being read
	out   []Item   // items ready to hand out
	stop  error    // the error that stopped the file, once the items before it are out
	done  bool
}

// NewCSVReader reads the header row; an error refuses the file (a missing
// or unknown column, an empty file).
func NewCSVReader(r io.Reader) (*CSVReader, error) {
	cr, g := private.NewCSVReader(r, MaxRowBytes)
	c := &CSVReader{cr: cr, guard: g, row: 1}
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file: the first row must name the columns")
		}
		if errors.Is(err, private.ErrRowTooLong) {
			return nil, fmt.Errorf("header: longer than %d bytes: the file is not read", MaxRowBytes)
		}
		return nil, fmt.Errorf("header: %w", err)
	}
	g.Mark(cr.InputOffset())
	for i := range c.idx {
		c.idx[i] = -1
	}
	for i, h := range header {
		f := foldHeader(h)
		if f == "" {
			continue
		}
		found := false
		for col := range columns {
			for _, a := range columns[col].aliases {
				if a == f {
					if c.idx[col] >= 0 {
						return nil, fmt.Errorf("header: column %q appears twice (as %q and %q)", columns[col].name, header[c.idx[col]], h)
					}
					c.idx[col], found = i, true
				}
			}
		}
		if !found {
			req, opt := ColumnNames()
			return nil, fmt.Errorf("header: unknown column %q (columns: %s; optional: %s)", h, strings.Join(req, ", "), strings.Join(opt, ", "))
		}
	}
	var missing []string
	for col, cd := range columns {
		if cd.required && c.idx[col] < 0 {
			missing = append(missing, cd.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("header: missing column %s", strings.Join(missing, ", "))
	}
	return c, nil
}

// Next returns the next order (or refused record), io.EOF after the last,
// or the error that stopped the file; an order the file stops inside is
// handed out refused first.
func (c *CSVReader) Next() (Item, error) {
	for len(c.out) == 0 {
		if c.done {
			if c.stop != nil {
				err := c.stop
				c.stop = nil
				return Item{}, err
			}
			return Item{}, io.EOF
		}
		c.readRow()
	}
	it := c.out[0]
	c.out = c.out[1:]
	return it, nil
}

// readRow reads one row and queues what it completes.
func (c *CSVReader) readRow() {
	rec, err := c.cr.Read()
	if errors.Is(err, io.EOF) {
		c.flush()
		c.done = true
		return
	}
	if err != nil {
		c.row++
		var pe *csv.ParseError
		switch {
		case errors.Is(err, private.ErrRowTooLong):
			c.stop = fmt.Errorf("row %d: longer than %d bytes: the rest of the file is not read", c.row, MaxRowBytes)
		case errors.As(err, &pe) && errors.Is(pe.Err, private.ErrRowTooLong):
			c.stop = fmt.Errorf("row %d: longer than %d bytes: the rest of the file is not read", c.row, MaxRowBytes)
		case errors.As(err, &pe):
			c.stop = fmt.Errorf("row %d (line %d): %v: the rest of the file is not read", c.row, pe.StartLine, pe.Err)
		default:
			c.stop = fmt.Errorf("row %d: %w: the rest of the file is not read", c.row, err)
		}
		if c.cur != nil {
			c.cur.last = c.row
			if c.cur.item.Err == nil {
				// The row that stopped the file may be one of this order's:
				// it cannot be shown whole, so it is not stored.
				c.cur.item.Err = fmt.Errorf("the file stops at row %d, which may belong to this order: refused whole", c.row)
			}
			c.flush()
		}
		c.done = true
		return
	}
	c.row++
	c.guard.Mark(c.cr.InputOffset())
	row := c.row
	if blank(rec) {
		return
	}
	get := func(col int) string {
		if c.idx[col] < 0 || c.idx[col] >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[c.idx[col]])
	}
	inv := get(colInvoice)
	if c.cur != nil && c.cur.item.Invoice != inv {
		c.flush()
	}
	if inv == "" {
		// A row without an invoice belongs to no order: report it alone.
		c.out = append(c.out, Item{Where: "row " + itoa(row), Err: fmt.Errorf("row %d: column invoice: empty", row)})
		return
	}
	p := c.cur
	if p == nil {
		p = &pending{item: Item{Invoice: inv, Order: store.Order{Invoice: inv, Currency: "EUR"}}, first: row}
		c.cur = p
		p.customer = make([]string, nColumns)
		for col, cd := range columns {
			if cd.perOrder {
				p.customer[col] = get(col)
			}
		}
		o := &p.item.Order
		if cur := get(colCurrency); cur != "" {
			o.Currency = strings.ToUpper(cur)
		}
		o.ReservationNumber = get(colReservationNumber)
		o.Billing = api.Address{FirstName: get(colFirstName), LastName: get(colLastName), Email: get(colEmail),
			Street: get(colStreet), HouseNumber: get(colHouseNumber), HouseNumberSuffix: get(colHouseNumberSuffix),
			PostalCode: get(colPostalCode), City: get(colCity), Country: strings.ToUpper(get(colCountry)),
			PhoneNumber: get(colPhone), CellPhoneNumber: get(colCellPhone), Company: get(colCompany)}
	}
	p.last = row
	if p.item.Err != nil {
		return // the order is refused already; its first bad row is named
	}
	for col, cd := range columns {
		if cd.perOrder && get(col) != "" && get(col) != p.customer[col] {
			p.item.Err = fmt.Errorf("row %d: column %s: %q differs from %q on row %d of the same invoice", row, cd.name, get(col), p.customer[col], p.first)
			return
		}
	}
	if len(p.item.Order.Articles) >= MaxOrderLines {
		p.item.Err = fmt.Errorf("row %d: the order has more than %d lines: refused whole", row, MaxOrderLines)
		p.item.Order.Articles, p.rows = nil, nil
		return
	}
	a, err := articleFromRow(get)
	if err != nil {
		p.item.Err = fmt.Errorf("row %d: %w", row, err)
		return
	}
	p.item.Order.Articles = append(p.item.Order.Articles, a)
	p.rows = append(p.rows, row)
}

// flush queues the order being read: complete, it passes the rules of a
// Reserve's lines (api.ValidateOrder, as the /orders intake) or is
// refused whole.
func (c *CSVReader) flush() {
	p := c.cur
	if p == nil {
		return
	}
	c.cur = nil
	p.item.Where = "row " + itoa(p.first)
	if p.last > p.first {
		p.item.Where = "rows " + itoa(p.first) + "-" + itoa(p.last)
	}
	if p.item.Err == nil {
		o := &p.item.Order
		if err := api.ValidateOrder(o.Currency, o.Invoice, o.Articles, o.Billing, o.Shipping); err != nil {
			p.item.Err = rowsOf(err, p.rows)
		}
	}
	if p.item.Err != nil {
		p.item.Order = store.Order{}
	}
	c.out = append(c.out, p.item)
}

// rowsOf names the rows of the article groups a validation error is about:
// group 2 of an order read from rows 5–7 is row 6.
func rowsOf(err error, rows []int) error {
	var ve *api.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	parts := make([]string, 0, len(ve.Fields))
	for _, f := range ve.Fields {
		if g, e := strconv.Atoi(f.Group); e == nil && g >= 1 && g <= len(rows) {
			parts = append(parts, fmt.Sprintf("row %d: %s: %s", rows[g-1], f.Field, f.Rule))
			continue
		}
		parts = append(parts, f.String())
	}
	return fmt.Errorf("%s rules: %s", ve.Action, strings.Join(parts, "; "))
}

// pending is an order while its rows are read.
type pending struct {
	item     Item
	first    int
	last     int
	rows     []int    // the row of each article line
	customer []string // the per-order columns of its first row
}

// ReadCSV reads every order of r (see CSVReader); err is an error that
// refused or stopped the file.
func ReadCSV(r io.Reader) ([]Item, error) {
	c, err := NewCSVReader(r)
	if err != nil {
		return nil, err
	}
	var items []Item
	for {
		it, err := c.Next()
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return items, err
		}
		items = append(items, it)
	}
}

func blank(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

// articleFromRow reads one article line, naming the column and the rule of
// the first thing wrong.
func articleFromRow(get func(int) string) (api.Article, error) {
	a := api.Article{Number: get(colArticle), Title: get(colTitle), Type: get(colType)}
	if a.Number == "" {
		return a, errors.New("column article_number: empty")
	}
	if a.Title == "" {
		return a, errors.New("column title: empty")
	}
	if a.Type != "" && a.Type != "General" && a.Type != "ShipmentFee" && a.Type != "HandlingFee" {
		return a, fmt.Errorf("column type: %q is not General, ShipmentFee or HandlingFee", a.Type)
	}
	q, err := strconv.Atoi(get(colQuantity))
	if err != nil || q <= 0 {
		return a, fmt.Errorf("column quantity: %q is not a whole number above 0", get(colQuantity))
	}
	a.Quantity = q
	price, err := api.ParsePlainDecimal(get(colPrice))
	if err != nil {
		return a, fmt.Errorf("column price: %w", err)
	}
	if !price.Equal(price.Round(2)) {
		return a, fmt.Errorf("column price: %s has more than two decimals", get(colPrice))
	}
	a.Price = price
	vat, err := api.ParsePlainDecimal(get(colVat))
	if err != nil {
		return a, fmt.Errorf("column vat: %w", err)
	}
	if vat.Sign() < 0 || vat.GreaterThan(decimal.NewFromInt(100)) {
		return a, fmt.Errorf("column vat: %s is not a percentage from 0 to 100", get(colVat))
	}
	a.Vat = vat
	return a, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
