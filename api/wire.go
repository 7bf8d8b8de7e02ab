package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Gateway paths, relative to the base URL.
const (
	PathTransaction = "/json/Transaction"
	PathDataRequest = "/json/DataRequest"
)

// Actions named in Services.ServiceList[].Action.
const (
	ActionReserve           = "Reserve"
	ActionCancelReservation = "CancelReservation"
	ActionUpdateReservation = "UpdateReservation"
	ActionPay               = "Pay"
	ActionRefund            = "Refund"
	// ActionPayRemainder is the family's way for the merchant to pay the rest
	// of a gift card partial payment (design.md).
	ActionPayRemainder = "PayRemainder"
)

// ServiceDeferred is the deferred-invoice service code.
const ServiceDeferred = "deferredkp"

// Transaction types.
const (
	TypeDeferredPay    = "C700"
	TypeDeferredRefund = "C701"
	TypeGiftCardPay    = "V238"
	TypeGiftCardRefund = "V239"
)

// MutationType values as the document shows them per kind of request.
const (
	MutationDataRequest = 0
	MutationDeferred    = 1
	MutationGiftCard    = 2
)

// Relation types in RelatedTransactions.
const (
	RelationRefund         = "refund"
	RelationPartialPayment = "partialpayment"
)

// PathFor tells which endpoint an action of a service is sent to.
func PathFor(action string) string {
	switch action {
	case ActionReserve, ActionCancelReservation, ActionUpdateReservation:
		return PathDataRequest
	default:
		return PathTransaction
	}
}

// FlexString is a string on the wire that real clients also send as a JSON
// number or boolean (the family's SDKs do both); it decodes all of them and
// always encodes as a string.
type FlexString string

// UnmarshalJSON accepts a string, number, boolean or null.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return fmt.Errorf("empty value")
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = FlexString(s)
	case 'n':
		*f = ""
	case 't', 'f':
		var v bool
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*f = FlexString(strconv.FormatBool(v))
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("value must be a string, number or boolean")
		}
		*f = FlexString(n.String())
	}
	return nil
}

// Parameter is one service parameter. Parameters of one article share
// GroupType "Article" and a GroupID of their own.
type Parameter struct {
	Name      string
	Value     FlexString
	GroupType string     `json:",omitempty"`
	GroupID   FlexString `json:",omitempty"`
}

// Service is one item of Services.ServiceList in a request.
type Service struct {
	Name       string
	Action     string
	Version    *int `json:",omitempty"`
	Parameters []Parameter
}

// Services wraps the service list as the envelope nests it.
type Services struct {
	ServiceList []Service
}

// ClientIP is the customer's address; Type 0 is IPv4, 1 is IPv6.
type ClientIP struct {
	Type    int
	Address string
}

// IP address types of ClientIP.Type.
const (
	IPv4 = 0
	IPv6 = 1
)

// Request is the gateway request envelope. Envelope fields the document does
// not list but real clients send (PushURL, ReturnURL, Order, …) are kept so
// the sandbox can honour them.
type Request struct {
	Currency               string
	Invoice                string    `json:",omitempty"`
	Order                  string    `json:",omitempty"`
	Description            string    `json:",omitempty"`
	AmountDebit            *Amount   `json:",omitempty"`
	AmountCredit           *Amount   `json:",omitempty"`
	OriginalTransactionKey string    `json:",omitempty"`
	ClientIP               *ClientIP `json:",omitempty"`
	PushURL                string    `json:",omitempty"`
	ReturnURL              string    `json:",omitempty"`
	// ReturnURLCancel, ReturnURLError and ReturnURLReject are where the
	// customer goes back to after a cancelled, failed or rejected checkout;
	// "" means ReturnURL.
	ReturnURLCancel string `json:",omitempty"`
	ReturnURLError  string `json:",omitempty"`
	ReturnURLReject string `json:",omitempty"`
	Services        Services
	// AdditionalParameters and CustomParameters are the merchant's own
	// name/value pairs; the gateway echoes them in its response and pushes.
	AdditionalParameters *ParamList `json:",omitempty"`
	CustomParameters     *ParamList `json:",omitempty"`
}

// ParamList is a request's AdditionalParameters or CustomParameters in any
// of the family's shapes: the items under "List", "AdditionalParameter" or
// "CustomParameter".
type ParamList struct {
	List                []NameValue `json:",omitempty"`
	AdditionalParameter []NameValue `json:",omitempty"`
	CustomParameter     []NameValue `json:",omitempty"`
}

// Items are the pairs whatever the shape they came in.
func (p *ParamList) Items() []NameValue {
	if p == nil {
		return nil
	}
	var out []NameValue
	out = append(out, p.List...)
	out = append(out, p.AdditionalParameter...)
	return append(out, p.CustomParameter...)
}

// Service returns the first service item, which names the service and action.
func (r *Request) Service() Service {
	if r == nil || len(r.Services.ServiceList) == 0 {
		return Service{}
	}
	return r.Services.ServiceList[0]
}

// Path is the endpoint this request goes to.
func (r *Request) Path() string { return PathFor(r.Service().Action) }

// Param returns the value of the first ungrouped-or-grouped parameter called
// name (case-insensitive, as the gateway matches names) and whether it exists.
func (r *Request) Param(name string) (string, bool) {
	return findParam(r.Service().Parameters, name)
}

func findParam(ps []Parameter, name string) (string, bool) {
	for _, p := range ps {
		if equalFold(p.Name, name) {
			return string(p.Value), true
		}
	}
	return "", false
}

// DecodeRequest decodes a request envelope liberally: keys in any case,
// values and group IDs as strings or numbers, unknown fields ignored.
func DecodeRequest(body []byte) (*Request, error) {
	var r Request
	if err := decodeObject(body, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	if len(r.Services.ServiceList) == 0 {
		return nil, fmt.Errorf("decode request: Services.ServiceList is empty")
	}
	return &r, nil
}

// decodeObject insists on a single JSON object: a bare array, number or
// trailing garbage is not an envelope.
func decodeObject(body []byte, v any) error {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("body is not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}

// MarshalCanonical encodes v as the family expects on the wire: compact, no
// HTML escaping (no \u003c, no \/), raw UTF-8 including U+2028 and U+2029.
// The family's SDKs verify a push by re-serialising it (Node:
// JSON.stringify(JSON.parse(body))), so the bytes must be exactly what
// JSON.stringify writes; TestCanonicalMatchesJSONStringify holds that.
func MarshalCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return unescapeLineSeparators(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// unescapeLineSeparators rewrites the \u2028 and \u2029 escapes that
// encoding/json always writes (for JavaScript embedded in HTML), and the
// \ufffd it writes for invalid UTF-8, as the raw characters, which is what
// JSON.stringify writes. It walks the escapes of
// encoding/json's own output, so an escaped backslash followed by the text
// "u2028" is left alone. The input is valid JSON; it is changed in place.
func unescapeLineSeparators(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u202`)) && !bytes.Contains(b, []byte(`\ufffd`)) {
		return b
	}
	out := b[:0]
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		if b[i+1] == 'u' && i+5 < len(b) {
			// Six bytes become three, so writing into b behind the read
			// position is safe.
			switch string(b[i+2 : i+6]) {
			case "2028":
				out = append(out, "\u2028"...)
				i += 5
				continue
			case "2029":
				out = append(out, "\u2029"...)
				i += 5
				continue
			case "fffd": // encoding/json's stand-in for invalid UTF-8
				out = append(out, "\ufffd"...)
				i += 5
				continue
			}
		}
		// Any other escape: copy it whole (\uXXXX or a two-byte one).
		n := 2
		if b[i+1] == 'u' {
			n = 6
		}
		out = append(out, b[i:min(i+n, len(b))]...)
		i += n - 1
	}
	return out
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
