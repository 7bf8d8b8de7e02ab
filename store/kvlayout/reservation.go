package kvlayout

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
	"unsafe"

	"github.com/shopspring/decimal"

	"paydesk/api"
	"paydesk/store/domain"
)

// A reservation record was JSON until layout 8: about 2.4 KB a record,
// more than half a bbolt page, so most records took a page and an
// overflow page of their own, and a push that touches a reservation
// rewrites the whole record. The binary form below is about a tenth of
// that: field names are gone, amounts are coefficient and exponent, times
// are seconds and nanoseconds, the addresses keep only their set fields,
// and what usually repeats another field (the original order's addresses,
// a line's article, the Reserve request's key) is a flag.
//
// The record starts with resFormat, a byte JSON never starts with; a
// record that starts with '{' is the JSON of an earlier paydesk and is
// read as before. Every slice keeps its nil-ness (a count of n+1, 0 for
// nil) so that a record reads back exactly as it was written.

// resFormat is the first byte of a binary reservation record.
const resFormat = 0x01

// resFormat2 is the first byte of the binary form since layout 10: the
// record leaves out its key (the bucket's key, DecodeReservationOf) and
// writes a string it already holds (a billing e-mail that is the
// customer's, an article type of every line) as a reference to it.
const resFormat2 = 0x02

// resFormat3 is the form since layout 13: the reservation's list row ID
// (a uvarint of ID+1, 0 for none) after the format byte, then format 2,
// then what the list row derives from the lines (rowValues). The list
// reads its rows from the records (SummaryOf) without the decimals and
// slices of a whole decode and keeps no copy of them, and a file keeps no
// key → row ID entry for a record that names its row (ReservationRow).
const resFormat3 = 0x03

// The list row's values at a format 3 record's end: a byte with the
// state's code (stateCodes; 0: the state's name follows) and flags, the
// amount, and the remaining amount unless a flag says it is exactly the
// amount or exactly decimal.Zero.
const (
	rowStateMask         = 0x3f
	rowRemainingIsAmount = 0x40
	rowRemainingIsZero   = 0x80
)

// stateCodes are the states' codes in a format 3 record. A code never
// changes its meaning; a new state takes the next.
var stateCodes = [...]domain.State{1: domain.StateAwaitingCustomer, 2: domain.StateReserved, 3: domain.StatePartlyCaptured,
	4: domain.StateCaptured, 5: domain.StateCancelled, 6: domain.StateClosed, 7: domain.StateDeclined}

// Flags of a line: its descriptive fields are those of the original
// order's article at the same index.
const lineSameAsArticle = 1

// Flags of a request.
const (
	reqKeyIsReservation = 1 << iota // its key is the reservation's (the Reserve)
	reqHasUpdate                    // an Update follows
)

// IsJSONRecord tells a record an earlier paydesk wrote as JSON.
func IsJSONRecord(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// EncodeReservation is a reservation's stored form (format 3), naming no
// list row (the kv PostgreSQL's).
func EncodeReservation(r *domain.Reservation) []byte { return encodeReservation(r, resFormat3, 0) }

// EncodeReservationRow is a reservation's stored form (format 3) that
// names its list row (a file's).
func EncodeReservationRow(r *domain.Reservation, row uint32) []byte {
	return encodeReservation(r, resFormat3, uint64(row)+1)
}

// ReservationRow is the list row ID a record names (format 3), read
// without decoding the record.
func ReservationRow(b []byte) (uint32, bool) {
	if len(b) < 2 || b[0] != resFormat3 {
		return 0, false
	}
	v, n := binary.Uvarint(b[1:])
	if n <= 0 || v == 0 || v-1 > math.MaxUint32 {
		return 0, false
	}
	return uint32(v - 1), true
}

// encodeReservation writes r in format 3 (row: its list row ID+1, 0 for
// none), or in format 1 or 2 for the tests that read what an earlier
// paydesk wrote.
func encodeReservation(r *domain.Reservation, format byte, row uint64) []byte {
	e := enc{b: make([]byte, 0, 256+96*len(r.Lines)+48*len(r.Requests)), refs: format != resFormat}
	e.byte(format)
	switch format {
	case resFormat:
		e.str(r.Key)
	case resFormat3:
		e.uvarint(row)
	}
	e.str(r.ReservationNumber)
	e.str(r.Invoice)
	e.str(r.Currency)
	e.bool(r.IsTest)
	e.str(r.CustomerName)
	e.str(r.CustomerEmail)
	e.str(r.Country)
	e.address(r.Billing)
	e.address(r.Shipping)
	e.update(&r.Original, &r.Billing, &r.Shipping)
	e.count(len(r.Lines), r.Lines == nil)
	for i, l := range r.Lines {
		if i < len(r.Original.Articles) && lineIsArticle(l, r.Original.Articles[i]) {
			e.byte(lineSameAsArticle)
		} else {
			e.byte(0)
			e.str(l.ArticleNumber)
			e.str(l.Title)
			e.str(l.Type)
			e.decX(l.Price)
			e.decX(l.Vat)
		}
		e.varint(int64(l.Reserved))
		e.varint(int64(l.Captured))
		e.varint(int64(l.Cancelled))
		e.varint(int64(l.Refunded))
	}
	e.bool(r.LinesKnown)
	e.str(r.OrderSource)
	e.decX(r.UnsplitCaptured)
	e.strsN(r.InvoiceNumbers)
	e.bool(r.CapturedInFull)
	e.statusZ(r.Status)
	e.timeZ(r.Created)
	e.str(r.RedirectURL)
	e.count(len(r.Requests), r.Requests == nil)
	for _, q := range r.Requests {
		var flags byte
		if q.Key == r.Key {
			flags |= reqKeyIsReservation
		}
		if q.Update != nil {
			flags |= reqHasUpdate
		}
		e.byte(flags)
		if flags&reqKeyIsReservation == 0 {
			e.str(q.Key)
		}
		e.str(q.Action)
		e.statusZ(q.Status)
		if q.Update != nil {
			e.update(q.Update, nil, nil)
		}
		e.uvarint(q.OpID)
	}
	e.strsN(r.Transactions)
	e.bool(r.Cancelled)
	e.decX(r.CapturedAmount)
	e.decX(r.RefundedAmount)
	e.bool(r.OutcomeUnknown)
	e.count(len(r.UnknownOps), r.UnknownOps == nil)
	for _, id := range r.UnknownOps {
		e.uvarint(id)
	}
	e.timeZ(r.Updated)
	if format == resFormat3 {
		e.rowValues(r)
	}
	return e.b
}

// rowValues writes what the list row derives from the lines.
func (e *enc) rowValues(r *domain.Reservation) {
	amount, remaining, st := r.Amount(), r.RemainingAmount(), r.State()
	var b byte
	for c, s := range stateCodes {
		if c > 0 && s == st {
			b = byte(c)
		}
	}
	switch {
	case sameDec(remaining, amount):
		b |= rowRemainingIsAmount
	case sameDec(remaining, decimal.Zero):
		b |= rowRemainingIsZero
	}
	e.byte(b)
	if b&rowStateMask == 0 {
		e.str(string(st))
	}
	e.decX(amount)
	if b&(rowRemainingIsAmount|rowRemainingIsZero) == 0 {
		e.decX(remaining)
	}
}

// rowValues reads what enc.rowValues wrote: amount, remaining, state.
func (d *decoder) rowValues() (amount, remaining decimal.Decimal, st domain.State) {
	b := d.byte()
	switch code := int(b & rowStateMask); {
	case code == 0:
		st = domain.State(d.str())
	case code < len(stateCodes):
		st = stateCodes[code]
	default:
		d.fail()
	}
	amount = d.decX()
	switch b &^ rowStateMask {
	case 0:
		remaining = d.decX()
	case rowRemainingIsAmount:
		remaining = amount
	case rowRemainingIsZero:
		remaining = decimal.Zero
	default:
		d.fail()
	}
	return amount, remaining, st
}

// DecodeReservationOf reads the reservation record stored under key,
// binary or JSON.
func DecodeReservationOf(key string, b []byte) (*domain.Reservation, error) {
	if IsJSONRecord(b) {
		var r domain.Reservation
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, err
		}
		return &r, nil
	}
	d := decoder{b: b, s: string(b)}
	r := &domain.Reservation{}
	format := d.byte()
	switch format {
	case resFormat:
		r.Key = d.str()
	case resFormat3:
		d.uvarint() // the list row (ReservationRow)
		r.Key, d.refs = key, true
	case resFormat2:
		r.Key, d.refs = key, true
	default:
		return nil, fmt.Errorf("reservation record: unknown format: %w", ErrCorrupt)
	}
	r.ReservationNumber, r.Invoice, r.Currency, r.IsTest = d.str(), d.str(), d.str(), d.bool()
	r.CustomerName, r.CustomerEmail, r.Country = d.str(), d.str(), d.str()
	r.Billing = d.address()
	r.Shipping = d.address()
	d.update(&r.Original, &r.Billing, &r.Shipping)
	// A line takes at least five bytes.
	if n, isNil := d.count(5); !isNil {
		r.Lines = make([]domain.Line, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			var l domain.Line
			switch d.byte() {
			case lineSameAsArticle:
				if i >= len(r.Original.Articles) {
					d.fail()
					break
				}
				a := r.Original.Articles[i]
				l = domain.Line{ArticleNumber: a.Number, Title: a.Title, Type: a.Type, Price: a.Price, Vat: a.Vat}
			case 0:
				l = domain.Line{ArticleNumber: d.str(), Title: d.str(), Type: d.str(), Price: d.decX(), Vat: d.decX()}
			default:
				d.fail()
			}
			l.Reserved, l.Captured, l.Cancelled, l.Refunded = d.int(), d.int(), d.int(), d.int()
			r.Lines = append(r.Lines, l)
		}
	}
	r.LinesKnown = d.bool()
	r.OrderSource = d.str()
	r.UnsplitCaptured = d.decX()
	r.InvoiceNumbers = d.strsN()
	r.CapturedInFull = d.bool()
	r.Status = d.statusZ()
	r.Created = d.timeZ()
	r.RedirectURL = d.str()
	// A request takes at least six bytes.
	if n, isNil := d.count(6); !isNil {
		r.Requests = make([]domain.Request, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			flags := d.byte()
			if flags&^(reqKeyIsReservation|reqHasUpdate) != 0 {
				d.fail()
				break
			}
			q := domain.Request{Key: r.Key}
			if flags&reqKeyIsReservation == 0 {
				q.Key = d.str()
			}
			q.Action = d.str()
			q.Status = d.statusZ()
			if flags&reqHasUpdate != 0 {
				q.Update = &domain.Update{}
				d.update(q.Update, nil, nil)
			}
			q.OpID = d.uvarint()
			r.Requests = append(r.Requests, q)
		}
	}
	r.Transactions = d.strsN()
	r.Cancelled = d.bool()
	r.CapturedAmount = d.decX()
	r.RefundedAmount = d.decX()
	r.OutcomeUnknown = d.bool()
	if n, isNil := d.count(1); !isNil {
		r.UnknownOps = make([]uint64, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			r.UnknownOps = append(r.UnknownOps, d.uvarint())
		}
	}
	r.Updated = d.timeZ()
	if format == resFormat3 {
		d.rowValues() // SummaryOf reads them, Summary derives them
	}
	if d.err == nil && len(d.b) != 0 {
		return nil, fmt.Errorf("reservation record: %d bytes after its end: %w", len(d.b), ErrCorrupt)
	}
	if d.err != nil {
		return nil, fmt.Errorf("reservation record: %w", d.err)
	}
	return r, nil
}

// lineIsArticle reports whether a line's descriptive fields are those of
// the article it came from. Exponents count: 19.90 is not 19.9 here, so
// that the line reads back exactly.
func lineIsArticle(l domain.Line, a api.Article) bool {
	return l.ArticleNumber == a.Number && l.Title == a.Title && l.Type == a.Type && sameDec(l.Price, a.Price) && sameDec(l.Vat, a.Vat)
}

func sameDec(a, b decimal.Decimal) bool { return a.Exponent() == b.Exponent() && a.Equal(b) }

// count writes a slice's length, or that the slice is nil.
func (e *enc) count(n int, isNil bool) {
	if isNil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(n) + 1)
}

// count reads what enc.count wrote, for elements of at least min bytes
// each: a damaged count must not make the reader allocate more than the
// record could hold.
func (d *decoder) count(min int) (n int, isNil bool) {
	if d.refs {
		min = max(1, min/2) // a string may take a byte
	}
	c := d.uvarint()
	if d.err != nil || c == 0 {
		return 0, true
	}
	if c-1 > uint64(len(d.b)/min) {
		d.fail()
		return 0, true
	}
	return int(c - 1), false
}

func (d *decoder) int() int {
	v := d.varint()
	if int64(int(v)) != v {
		d.fail()
		return 0
	}
	return int(v)
}

func (e *enc) strsN(ss []string) {
	e.count(len(ss), ss == nil)
	for _, s := range ss {
		e.str(s)
	}
}

func (d *decoder) strsN() []string {
	n, isNil := d.count(1)
	if isNil {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.str())
	}
	return out
}

// Time with its zone: the instant as seconds and nanoseconds, and the
// offset from UTC when it is not UTC. Reading it back places it as
// time.Parse placed the JSON form's time: in the local zone when that has
// the offset at that instant, else in a fixed zone.
const (
	timeZero   = 0
	timeUTC    = 1
	timeOffset = 2
)

func (e *enc) timeZ(t time.Time) {
	if t.IsZero() {
		e.byte(timeZero)
		return
	}
	_, off := t.Zone()
	if t.Location() == time.UTC || (off == 0 && t.Location() != time.Local) {
		e.byte(timeUTC)
	} else {
		e.byte(timeOffset)
		e.varint(int64(off))
	}
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
}

// maxOffset bounds a zone's offset (the JSON form allows ±24 hours).
const maxOffset = 24 * 3600

func (d *decoder) timeZ() time.Time {
	kind := d.byte()
	if kind == timeZero {
		return time.Time{}
	}
	var off int64
	if kind == timeOffset {
		off = d.varint()
	} else if kind != timeUTC {
		d.fail()
		return time.Time{}
	}
	sec, nsec := d.varint(), d.uvarint()
	if d.err != nil || nsec >= 1e9 || off <= -maxOffset || off >= maxOffset {
		d.fail()
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if kind == timeUTC {
		return t.UTC()
	}
	if _, local := t.In(time.Local).Zone(); int64(local) == off {
		return t.In(time.Local)
	}
	return t.In(time.FixedZone("", int(off)))
}

func (e *enc) statusZ(s domain.Status) {
	e.varint(int64(s.Code))
	e.str(s.SubCode)
	e.timeZ(s.Time)
}

func (d *decoder) statusZ() domain.Status {
	return domain.Status{Code: d.int(), SubCode: d.str(), Time: d.timeZ()}
}

// An address is a mask of its set fields and those fields, in the order
// of api.Address.
func addressFields(a *api.Address) [13]*string {
	return [13]*string{&a.FirstName, &a.LastName, &a.CareOf, &a.Company, &a.Street, &a.HouseNumber, &a.HouseNumberSuffix,
		&a.PostalCode, &a.City, &a.Country, &a.Email, &a.CellPhoneNumber, &a.PhoneNumber}
}

// addrSame, as an address's mask, says it equals the one it is compared
// with (the original order's billing address and the reservation's).
const addrSame = 1 << 13

func (e *enc) address(a api.Address) { e.addressLike(a, nil) }

func (e *enc) addressLike(a api.Address, like *api.Address) {
	if like != nil && a == *like && !a.IsZero() {
		e.uvarint(addrSame)
		return
	}
	fs := addressFields(&a)
	var mask uint64
	for i, f := range fs {
		if *f != "" {
			mask |= 1 << i
		}
	}
	e.uvarint(mask)
	for _, f := range fs {
		if *f != "" {
			e.str(*f)
		}
	}
}

func (d *decoder) address() api.Address { return d.addressLike(nil) }

func (d *decoder) addressLike(like *api.Address) api.Address {
	mask := d.uvarint()
	if mask == addrSame && like != nil {
		return *like
	}
	var a api.Address
	if mask >= addrSame {
		d.fail()
		return a
	}
	for i, f := range addressFields(&a) {
		if mask&(1<<i) != 0 {
			if *f = d.str(); *f == "" {
				d.fail() // a set field is never empty: one way to write a record
			}
		}
	}
	return a
}

// update writes an Update; billing and shipping, when given, are the
// addresses its own usually repeat.
func (e *enc) update(u *domain.Update, billing, shipping *api.Address) {
	e.count(len(u.Articles), u.Articles == nil)
	for _, a := range u.Articles {
		e.str(a.Number)
		e.str(a.Title)
		e.str(a.Type)
		e.decX(a.Price)
		e.varint(int64(a.Quantity))
		e.decX(a.Vat)
	}
	e.addressLike(u.Billing, billing)
	e.addressLike(u.Shipping, shipping)
}

func (d *decoder) update(u *domain.Update, billing, shipping *api.Address) {
	// An article takes at least eight bytes.
	if n, isNil := d.count(8); !isNil {
		u.Articles = make([]api.Article, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			u.Articles = append(u.Articles, api.Article{Number: d.str(), Title: d.str(), Type: d.str(), Price: d.decX(),
				Quantity: d.int(), Vat: d.decX()})
		}
	}
	u.Billing = d.addressLike(billing)
	u.Shipping = d.addressLike(shipping)
}

// decX is a decimal exactly: coefficient and exponent (enc.dec's text
// form, for coefficients beyond an int64, trims trailing zeros).
func (e *enc) decX(d decimal.Decimal) {
	c := d.Coefficient()
	if c.IsInt64() {
		e.byte(0)
		e.varint(c.Int64())
	} else {
		e.byte(1)
		e.bytes(c.Append(nil, 10))
	}
	e.varint(int64(d.Exponent()))
}

// maxCoefficientDigits bounds a big coefficient: a damaged record must not
// make the reader parse megabytes of digits.
const maxCoefficientDigits = 400

func (d *decoder) decX() decimal.Decimal {
	var c *big.Int
	switch d.byte() {
	case 0:
		// decimal.New makes the one big.Int; NewFromBigInt would copy it.
		v, exp := d.varint(), d.varint()
		if d.err != nil || exp < math.MinInt32 || exp > math.MaxInt32 {
			d.fail()
			return decimal.Zero
		}
		return decimal.New(v, int32(exp))
	case 1:
		digits := d.raw()
		if len(digits) > maxCoefficientDigits {
			d.fail()
			return decimal.Zero
		}
		var ok bool
		if c, ok = new(big.Int).SetString(string(digits), 10); !ok || c.IsInt64() {
			d.fail() // one way to write a record: small coefficients are varints
			return decimal.Zero
		}
	default:
		d.fail()
		return decimal.Zero
	}
	exp := d.varint()
	if d.err != nil || exp < math.MinInt32 || exp > math.MaxInt32 {
		d.fail()
		return decimal.Zero
	}
	return decimal.NewFromBigInt(c, int32(exp))
}

// skipDecX passes over a decimal decX wrote, with the same checks and no
// allocation.
func (d *decoder) skipDecX() {
	switch d.byte() {
	case 0:
		d.varint()
	case 1:
		if len(d.raw()) > maxCoefficientDigits {
			d.fail()
		}
	default:
		d.fail()
	}
	if exp := d.varint(); exp < math.MinInt32 || exp > math.MaxInt32 {
		d.fail()
	}
}

// SummaryOf reads the list row of the reservation record stored under
// key. A record of format 3 holds the row's derived values, so its row
// reads field by field, the strings as parts of one copy of the record and
// three decimals the only numbers made; an older record is decoded whole
// and its row derived (Reservation.Summary), which is the same row. The
// row's creation time is in the local zone, as the summaries bucket gave
// it and PostgreSQL's lists give it.
func SummaryOf(key string, b []byte) (domain.Summary, error) {
	if len(b) == 0 || b[0] != resFormat3 {
		r, err := DecodeReservationOf(key, b)
		if err != nil {
			return domain.Summary{}, err
		}
		s := r.Summary()
		s.Created = localTime(s.Created)
		return s, nil
	}
	// The record is read through a string that views b, without a copy:
	// every string read below is a view into b (which bbolt may reuse
	// once its transaction ends) until ownStrings copies the row's into
	// one string of their own. TestSummaryOfOwnsItsStrings holds that.
	d := decoder{b: b[1:], s: unsafe.String(unsafe.SliceData(b), len(b)), refs: true}
	d.uvarint() // the list row
	s := domain.Summary{Key: key}
	s.ReservationNumber, s.Invoice, s.Currency, s.IsTest = d.str(), d.str(), d.str(), d.bool()
	s.Customer, s.Email, s.Country = d.str(), d.str(), d.str()
	billing := d.address()
	shipping := d.address()
	// The original order's articles: a line that repeats one names it.
	var artsIn, linesIn [16]article
	arts, lines := artsIn[:0], linesIn[:0]
	if n, isNil := d.count(8); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			a := article{d.str(), d.str()}
			d.str()
			d.skipDecX()
			d.int()
			d.skipDecX()
			arts = append(arts, a)
		}
	}
	d.addressLike(&billing)
	d.addressLike(&shipping)
	if n, isNil := d.count(5); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			var a article
			switch d.byte() {
			case lineSameAsArticle:
				if i >= len(arts) {
					d.fail()
					break
				}
				a = arts[i]
			case 0:
				a = article{d.str(), d.str()}
				d.str()
				d.skipDecX()
				d.skipDecX()
			default:
				d.fail()
			}
			d.int()
			d.int()
			d.int()
			d.int()
			lines = append(lines, a)
		}
	}
	s.LinesUnknown = !d.bool()
	d.str() // the order's source
	d.skipDecX()
	var invIn [8]string
	invoices := invIn[:0]
	if n, isNil := d.count(1); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			invoices = append(invoices, d.str())
		}
	}
	d.bool()
	d.statusZ()
	s.Created = localTime(d.timeZ())
	d.str() // the redirect URL
	if n, isNil := d.count(6); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			flags := d.byte()
			if flags&^(reqKeyIsReservation|reqHasUpdate) != 0 {
				d.fail()
				break
			}
			if flags&reqKeyIsReservation == 0 {
				d.str()
			}
			d.str()
			d.statusZ()
			if flags&reqHasUpdate != 0 {
				d.skipUpdate()
			}
			d.uvarint()
		}
	}
	if n, isNil := d.count(1); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			d.str()
		}
	}
	d.bool() // cancelled: the state says
	s.Captured = d.decX()
	d.skipDecX()
	s.OutcomeUnknown = d.bool()
	if n, isNil := d.count(1); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			d.uvarint()
		}
	}
	d.timeZ()
	s.Amount, s.Remaining, s.State = d.rowValues()
	if d.err == nil && len(d.b) != 0 {
		return domain.Summary{}, fmt.Errorf("reservation record: %d bytes after its end: %w", len(d.b), ErrCorrupt)
	}
	if d.err != nil {
		return domain.Summary{}, fmt.Errorf("reservation record: %w", d.err)
	}
	ownStrings(&s, lines, invoices)
	return s, nil
}

// article is an article's number and title, as a list row names it.
type article struct{ number, title string }

// ownStrings points s's strings, views into a record, at one string of
// their own, with the articles ("number title" a line, joined by "\n")
// and the invoice numbers (joined by "\n") made on the way: one
// allocation for all of them.
func ownStrings(s *domain.Summary, lines []article, invoices []string) {
	fields := [...]*string{&s.ReservationNumber, &s.Invoice, &s.Currency, &s.Customer, &s.Email, &s.Country}
	n := len(s.State)
	for _, f := range fields {
		n += len(*f)
	}
	for _, a := range lines {
		n += len(a.number) + len(a.title) + 2
	}
	for _, v := range invoices {
		n += len(v) + 1
	}
	var sb strings.Builder
	sb.Grow(n)
	var ends [len(fields) + 3]int
	for i, f := range fields {
		sb.WriteString(*f)
		ends[i] = sb.Len()
	}
	for i, a := range lines {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(a.number)
		sb.WriteByte(' ')
		sb.WriteString(a.title)
	}
	ends[len(fields)] = sb.Len()
	for i, v := range invoices {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(v)
	}
	ends[len(fields)+1] = sb.Len()
	sb.WriteString(string(s.State))
	ends[len(fields)+2] = sb.Len()
	all := sb.String()
	from := 0
	for i, f := range fields {
		*f, from = all[from:ends[i]], ends[i]
	}
	s.Articles, from = all[from:ends[len(fields)]], ends[len(fields)]
	s.InvoiceNumbers, from = all[from:ends[len(fields)+1]], ends[len(fields)+1]
	s.State = domain.State(all[from:ends[len(fields)+2]])
}

// localTime is t in the local zone; the zero time stays zero.
func localTime(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Local()
}

// skipUpdate passes over a request's Update (decoder.update without the
// addresses it may repeat).
func (d *decoder) skipUpdate() {
	if n, isNil := d.count(8); !isNil {
		for i := 0; i < n && d.err == nil; i++ {
			d.str()
			d.str()
			d.str()
			d.skipDecX()
			d.int()
			d.skipDecX()
		}
	}
	d.addressLike(nil)
	d.addressLike(nil)
}
