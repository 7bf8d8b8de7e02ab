package api

import (
	"errors"
	"strconv"
	"strings"
)

// decodePushBody decodes a push body as json.Unmarshal(body, &p) would,
// without reflection: the push listener decodes every push it receives, and
// encoding/json's reflection was a tenth of its CPU.
func decodePushBody(body []byte) (*Push, error) {
	r := newJSONReader(body)
	var p Push
	if err := r.object(&p, 1, "", pushMember); err != nil {
		return nil, err
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return &p, nil
}

// object decodes the object at the reader member by member (null leaves v
// as it was, as for any struct in encoding/json).
func (r *jsonReader) object(v any, depth int, what string, member func(r *jsonReader, v any, key []byte, depth int) error) error {
	if isNull, err := r.null(); isNull || err != nil {
		return err
	}
	if err := r.open('{', depth, what); err != nil {
		return err
	}
	for i := 0; ; i++ {
		key, ok, err := r.member(i)
		if err != nil || !ok {
			return err
		}
		if err := member(r, v, foldKey(&r.keyBuf, key), depth+1); err != nil {
			return inField(what, err)
		}
	}
}

func pushMember(r *jsonReader, v any, key []byte, depth int) error {
	p := v.(*Push)
	switch string(key) {
	case "DATAREQUEST":
		return structPtr(r, &p.DataRequest, depth, "DataRequest", dataRequestMember)
	case "TRANSACTION":
		return structPtr(r, &p.Transaction, depth, "Transaction", transactionMember)
	}
	_, err := r.skip(depth)
	return err
}

// structPtr decodes into a pointer to a struct: null sets it to nil, an
// object decodes into what it points to (allocated when nil).
func structPtr[T any](r *jsonReader, dst **T, depth int, what string, member func(*jsonReader, any, []byte, int) error) error {
	if isNull, err := r.null(); isNull || err != nil {
		if err == nil {
			*dst = nil
		}
		return err
	}
	if *dst == nil {
		*dst = new(T)
	}
	return r.object(*dst, depth, what, member)
}

// slice decodes an array into a slice the way encoding/json does: elements
// decode into what the slice already holds, the length is set to the
// number of elements, and [] gives an empty slice, not nil.
func slice[T any](r *jsonReader, dst *[]T, depth int, what string, elem func(*jsonReader, *T, int) error) error {
	if isNull, err := r.null(); isNull || err != nil {
		if err == nil {
			*dst = nil
		}
		return err
	}
	if err := r.open('[', depth, what); err != nil {
		return err
	}
	s := *dst
	n := 0
	for i := 0; ; i++ {
		ok, err := r.element(i)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		switch {
		case n < len(s):
		case n < cap(s):
			s = s[:n+1]
		default:
			var zero T
			s = append(s[:n], zero)
		}
		if err := elem(r, &s[n], depth+1); err != nil {
			return inField(what+"["+strconv.Itoa(n)+"]", err)
		}
		n++
	}
	if n == 0 {
		*dst = []T{}
		return nil
	}
	*dst = s[:n]
	return nil
}

func dataRequestMember(r *jsonReader, v any, key []byte, depth int) error {
	d := v.(*DataRequestPush)
	if string(key) == "ACTIONCODE" {
		return r.stringField(&d.ActionCode, depth, "ActionCode")
	}
	f := envelopeFields{key: &d.Key, invoice: &d.Invoice, serviceCode: &d.ServiceCode, currency: &d.Currency,
		status: &d.Status, isTest: &d.IsTest, startRecurrent: &d.StartRecurrent, recurring: &d.Recurring,
		order: &d.Order, issuingCountry: &d.IssuingCountry, customerName: &d.CustomerName, payerHash: &d.PayerHash,
		paymentKey: &d.PaymentKey, amountDebit: &d.AmountDebit, services: &d.Services,
		customParameters: &d.CustomParameters, additionalParameters: &d.AdditionalParameters, mutationType: &d.MutationType}
	return r.envelopeMember(&f, key, depth)
}

func transactionMember(r *jsonReader, v any, key []byte, depth int) error {
	t := v.(*TransactionPush)
	switch string(key) {
	case "AMOUNTCREDIT":
		return r.amountField(&t.AmountCredit, depth, "AmountCredit")
	case "TRANSACTIONTYPE":
		return r.stringField(&t.TransactionType, depth, "TransactionType")
	case "RELATEDTRANSACTIONS":
		return slice(r, &t.RelatedTransactions, depth, "RelatedTransactions", relatedTransaction)
	case "ISCANCELABLE":
		return r.boolField(&t.IsCancelable, depth, "IsCancelable")
	}
	f := envelopeFields{key: &t.Key, invoice: &t.Invoice, serviceCode: &t.ServiceCode, currency: &t.Currency,
		status: &t.Status, isTest: &t.IsTest, startRecurrent: &t.StartRecurrent, recurring: &t.Recurring,
		order: &t.Order, issuingCountry: &t.IssuingCountry, customerName: &t.CustomerName, payerHash: &t.PayerHash,
		paymentKey: &t.PaymentKey, amountDebit: &t.AmountDebit, services: &t.Services,
		customParameters: &t.CustomParameters, additionalParameters: &t.AdditionalParameters, mutationType: &t.MutationType}
	return r.envelopeMember(&f, key, depth)
}

// envelopeFields points at the fields both push envelopes have, so one
// switch decodes them for either.
type envelopeFields struct {
	key, invoice, serviceCode, currency                        *string
	status                                                     *Status
	isTest, startRecurrent, recurring                          *bool
	order, issuingCountry, customerName, payerHash, paymentKey **string
	amountDebit                                                **Amount
	services                                                   *[]ResponseService
	customParameters, additionalParameters                     **NameValueList
	mutationType                                               *int
}

func (r *jsonReader) envelopeMember(f *envelopeFields, key []byte, depth int) error {
	switch string(key) {
	case "KEY":
		return r.stringField(f.key, depth, "Key")
	case "INVOICE":
		return r.stringField(f.invoice, depth, "Invoice")
	case "SERVICECODE":
		return r.stringField(f.serviceCode, depth, "ServiceCode")
	case "STATUS":
		return r.object(f.status, depth, "Status", statusMember)
	case "ISTEST":
		return r.boolField(f.isTest, depth, "IsTest")
	case "ORDER":
		return r.stringPtrField(f.order, depth, "Order")
	case "CURRENCY":
		return r.stringField(f.currency, depth, "Currency")
	case "AMOUNTDEBIT":
		return r.amountField(f.amountDebit, depth, "AmountDebit")
	case "SERVICES":
		return slice(r, f.services, depth, "Services", responseService)
	case "CUSTOMPARAMETERS":
		return structPtr(r, f.customParameters, depth, "CustomParameters", nameValueListMember)
	case "ADDITIONALPARAMETERS":
		return structPtr(r, f.additionalParameters, depth, "AdditionalParameters", nameValueListMember)
	case "MUTATIONTYPE":
		return r.intField(f.mutationType, depth, "MutationType")
	case "ISSUINGCOUNTRY":
		return r.stringPtrField(f.issuingCountry, depth, "IssuingCountry")
	case "STARTRECURRENT":
		return r.boolField(f.startRecurrent, depth, "StartRecurrent")
	case "RECURRING":
		return r.boolField(f.recurring, depth, "Recurring")
	case "CUSTOMERNAME":
		return r.stringPtrField(f.customerName, depth, "CustomerName")
	case "PAYERHASH":
		return r.stringPtrField(f.payerHash, depth, "PayerHash")
	case "PAYMENTKEY":
		return r.stringPtrField(f.paymentKey, depth, "PaymentKey")
	}
	_, err := r.skip(depth)
	return err
}

func statusMember(r *jsonReader, v any, key []byte, depth int) error {
	s := v.(*Status)
	switch string(key) {
	case "CODE":
		return r.object(&s.Code, depth, "Code", codeMember)
	case "SUBCODE":
		return structPtr(r, &s.SubCode, depth, "SubCode", subCodeMember)
	case "DATETIME":
		raw, text, err := r.skipText(depth)
		if err != nil {
			return err
		}
		// DateTime.UnmarshalJSON, without its reflection for the usual plain string.
		plain, ok := plainText(text)
		switch {
		case !ok:
			err = s.DateTime.UnmarshalJSON(raw)
		case plain == "":
			s.DateTime = DateTime{}
		default:
			var dt DateTime
			if dt, err = ParseDateTime(plain); err == nil {
				s.DateTime = dt
			}
		}
		if err != nil {
			return &fieldError{"DateTime", err.Error()}
		}
		return nil
	}
	_, err := r.skip(depth)
	return err
}

func codeMember(r *jsonReader, v any, key []byte, depth int) error {
	c := v.(*Code)
	switch string(key) {
	case "CODE":
		return r.intField(&c.Code, depth, "Code")
	case "DESCRIPTION":
		return r.stringField(&c.Description, depth, "Description")
	}
	_, err := r.skip(depth)
	return err
}

func subCodeMember(r *jsonReader, v any, key []byte, depth int) error {
	c := v.(*SubCode)
	switch string(key) {
	case "CODE":
		return r.stringField(&c.Code, depth, "Code")
	case "DESCRIPTION":
		return r.stringField(&c.Description, depth, "Description")
	}
	_, err := r.skip(depth)
	return err
}

func responseService(r *jsonReader, s *ResponseService, depth int) error {
	return r.object(s, depth, "", responseServiceMember)
}

func responseServiceMember(r *jsonReader, v any, key []byte, depth int) error {
	s := v.(*ResponseService)
	switch string(key) {
	case "NAME":
		return r.stringField(&s.Name, depth, "Name")
	case "ACTION":
		return r.stringPtrField(&s.Action, depth, "Action")
	case "PARAMETERS":
		return slice(r, &s.Parameters, depth, "Parameters", responseParameter)
	case "VERSIONASPROPERTY":
		return r.intPtrField(&s.VersionAsProperty, depth, "VersionAsProperty")
	}
	_, err := r.skip(depth)
	return err
}

func responseParameter(r *jsonReader, p *ResponseParameter, depth int) error {
	return r.object(p, depth, "", responseParameterMember)
}

func responseParameterMember(r *jsonReader, v any, key []byte, depth int) error {
	p := v.(*ResponseParameter)
	switch string(key) {
	case "NAME":
		return r.stringField(&p.Name, depth, "Name")
	case "VALUE":
		return r.flexField(&p.Value, depth, "Value")
	}
	_, err := r.skip(depth)
	return err
}

func nameValueListMember(r *jsonReader, v any, key []byte, depth int) error {
	l := v.(*NameValueList)
	switch string(key) {
	case "LIST":
		return slice(r, &l.List, depth, "List", nameValue)
	case "ADDITIONALPARAMETER":
		return slice(r, &l.AdditionalParameter, depth, "AdditionalParameter", nameValue)
	}
	_, err := r.skip(depth)
	return err
}

func nameValue(r *jsonReader, nv *NameValue, depth int) error {
	return r.object(nv, depth, "", nameValueMember)
}

func nameValueMember(r *jsonReader, v any, key []byte, depth int) error {
	nv := v.(*NameValue)
	switch string(key) {
	case "NAME":
		return r.stringField(&nv.Name, depth, "Name")
	case "VALUE":
		return r.flexField(&nv.Value, depth, "Value")
	}
	_, err := r.skip(depth)
	return err
}

func relatedTransaction(r *jsonReader, rt *RelatedTransaction, depth int) error {
	return r.object(rt, depth, "", relatedTransactionMember)
}

func relatedTransactionMember(r *jsonReader, v any, key []byte, depth int) error {
	rt := v.(*RelatedTransaction)
	switch string(key) {
	case "RELATIONTYPE":
		return r.stringField(&rt.RelationType, depth, "RelationType")
	case "RELATEDTRANSACTIONKEY":
		return r.stringField(&rt.RelatedTransactionKey, depth, "RelatedTransactionKey")
	}
	_, err := r.skip(depth)
	return err
}

// amountField decodes a *Amount: null sets nil, anything else goes through
// Amount.UnmarshalJSON as in encoding/json.
func (r *jsonReader) amountField(dst **Amount, depth int, what string) error {
	if isNull, err := r.null(); isNull || err != nil {
		if err == nil {
			*dst = nil
		}
		return err
	}
	raw, err := r.skip(depth)
	if err != nil {
		return err
	}
	if *dst == nil {
		*dst = new(Amount)
	}
	if err := (*dst).UnmarshalJSON(raw); err != nil {
		return &fieldError{what, err.Error()}
	}
	return nil
}

// flexField decodes a FlexString: FlexString.UnmarshalJSON, without its
// reflection for the plain forms.
func (r *jsonReader) flexField(dst *FlexString, depth int, what string) error {
	raw, text, err := r.skipText(depth)
	if err != nil {
		return err
	}
	switch c := raw[0]; {
	case c == '"':
		if s, ok := plainText(text); ok {
			*dst = FlexString(s)
			return nil
		}
	case c == 'n':
		*dst = ""
		return nil
	case c == 't' || c == 'f' || c == '-' || '0' <= c && c <= '9':
		*dst = FlexString(text)
		return nil
	}
	if err := dst.UnmarshalJSON(raw); err != nil {
		return &fieldError{what, err.Error()}
	}
	return nil
}

// fieldError is a value of the wrong kind or form. Its path grows as the
// error passes up through the objects and arrays that hold the field.
type fieldError struct{ path, msg string }

func (e *fieldError) Error() string {
	if e.path == "" {
		return "body: " + e.msg
	}
	return e.path + ": " + e.msg
}

// inField puts where (an object's field or an array's element) in front of
// the path of a field error; other errors pass unchanged.
func inField(where string, err error) error {
	var fe *fieldError
	if where == "" || !errors.As(err, &fe) {
		return err
	}
	if fe.path == "" {
		fe.path = where
	} else {
		fe.path = where + "." + fe.path
	}
	return fe
}

// plainText returns the value of a string literal without escapes or
// non-ASCII bytes: its text between the quotes.
func plainText(text string) (string, bool) {
	if len(text) < 2 || text[0] != '"' {
		return "", false
	}
	inner := text[1 : len(text)-1]
	if strings.IndexByte(inner, '\\') >= 0 {
		return "", false
	}
	for i := 0; i < len(inner); i++ {
		if inner[i] < 0x20 || inner[i] >= 0x80 {
			return "", false
		}
	}
	return inner, true
}
