package api

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DataRequestPush is the push for Reserve, CancelReservation and
// UpdateReservation.
type DataRequestPush struct {
	Key                  string
	Invoice              string
	ServiceCode          string
	ActionCode           string
	Status               Status
	IsTest               bool
	Order                *string
	Currency             string
	AmountDebit          *Amount
	Services             []ResponseService
	CustomParameters     *NameValueList
	AdditionalParameters *NameValueList
	MutationType         int
	IssuingCountry       *string
	StartRecurrent       bool
	Recurring            bool
	CustomerName         *string
	PayerHash            *string
	PaymentKey           *string
}

// TransactionPush is the push for deferred and gift card Pay and Refund.
type TransactionPush struct {
	Key                  string
	Invoice              string
	ServiceCode          string
	Status               Status
	IsTest               bool
	Order                *string
	Currency             string
	AmountDebit          *Amount `json:",omitempty"`
	AmountCredit         *Amount `json:",omitempty"`
	TransactionType      string
	Services             []ResponseService
	CustomParameters     *NameValueList
	AdditionalParameters *NameValueList
	MutationType         int
	RelatedTransactions  []RelatedTransaction
	IsCancelable         bool
	IssuingCountry       *string
	StartRecurrent       bool
	Recurring            bool
	CustomerName         *string
	PayerHash            *string
	PaymentKey           *string
}

// Push is a push message: exactly one of the two envelopes is set.
type Push struct {
	DataRequest *DataRequestPush `json:",omitempty"`
	Transaction *TransactionPush `json:",omitempty"`
}

// Envelope kinds of a push.
const (
	EnvelopeDataRequest = "DataRequest"
	EnvelopeTransaction = "Transaction"
)

// DecodePush decodes a push body. It accepts keys in any case and ignores
// unknown fields, but insists on exactly one envelope with a key.
func DecodePush(body []byte) (*Push, error) {
	p, err := decodePushBody(body)
	if err != nil {
		return nil, fmt.Errorf("decode push: %w", err)
	}
	switch {
	case p.DataRequest != nil && p.Transaction != nil:
		return nil, fmt.Errorf("decode push: both DataRequest and Transaction are present")
	case p.DataRequest == nil && p.Transaction == nil:
		return nil, fmt.Errorf("decode push: neither a DataRequest nor a Transaction object")
	}
	if p.Key() == "" {
		return nil, fmt.Errorf("decode push: %s.Key is missing", p.Envelope())
	}
	return p, nil
}

// Encode writes the push in the canonical wire form.
func (p *Push) Encode() ([]byte, error) { return MarshalCanonical(p) }

// Envelope names the envelope: "DataRequest" or "Transaction".
func (p *Push) Envelope() string {
	if p.DataRequest != nil {
		return EnvelopeDataRequest
	}
	return EnvelopeTransaction
}

// Key is the transaction key.
func (p *Push) Key() string {
	if p.DataRequest != nil {
		return p.DataRequest.Key
	}
	if p.Transaction != nil {
		return p.Transaction.Key
	}
	return ""
}

// Status is the pushed status.
func (p *Push) Status() Status {
	if p.DataRequest != nil {
		return p.DataRequest.Status
	}
	return p.Transaction.Status
}

// Invoice is the merchant invoice reference.
func (p *Push) Invoice() string {
	if p.DataRequest != nil {
		return p.DataRequest.Invoice
	}
	return p.Transaction.Invoice
}

// ServiceCode is the service the push is about.
func (p *Push) ServiceCode() string {
	if p.DataRequest != nil {
		return p.DataRequest.ServiceCode
	}
	return p.Transaction.ServiceCode
}

// Kind is the ActionCode of a data request or the TransactionType of a
// transaction: what the push is about, in one word.
func (p *Push) Kind() string {
	if p.DataRequest != nil {
		return p.DataRequest.ActionCode
	}
	return p.Transaction.TransactionType
}

// Currency is the pushed currency.
func (p *Push) Currency() string {
	if p.DataRequest != nil {
		return p.DataRequest.Currency
	}
	return p.Transaction.Currency
}

// Amount is AmountDebit, or AmountCredit for a refund, or nil.
func (p *Push) Amount() *Amount {
	if p.DataRequest != nil {
		return p.DataRequest.AmountDebit
	}
	if p.Transaction.AmountCredit != nil {
		return p.Transaction.AmountCredit
	}
	return p.Transaction.AmountDebit
}

// Param returns a parameter from the push's services, "" when absent.
func (p *Push) Param(name string) string {
	if p.DataRequest != nil {
		return serviceParam(p.DataRequest.Services, name)
	}
	return serviceParam(p.Transaction.Services, name)
}

// Related returns the key of the first relation of the given type.
func (p *Push) Related(relationType string) string {
	if p.Transaction == nil {
		return ""
	}
	return relatedKey(p.Transaction.RelatedTransactions, relationType)
}

// IsCompact reports whether a valid JSON body holds no insignificant white
// space, so that Compact would return it unchanged.
func IsCompact(body []byte) bool {
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case ' ', '\t', '\n', '\r':
			return false
		}
	}
	return true
}

// Compact re-serialises a JSON body without insignificant white space; used
// to show and store bodies consistently.
func Compact(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
