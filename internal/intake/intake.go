package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// ReadEnvelopes reads Reserve envelopes: one JSON object, a JSON array of
// them, or one per line (NDJSON). Every envelope becomes an Item; one that
// is not a valid Reserve carries its error and the line it starts on.
func ReadEnvelopes(r io.Reader) ([]Item, error) {
	data, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dec := json.NewDecoder(bytes.NewReader(data))
	var items []Item
	add := func(start int64, raw json.RawMessage) {
		it := Item{Where: "line " + itoa(lineAt(data, start))}
		if len(raw) > MaxEnvelope {
			it.Err = fmt.Errorf("envelope larger than %d bytes", MaxEnvelope)
			items = append(items, it)
			return
		}
		o, err := OrderFromEnvelope(raw)
		it.Order, it.Invoice, it.Err = o, o.Invoice, err
		items = append(items, it)
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%s: %w", "line 1", err)
		}
		for dec.More() {
			start := skipSpace(data, dec.InputOffset())
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return items, fmt.Errorf("line %d: %w", lineAt(data, start), err)
			}
			add(start, raw)
		}
		if _, err := dec.Token(); err != nil {
			return items, fmt.Errorf("end of the array: %w", err)
		}
		return items, nil
	}
	for {
		start := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return items, nil
		}
		if err != nil {
			return items, fmt.Errorf("line %d: %w", lineAt(data, start), err)
		}
		add(start, raw)
	}
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
		off++
	}
	return off
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
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

// Import reads one file (name is for the format and the report; "-" is
// standard input) and stores each of its orders in its own transaction:
// an order is imported whole or not at all. It returns one outcome per
// order; err is for a file that could not be read at all.
func Import(db *store.DB, name, source string, r io.Reader) ([]Outcome, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(512)
	var items []Item
	var err error
	switch Sniff(name, head) {
	case FormatCSV:
		items, err = ReadCSV(br)
	default:
		items, err = ReadEnvelopes(br)
	}
	out := make([]Outcome, 0, len(items))
	for _, it := range items {
		o := Outcome{Where: it.Where, Invoice: it.Invoice}
		if it.Err != nil {
			o.Result, o.Reason = ResultRefused, it.Err.Error()
			out = append(out, o)
			continue
		}
		it.Order.Source = source
		res, perr := db.PutOrder(it.Order)
		switch {
		case errors.Is(perr, store.ErrOrderConflict):
			o.Result, o.Reservation, o.Reason = ResultConflict, res.ReservationKey, res.Reason+"; both are kept"
		case perr != nil:
			o.Result, o.Reason = ResultRefused, perr.Error()
		default:
			o.Result, o.Reservation = string(res.Outcome), res.ReservationKey
		}
		out = append(out, o)
	}
	return out, err
}
