package intake

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"paydesk/api"
	"paydesk/store"
)

// MaxEnvelope bounds one envelope (the listener's push limit too).
const MaxEnvelope = 1 << 20

// NotReserveError is an envelope that is not a deferred-invoice Reserve.
type NotReserveError struct{ Service, Action string }

func (e *NotReserveError) Error() string {
	if e.Service == "" && e.Action == "" {
		return "not a Reserve: the envelope names no service"
	}
	return fmt.Sprintf("not a Reserve: the envelope asks %s of service %s; orders are the Reserve (DataRequest, service %s) the shop sent the gateway",
		orDash(e.Action), orDash(e.Service), api.ServiceDeferred)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OrderFromEnvelope reads a Reserve request envelope, exactly as the shop
// sent it to the gateway, into an order. The envelope must be a
// deferred-invoice Reserve that passes the same rules the gateway applies;
// the error names every broken rule.
func OrderFromEnvelope(body []byte) (store.Order, error) {
	req, err := api.DecodeRequest(body)
	if err != nil {
		return store.Order{}, err
	}
	svc := req.Service()
	if !strings.EqualFold(svc.Name, api.ServiceDeferred) || !strings.EqualFold(svc.Action, api.ActionReserve) {
		return store.Order{}, &NotReserveError{Service: svc.Name, Action: svc.Action}
	}
	op, err := api.ParseOperation(req, "", api.Rules{})
	if err != nil {
		return store.Order{}, err
	}
	rs, ok := op.(api.Reserve)
	if !ok {
		return store.Order{}, &NotReserveError{Service: svc.Name, Action: svc.Action}
	}
	o := store.Order{Invoice: rs.Invoice, Currency: rs.Currency, Articles: rs.Articles, Billing: rs.Billing, Shipping: rs.Shipping}
	if n, ok := req.Param(api.PReservationNumber); ok {
		o.ReservationNumber = strings.TrimSpace(n)
	}
	return o, nil
}

// Item is one order read from a file, or the reason a part of the file is
// not one.
type Item struct {
	// Where names the place in the file: "line 3" (JSON, NDJSON) or
	// "rows 2–4" (CSV).
	Where   string
	Invoice string // when it could be read
	Order   store.Order
	Err     error // the order is refused: the row and the rule
}

// Format is an import file's format.
type Format string

// Formats paydesk import reads.
const (
	FormatJSON Format = "json" // one envelope, an array of them, or NDJSON
	FormatCSV  Format = "csv"
)

// Sniff guesses the format from the name, then from the first byte that is
// not white space: '{' or '[' is JSON, anything else CSV.
func Sniff(name string, head []byte) Format {
	low := strings.ToLower(name)
	switch {
	case strings.HasSuffix(low, ".csv"):
		return FormatCSV
	case strings.HasSuffix(low, ".json"), strings.HasSuffix(low, ".ndjson"), strings.HasSuffix(low, ".jsonl"):
		return FormatJSON
	}
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return FormatJSON
	}
	return FormatCSV
}

// Outcome is what importing one order came to.
type Outcome struct {
	Where   string
	Invoice string
	// Result is "imported", "already known", "conflict" or "refused".
	Result string
	// Reservation is the reservation it joined ("" while it waits for its
	// Reserve push).
	Reservation string
	Reason      string
}

// Outcome results.
const (
	ResultImported = string(store.OrderImported)
	ResultKnown    = string(store.OrderKnown)
	ResultConflict = string(store.OrderConflict)
	ResultRefused  = "refused"
)

// Counts adds up what became of a file's records: Read is always the sum
// of the others.
type Counts struct {
	Read, Imported, Known, Conflicts, Refused int
}

// Add counts one outcome.
func (c *Counts) Add(result string) {
	c.Read++
	switch result {
	case ResultImported:
		c.Imported++
	case ResultKnown:
		c.Known++
	case ResultConflict:
		c.Conflicts++
	default:
		c.Refused++
	}
}

// Plus adds another file's counts.
func (c *Counts) Plus(o Counts) {
	c.Read += o.Read
	c.Imported += o.Imported
	c.Known += o.Known
	c.Conflicts += o.Conflicts
	c.Refused += o.Refused
}

// Reader yields a file's records one at a time: an Item per order or per
// refused record, io.EOF after the last, or an error that stops the file.
type Reader interface {
	Next() (Item, error)
}

// NewReader sniffs the format of r (name is for the format: "-" is
// standard input) and returns the reader for it. err is for a CSV whose
// header refuses the file.
func NewReader(name string, r io.Reader) (Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(512)
	if Sniff(name, head) == FormatCSV {
		return NewCSVReader(br)
	}
	return NewEnvelopeReader(br), nil
}

// Import reads one file (name is for the format; "-" is standard input) as
// a stream, one record at a time, and stores each order in its own
// transaction: an order is imported whole or not at all. emit is called
// with each record's outcome as it is decided (nil: none); the counts add
// up every record read. err is for a file that could not be read to its
// end: the records before it are counted, the rest of the file is not read.
func Import(ctx context.Context, db *store.DB, name, source string, r io.Reader, emit func(Outcome)) (Counts, error) {
	var n Counts
	rd, err := NewReader(name, r)
	if err != nil {
		return n, err
	}
	for {
		it, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		o := Store(ctx, db, source, it)
		n.Add(o.Result)
		if emit != nil {
			emit(o)
		}
	}
}

// Store stores one record read from a file and says what became of it.
func Store(ctx context.Context, db *store.DB, source string, it Item) Outcome {
	o := Outcome{Where: it.Where, Invoice: it.Invoice}
	if it.Err != nil {
		o.Result, o.Reason = ResultRefused, it.Err.Error()
		return o
	}
	it.Order.Source = source
	res, perr := db.PutOrder(ctx, it.Order)
	switch {
	case errors.Is(perr, store.ErrOrderConflict):
		o.Result, o.Reservation, o.Reason = ResultConflict, res.ReservationKey, res.Reason+"; both are kept"
	case perr != nil:
		o.Result, o.Reason = ResultRefused, perr.Error()
	default:
		o.Result, o.Reservation = string(res.Outcome), res.ReservationKey
	}
	return o
}
