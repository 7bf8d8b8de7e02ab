package intake

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"paydesk/api"
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

// maxCSVRows bounds a CSV import.
const maxCSVRows = 1_000_000

// ReadCSV reads order lines: a header row naming the columns, then one row
// per article line; rows with the same invoice make one order, in the order
// the invoices first appear. An order with any bad row is refused whole,
// naming the row and the rule; a header that lacks a required column or
// names an unknown one refuses the file.
func ReadCSV(r io.Reader) ([]Item, error) {
	br := bufio.NewReader(r)
	cr := csv.NewReader(br)
	// Spreadsheets in the shop's countries (NL, DE, AT) save with ';' where
	// the decimal separator is a comma: the header row tells which.
	if head, _ := br.Peek(4096); sniffSemicolon(head) {
		cr.Comma = ';'
	}
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file: the first row must name the columns")
		}
		return nil, fmt.Errorf("header: %w", err)
	}
	idx := [nColumns]int{}
	for i := range idx {
		idx[i] = -1
	}
	for i, h := range header {
		f := foldHeader(h)
		if f == "" {
			continue
		}
		found := false
		for c := range columns {
			for _, a := range columns[c].aliases {
				if a == f {
					if idx[c] >= 0 {
						return nil, fmt.Errorf("header: column %q appears twice (as %q and %q)", columns[c].name, header[idx[c]], h)
					}
					idx[c], found = i, true
				}
			}
		}
		if !found {
			req, opt := ColumnNames()
			return nil, fmt.Errorf("header: unknown column %q (columns: %s; optional: %s)", h, strings.Join(req, ", "), strings.Join(opt, ", "))
		}
	}
	var missing []string
	for c, col := range columns {
		if col.required && idx[c] < 0 {
			missing = append(missing, col.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("header: missing column %s", strings.Join(missing, ", "))
	}

	var order []string
	orders := map[string]*pending{}
	row := 1
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		row++
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return finish(order, orders), fmt.Errorf("row %d: %v", pe.Line, pe.Err)
			}
			return finish(order, orders), fmt.Errorf("row %d: %w", row, err)
		}
		if row > maxCSVRows {
			return finish(order, orders), fmt.Errorf("more than %d rows: split the file", maxCSVRows)
		}
		if blank(rec) {
			continue
		}
		get := func(c int) string {
			if idx[c] < 0 || idx[c] >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[idx[c]])
		}
		inv := get(colInvoice)
		if inv == "" {
			// A row without an invoice belongs to no order: report it alone.
			key := "\x00row" + itoa(row)
			order = append(order, key)
			orders[key] = &pending{item: Item{Where: "row " + itoa(row), Err: fmt.Errorf("row %d: column invoice: empty", row)}, first: row, last: row}
			continue
		}
		p := orders[inv]
		if p == nil {
			p = &pending{item: Item{Invoice: inv, Order: store.Order{Invoice: inv, Currency: "EUR"}}, first: row}
			orders[inv] = p
			order = append(order, inv)
			p.customer = make([]string, nColumns)
			for c, col := range columns {
				if col.perOrder {
					p.customer[c] = get(c)
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
			continue // the order is refused already; its first bad row is named
		}
		for c, col := range columns {
			if col.perOrder && get(c) != "" && get(c) != p.customer[c] {
				p.item.Err = fmt.Errorf("row %d: column %s: %q differs from %q on row %d of the same invoice", row, col.name, get(c), p.customer[c], p.first)
				break
			}
		}
		if p.item.Err != nil {
			continue
		}
		a, err := articleFromRow(get)
		if err != nil {
			p.item.Err = fmt.Errorf("row %d: %w", row, err)
			continue
		}
		p.item.Order.Articles = append(p.item.Order.Articles, a)
	}
	return finish(order, orders), nil
}

// pending is an order while its rows are read.
type pending struct {
	item     Item
	first    int
	last     int
	customer []string // the per-order columns of its first row
}

// finish turns the orders read into items, in the order their invoices
// first appeared, each naming its rows.
func finish(keys []string, m map[string]*pending) []Item {
	out := make([]Item, 0, len(keys))
	for _, k := range keys {
		p := m[k]
		if p.item.Where == "" {
			p.item.Where = "row " + itoa(p.first)
			if p.last > p.first {
				p.item.Where = "rows " + itoa(p.first) + "-" + itoa(p.last)
			}
		}
		out = append(out, p.item)
	}
	return out
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

// sniffSemicolon reports whether the header row (the first line) separates
// its columns with ';' rather than ','.
func sniffSemicolon(head []byte) bool {
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	return bytes.Count(head, []byte{';'}) > bytes.Count(head, []byte{','})
}
