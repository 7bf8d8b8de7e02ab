package api

import "strings"

// decodePushBody decodes a push body as json.Unmarshal(body, &p) would,
// without reflection: the push listener decodes every push it receives, and
// encoding/json's reflection was a tenth of its CPU.
func decodePushBody(body []byte) (*Push, error) {
	r := newJSONReader(body)
	var p Push
	if err := r.object(&p, 1, "push", pushMember); err != nil {
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
			return err
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
			return err
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
	switch string(key) {
	case "KEY":
		return r.stringField(&d.Key, depth, "DataRequest.Key")
	case "INVOICE":
		return r.stringField(&d.Invoice, depth, "DataRequest.Invoice")
	case "SERVICECODE":
		return r.stringField(&d.ServiceCode, depth, "DataRequest.ServiceCode")
	case "ACTIONCODE":
		return r.stringField(&d.ActionCode, depth, "DataRequest.ActionCode")
	case "STATUS":
		return r.object(&d.Status, depth, "DataRequest.Status", statusMember)
	case "ISTEST":
		return r.boolField(&d.IsTest, depth, "DataRequest.IsTest")
	case "ORDER":
		return r.stringPtrField(&d.Order, depth, "DataRequest.Order")
	case "CURRENCY":
		return r.stringField(&d.Currency, depth, "DataRequest.Currency")
	case "AMOUNTDEBIT":
		return r.amountField(&d.AmountDebit, depth)
	case "SERVICES":
		return slice(r, &d.Services, depth, "DataRequest.Services", responseService)
	case "CUSTOMPARAMETERS":
		return structPtr(r, &d.CustomParameters, depth, "DataRequest.CustomParameters", nameValueListMember)
	case "ADDITIONALPARAMETERS":
		return structPtr(r, &d.AdditionalParameters, depth, "DataRequest.AdditionalParameters", nameValueListMember)
	case "MUTATIONTYPE":
		return r.intField(&d.MutationType, depth, "DataRequest.MutationType")
	case "ISSUINGCOUNTRY":
		return r.stringPtrField(&d.IssuingCountry, depth, "DataRequest.IssuingCountry")
	case "STARTRECURRENT":
		return r.boolField(&d.StartRecurrent, depth, "DataRequest.StartRecurrent")
	case "RECURRING":
		return r.boolField(&d.Recurring, depth, "DataRequest.Recurring")
	case "CUSTOMERNAME":
		return r.stringPtrField(&d.CustomerName, depth, "DataRequest.CustomerName")
	case "PAYERHASH":
		return r.stringPtrField(&d.PayerHash, depth, "DataRequest.PayerHash")
	case "PAYMENTKEY":
		return r.stringPtrField(&d.PaymentKey, depth, "DataRequest.PaymentKey")
	}
	_, err := r.skip(depth)
	return err
}

func transactionMember(r *jsonReader, v any, key []byte, depth int) error {
	t := v.(*TransactionPush)
	switch string(key) {
	case "KEY":
		return r.stringField(&t.Key, depth, "Transaction.Key")
	case "INVOICE":
		return r.stringField(&t.Invoice, depth, "Transaction.Invoice")
	case "SERVICECODE":
		return r.stringField(&t.ServiceCode, depth, "Transaction.ServiceCode")
	case "STATUS":
		return r.object(&t.Status, depth, "Transaction.Status", statusMember)
	case "ISTEST":
		return r.boolField(&t.IsTest, depth, "Transaction.IsTest")
	case "ORDER":
		return r.stringPtrField(&t.Order, depth, "Transaction.Order")
	case "CURRENCY":
		return r.stringField(&t.Currency, depth, "Transaction.Currency")
	case "AMOUNTDEBIT":
		return r.amountField(&t.AmountDebit, depth)
	case "AMOUNTCREDIT":
		return r.amountField(&t.AmountCredit, depth)
	case "TRANSACTIONTYPE":
		return r.stringField(&t.TransactionType, depth, "Transaction.TransactionType")
	case "SERVICES":
		return slice(r, &t.Services, depth, "Transaction.Services", responseService)
	case "CUSTOMPARAMETERS":
		return structPtr(r, &t.CustomParameters, depth, "Transaction.CustomParameters", nameValueListMember)
	case "ADDITIONALPARAMETERS":
		return structPtr(r, &t.AdditionalParameters, depth, "Transaction.AdditionalParameters", nameValueListMember)
	case "MUTATIONTYPE":
		return r.intField(&t.MutationType, depth, "Transaction.MutationType")
	case "RELATEDTRANSACTIONS":
		return slice(r, &t.RelatedTransactions, depth, "Transaction.RelatedTransactions", relatedTransaction)
	case "ISCANCELABLE":
		return r.boolField(&t.IsCancelable, depth, "Transaction.IsCancelable")
	case "ISSUINGCOUNTRY":
		return r.stringPtrField(&t.IssuingCountry, depth, "Transaction.IssuingCountry")
	case "STARTRECURRENT":
		return r.boolField(&t.StartRecurrent, depth, "Transaction.StartRecurrent")
	case "RECURRING":
		return r.boolField(&t.Recurring, depth, "Transaction.Recurring")
	case "CUSTOMERNAME":
		return r.stringPtrField(&t.CustomerName, depth, "Transaction.CustomerName")
	case "PAYERHASH":
		return r.stringPtrField(&t.PayerHash, depth, "Transaction.PayerHash")
	case "PAYMENTKEY":
		return r.stringPtrField(&t.PaymentKey, depth, "Transaction.PaymentKey")
	}
	_, err := r.skip(depth)
	return err
}

func statusMember(r *jsonReader, v any, key []byte, depth int) error {
	s := v.(*Status)
	switch string(key) {
	case "CODE":
		return r.object(&s.Code, depth, "Status.Code", codeMember)
	case "SUBCODE":
		return structPtr(r, &s.SubCode, depth, "Status.SubCode", subCodeMember)
	case "DATETIME":
		raw, text, err := r.skipText(depth)
		if err != nil {
			return err
		}
		// DateTime.UnmarshalJSON, without its reflection for the usual plain string.
		plain, ok := plainText(text)
		switch {
		case !ok:
			return s.DateTime.UnmarshalJSON(raw)
		case plain == "":
			s.DateTime = DateTime{}
			return nil
		}
		dt, err := ParseDateTime(plain)
		if err != nil {
			return err
		}
		s.DateTime = dt
		return nil
	}
	_, err := r.skip(depth)
	return err
}

func codeMember(r *jsonReader, v any, key []byte, depth int) error {
	c := v.(*Code)
	switch string(key) {
	case "CODE":
		return r.intField(&c.Code, depth, "Status.Code.Code")
	case "DESCRIPTION":
		return r.stringField(&c.Description, depth, "Status.Code.Description")
	}
	_, err := r.skip(depth)
	return err
}

func subCodeMember(r *jsonReader, v any, key []byte, depth int) error {
	c := v.(*SubCode)
	switch string(key) {
	case "CODE":
		return r.stringField(&c.Code, depth, "Status.SubCode.Code")
	case "DESCRIPTION":
		return r.stringField(&c.Description, depth, "Status.SubCode.Description")
	}
	_, err := r.skip(depth)
	return err
}

func responseService(r *jsonReader, s *ResponseService, depth int) error {
	return r.object(s, depth, "Services[]", responseServiceMember)
}

func responseServiceMember(r *jsonReader, v any, key []byte, depth int) error {
	s := v.(*ResponseService)
	switch string(key) {
	case "NAME":
		return r.stringField(&s.Name, depth, "Services[].Name")
	case "ACTION":
		return r.stringPtrField(&s.Action, depth, "Services[].Action")
	case "PARAMETERS":
		return slice(r, &s.Parameters, depth, "Services[].Parameters", responseParameter)
	case "VERSIONASPROPERTY":
		return r.intPtrField(&s.VersionAsProperty, depth, "Services[].VersionAsProperty")
	}
	_, err := r.skip(depth)
	return err
}

func responseParameter(r *jsonReader, p *ResponseParameter, depth int) error {
	return r.object(p, depth, "Parameters[]", responseParameterMember)
}

func responseParameterMember(r *jsonReader, v any, key []byte, depth int) error {
	p := v.(*ResponseParameter)
	switch string(key) {
	case "NAME":
		return r.stringField(&p.Name, depth, "Parameters[].Name")
	case "VALUE":
		return r.flexField(&p.Value, depth)
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
	return r.object(nv, depth, "List[]", nameValueMember)
}

func nameValueMember(r *jsonReader, v any, key []byte, depth int) error {
	nv := v.(*NameValue)
	switch string(key) {
	case "NAME":
		return r.stringField(&nv.Name, depth, "List[].Name")
	case "VALUE":
		return r.flexField(&nv.Value, depth)
	}
	_, err := r.skip(depth)
	return err
}

func relatedTransaction(r *jsonReader, rt *RelatedTransaction, depth int) error {
	return r.object(rt, depth, "RelatedTransactions[]", relatedTransactionMember)
}

func relatedTransactionMember(r *jsonReader, v any, key []byte, depth int) error {
	rt := v.(*RelatedTransaction)
	switch string(key) {
	case "RELATIONTYPE":
		return r.stringField(&rt.RelationType, depth, "RelatedTransactions[].RelationType")
	case "RELATEDTRANSACTIONKEY":
		return r.stringField(&rt.RelatedTransactionKey, depth, "RelatedTransactions[].RelatedTransactionKey")
	}
	_, err := r.skip(depth)
	return err
}

// amountField decodes a *Amount: null sets nil, anything else goes through
// Amount.UnmarshalJSON as in encoding/json.
func (r *jsonReader) amountField(dst **Amount, depth int) error {
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
	return (*dst).UnmarshalJSON(raw)
}

// flexField decodes a FlexString: FlexString.UnmarshalJSON, without its
// reflection for the plain forms.
func (r *jsonReader) flexField(dst *FlexString, depth int) error {
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
	return dst.UnmarshalJSON(raw)
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
