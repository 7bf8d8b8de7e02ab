package api

import (
	"fmt"
)

// Status codes: the document shows 190 and 791; the rest are the family's
// (design.md, "Interface decisions").
const (
	StatusSuccess             = 190
	StatusFailed              = 490
	StatusValidationFailure   = 491
	StatusTechnicalFailure    = 492
	StatusRejected            = 690
	StatusPendingInput        = 790
	StatusPendingProcessing   = 791
	StatusAwaitingConsumer    = 792
	StatusOnHold              = 793
	StatusCancelledByConsumer = 890
	StatusCancelledByMerchant = 891
)

// Subcodes shown by the document.
const (
	SubCodeProcessed      = "S001"
	SubCodeRedirect       = "S002"
	SubCodePartialPayment = "S003"
)

// IsFinal reports whether a status code can never change again.
func IsFinal(code int) bool {
	switch code {
	case StatusSuccess, StatusFailed, StatusValidationFailure, StatusTechnicalFailure,
		StatusRejected, StatusCancelledByConsumer, StatusCancelledByMerchant:
		return true
	}
	return false
}

// IsPending reports whether a status code is one of the temporary 79x codes.
func IsPending(code int) bool { return code >= 790 && code <= 799 }

// StatusText is the family's description of a code.
func StatusText(code int) string {
	switch code {
	case StatusSuccess:
		return "Success"
	case StatusFailed:
		return "Failed"
	case StatusValidationFailure:
		return "Validation failure"
	case StatusTechnicalFailure:
		return "Technical failure"
	case StatusRejected:
		return "Rejected"
	case StatusPendingInput:
		return "Pending input"
	case StatusPendingProcessing:
		return "Pending processing"
	case StatusAwaitingConsumer:
		return "Awaiting consumer"
	case StatusOnHold:
		return "On hold"
	case StatusCancelledByConsumer:
		return "Cancelled by consumer"
	case StatusCancelledByMerchant:
		return "Cancelled by merchant"
	}
	return fmt.Sprintf("Status %d", code)
}

// Code is Status.Code: the numeric code and its text.
type Code struct {
	Code        int
	Description string
}

// SubCode is Status.SubCode.
type SubCode struct {
	Code        string
	Description string
}

// Status is the status block of responses and pushes.
type Status struct {
	Code     Code
	SubCode  *SubCode
	DateTime DateTime
}

// SubCodeString is the subcode or "" when there is none.
func (s Status) SubCodeString() string {
	if s.SubCode == nil {
		return ""
	}
	return s.SubCode.Code
}

// RequestedInformation is an item of RequiredAction.RequestedInformation.
type RequestedInformation struct {
	Name        string
	DataType    int
	MaxLength   int
	Required    bool
	Description string
}

// PayRemainderDetails tells how much of a gift card payment is still open.
type PayRemainderDetails struct {
	RemainderAmount  *Amount
	Currency         string
	GroupTransaction string
}

// RequiredAction asks the merchant to redirect the customer.
type RequiredAction struct {
	RedirectURL          string
	RequestedInformation []RequestedInformation
	PayRemainderDetails  *PayRemainderDetails `json:",omitempty"`
	Name                 string
	TypeDeprecated       int
}

// ResponseParameter is a parameter in a response or push service item.
type ResponseParameter struct {
	Name  string
	Value FlexString
}

// ResponseService is a Services item of a response or push. Action is null in
// every shown response; VersionAsProperty appears in pushes only.
type ResponseService struct {
	Name              string
	Action            *string
	Parameters        []ResponseParameter
	VersionAsProperty *int `json:",omitempty"`
}

// RelatedTransaction links a transaction to another.
type RelatedTransaction struct {
	RelationType          string
	RelatedTransactionKey string
}

// NameValue is an item of CustomParameters / AdditionalParameters.
type NameValue struct {
	Name  string
	Value FlexString
}

// NameValueList is CustomParameters or AdditionalParameters; the family uses
// both List and AdditionalParameter as the list's key.
type NameValueList struct {
	List                []NameValue `json:",omitempty"`
	AdditionalParameter []NameValue `json:",omitempty"`
}

// Items are the pairs whichever key the list came under; nil for a nil list.
func (l *NameValueList) Items() []NameValue {
	if l == nil || len(l.List)+len(l.AdditionalParameter) == 0 {
		return nil
	}
	return append(append([]NameValue(nil), l.List...), l.AdditionalParameter...)
}

// ConsumerMessage is a message the merchant should show the customer.
type ConsumerMessage struct {
	MustRead    bool
	CultureName string
	Title       string
	PlainText   string
	HtmlText    string
}

// ErrorItem is one entry of a RequestErrors list. Service and Action are
// empty for the lists that do not carry them.
type ErrorItem struct {
	Service      string `json:",omitempty"`
	Action       string `json:",omitempty"`
	Name         string
	Error        string
	ErrorMessage string
}

// RequestErrors are the gateway's validation errors in the family's five
// lists.
type RequestErrors struct {
	ChannelErrors         []ErrorItem
	ServiceErrors         []ErrorItem
	ActionErrors          []ErrorItem
	ParameterErrors       []ErrorItem
	CustomParameterErrors []ErrorItem
}

// All lists every error in the family's reporting order.
func (e *RequestErrors) All() []ErrorItem {
	if e == nil {
		return nil
	}
	var all []ErrorItem
	for _, l := range [][]ErrorItem{e.ChannelErrors, e.ServiceErrors, e.ActionErrors, e.ParameterErrors, e.CustomParameterErrors} {
		all = append(all, l...)
	}
	return all
}

// Response is the gateway response envelope. Fields the document marks as
// present only on Pay and Refund responses are omitted when empty; the rest
// are always written, null when unset.
type Response struct {
	Key                  string
	Status               Status
	RequiredAction       *RequiredAction
	Services             []ResponseService
	CustomParameters     *NameValueList
	AdditionalParameters *NameValueList
	RequestErrors        *RequestErrors
	Invoice              string `json:",omitempty"`
	ServiceCode          string
	IsTest               bool
	Currency             string  `json:",omitempty"`
	AmountDebit          *Amount `json:",omitempty"`
	AmountCredit         *Amount `json:",omitempty"`
	TransactionType      *string
	MutationType         int
	RelatedTransactions  []RelatedTransaction
	ConsumerMessage      *ConsumerMessage
	Order                *string
	IssuingCountry       *string
	StartRecurrent       bool
	Recurring            bool
	CustomerName         *string
	PayerHash            *string
	PaymentKey           *string
}

// DecodeResponse decodes a gateway response envelope.
func DecodeResponse(body []byte) (*Response, error) {
	var r Response
	if err := decodeObject(body, &r); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	return &r, nil
}

// Param returns the value of the named parameter in the response's services.
func (r *Response) Param(name string) string { return serviceParam(r.Services, name) }

// Type is TransactionType or "".
func (r *Response) Type() string { return deref(r.TransactionType) }

// Related returns the key of the first relation of the given type.
func (r *Response) Related(relationType string) string {
	return relatedKey(r.RelatedTransactions, relationType)
}

func serviceParam(ss []ResponseService, name string) string {
	for _, s := range ss {
		for _, p := range s.Parameters {
			if equalFold(p.Name, name) {
				return string(p.Value)
			}
		}
	}
	return ""
}

func relatedKey(rs []RelatedTransaction, relationType string) string {
	for _, r := range rs {
		if equalFold(r.RelationType, relationType) {
			return r.RelatedTransactionKey
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Ptr returns a pointer to v, for the envelope's nullable fields.
func Ptr[T any](v T) *T { return &v }
