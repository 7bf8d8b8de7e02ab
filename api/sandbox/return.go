package sandbox

import (
	"net/url"
	"strconv"
	"time"

	"paydesk/api"
)

// returnURLs are where the customer goes back to after the checkout when
// the outcome is not a success; "" falls back to ReturnURL.
type returnURLs struct {
	Cancel string `json:",omitempty"`
	Error  string `json:",omitempty"`
	Reject string `json:",omitempty"`
}

func returnURLsOf(req *api.Request) returnURLs {
	if req == nil {
		return returnURLs{}
	}
	return returnURLs{Cancel: req.ReturnURLCancel, Error: req.ReturnURLError, Reject: req.ReturnURLReject}
}

// returnTarget picks the shop page for a checkout's final status: success
// to ReturnURL, a cancel (890/891) to ReturnURLCancel, a rejection (690)
// to ReturnURLReject, any other failure to ReturnURLError, each falling
// back to ReturnURL as the family does.
func returnTarget(res *reservation, code int) string {
	var u string
	switch code {
	case api.StatusSuccess:
	case api.StatusCancelledByConsumer, api.StatusCancelledByMerchant:
		u = res.Return.Cancel
	case api.StatusRejected:
		u = res.Return.Reject
	default:
		u = res.Return.Error
	}
	if u == "" {
		u = res.ReturnURL
	}
	if !isWebURL(u) {
		return ""
	}
	return u
}

// customerReturn is where the customer goes back to after the checkout and
// the fields the browser posts there: the family's brq_* reply of a data
// request, the merchant's AdditionalParameters as add_* and
// CustomParameters as cust_* fields, signed with brq_signature. A shop
// verifies them with its SDK's reply handler. Called with s.mu held.
func (s *Sandbox) customerReturn(res *reservation, tx *txRecord, now time.Time) (string, map[string]string) {
	target := returnTarget(res, tx.Status)
	if target == "" {
		return "", nil
	}
	creds := s.credsFor(res.WebsiteKey)
	v := url.Values{}
	v.Set("brq_amount", res.total().StringFixed(2))
	v.Set("brq_currency", res.Currency)
	v.Set("brq_datarequest", tx.Key)
	v.Set("brq_invoicenumber", res.Invoice)
	if tx.Echo.Order != "" {
		v.Set("brq_ordernumber", tx.Echo.Order)
	}
	v.Set("brq_primary_service", tx.Service)
	v.Set("brq_statuscode", itoa(tx.Status))
	msg := api.StatusText(tx.Status)
	if tx.SubCode != "" {
		v.Set("brq_statuscode_detail", tx.SubCode)
		msg = subCodeText[tx.SubCode]
	}
	v.Set("brq_statusmessage", msg)
	if tx.Status == api.StatusSuccess {
		v.Set("brq_SERVICE_"+tx.Service+"_ReservationNumber", res.Number)
	}
	v.Set("brq_test", "true")
	v.Set("brq_timestamp", now.Format(api.ReplyTimeLayout))
	v.Set("brq_websitekey", creds.WebsiteKey)
	for _, p := range tx.Echo.Additional {
		v.Set("add_"+p.Name, string(p.Value))
	}
	for _, p := range tx.Echo.Custom {
		v.Set("cust_"+p.Name, string(p.Value))
	}
	api.SignReply(v, creds.SecretKey)
	out := make(map[string]string, len(v))
	for k := range v {
		out[k] = v.Get(k)
	}
	return target, out
}

func itoa(n int) string { return strconv.Itoa(n) }
