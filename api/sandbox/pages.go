package sandbox

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"paydesk/api"
)

// The sandbox's own pages stand in for the customer's checkout and the
// gift card remainder page. Every value from a request is escaped by
// html/template.
var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"money": func(d decimal.Decimal) string { return d.StringFixed(2) },
	"mul":   func(d decimal.Decimal, q int) string { return d.Mul(decimal.NewFromInt(int64(q))).StringFixed(2) },
}).Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.}} · paydesk sandbox</title><style>
body{font:15px/1.45 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{padding:.3rem .5rem;border-bottom:1px solid #ddd;text-align:left}
td.n,th.n{text-align:right}.note{color:#666;font-size:.9em}form{display:inline-block;margin:.5rem .5rem 0 0}
button{font-size:1rem;padding:.4rem 1.2rem}.ok{color:#17682d}.bad{color:#a1261b}input,select{font-size:1rem;padding:.2rem}
</style></head><body><p class="note">paydesk sandbox — test transactions only</p>{{end}}

{{define "checkout"}}{{template "head" "Checkout"}}
<h1>Checkout</h1>
<p>Invoice <b>{{.Invoice}}</b> · {{.Customer}} · {{.Country}}</p>
<table><tr><th>Article</th><th>Title</th><th class="n">Qty</th><th class="n">Price</th><th class="n">Total</th></tr>
{{range .Lines}}<tr><td>{{.Number}}</td><td>{{.Title}}</td><td class="n">{{.Quantity}}</td><td class="n">{{money .Price}}</td><td class="n">{{mul .Price .Quantity}}</td></tr>
{{end}}<tr><th colspan="4">Total {{.Currency}}</th><th class="n">{{money .Total}}</th></tr></table>
{{if eq .State "pending"}}
<form method="post" action="{{.Key}}/approve"><button id="approve">Approve</button></form>
<form method="post" action="{{.Key}}/decline"><button id="decline">Decline</button></form>
<form method="post" action="{{.Key}}/cancel"><button id="cancel">Cancel and go back</button></form>
<form method="post" action="{{.Key}}/fail"><button id="fail">Fail</button></form>
<p class="note">Approve runs the sandbox's risk check: a billing last name of “Decline” is declined (690).
Decline is the provider refusing the customer (690), Cancel the customer giving up (890), Fail a failed checkout (490).
Afterwards the browser goes back to the shop with the result.</p>
{{else if eq .State "declined"}}<p class="bad">Declined (690).</p>
{{else}}<p class="ok">Approved (190), reservation {{.Number}}.</p>{{end}}
</body></html>{{end}}

{{define "giftcard"}}{{template "head" "Gift card remainder"}}
<h1>Pay the rest</h1>
<p>Invoice <b>{{.Invoice}}</b> · total {{money .Total}} {{.Currency}} · paid {{money .Paid}}</p>
<table><tr><th>Part</th><th>Type</th><th>Service</th><th>Card</th><th class="n">Amount</th></tr>
{{range .Parts}}<tr><td>{{.Key}}</td><td>{{.Type}}</td><td>{{.Service}}</td><td>{{.Card}}</td><td class="n">{{money .Amount}}</td></tr>
{{end}}</table>
{{if .Remainder.IsPositive}}
<h2>Remainder: {{money .Remainder}} {{.Currency}}</h2>
<form method="post" action="{{.Key}}/card">
<label>Provider <select name="provider"><option value="A">voucher A</option><option value="B">voucher B</option>
<option value="C">voucher C</option><option value="custom">custom card</option></select></label>
<label>Card <input name="number" size="21" autocomplete="off"></label>
<label>PIN <input name="pin" size="6" autocomplete="off"></label>
<button>Pay with this card</button></form>
<form method="post" action="{{.Key}}/transfer"><button>Pay by bank transfer</button></form>
{{else}}<p class="ok">Paid in full.</p>{{end}}
</body></html>{{end}}

{{define "return"}}{{template "head" "Back to the shop"}}
<h1>Back to the shop</h1>
<p>Reservation {{.Key}}: status {{.Status}}. Your browser now posts the result to the shop.</p>
<form id="return" method="post" action="{{.URL}}">
{{range .Fields}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<button id="continue">Continue to the shop</button></form>
<script nonce="{{.Nonce}}">document.getElementById("return").submit();</script>
</body></html>{{end}}

{{define "index"}}{{template "head" "Sandbox"}}
<h1>paydesk sandbox</h1>
<p>Gateway endpoints: <code>POST /json/Transaction</code>, <code>POST /json/DataRequest</code>.</p>
<h2>Gift cards</h2>
<table><tr><th>Service</th><th>Provider</th><th>Card</th><th>PIN</th><th class="n">Balance</th></tr>
<tr><td>any</td><td>any</td><td>0000000000000000001</td><td>balance in cents</td><td class="n">PIN/100</td></tr>
{{range .}}<tr><td>{{.ServiceCode}}</td><td>{{.Provider}}</td><td>{{.Number}}</td><td>{{.PIN}}</td><td class="n">{{money .Balance}} {{.Currency}}</td></tr>
{{end}}</table></body></html>{{end}}
`))

// checkoutView is what the checkout page shows.
type checkoutView struct {
	Key, Number, State, Invoice, Currency, Customer, Country string
	Lines                                                    []line
	Total                                                    decimal.Decimal
}

func (s *Sandbox) serveIndex(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "index", s.Cards())
}

func (s *Sandbox) serveCards(w http.ResponseWriter, r *http.Request) {
	type cardJSON struct {
		ServiceCode, Provider, Number, PIN, Currency string
		Balance                                      *api.Amount
	}
	var out []cardJSON
	for _, c := range s.Cards() {
		out = append(out, cardJSON{c.ServiceCode, string(c.Provider), c.Number, c.PIN, c.Currency, api.NewAmount(c.Balance)})
	}
	s.writeJSON(w, r, http.StatusOK, out, 0)
}

func (s *Sandbox) serveCheckout(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	s.mu.Lock()
	res := s.resByKey[key]
	var v checkoutView
	if res != nil {
		v = checkoutView{Key: res.Key, Number: res.Number, State: res.State, Invoice: res.Invoice, Currency: res.Currency,
			Customer: strings.TrimSpace(res.Billing.FirstName + " " + res.Billing.LastName), Country: res.Billing.Country,
			Lines: append([]line(nil), res.Lines...), Total: res.total()}
	}
	s.mu.Unlock()
	if res == nil {
		s.pageError(w, r, http.StatusNotFound, "no reservation with this key")
		return
	}
	s.render(w, r, "checkout", v)
}

func (s *Sandbox) serveCheckoutAction(w http.ResponseWriter, r *http.Request) {
	key, verb := r.PathValue("key"), r.PathValue("verb")
	if _, ok := checkoutStatus(verb); !ok {
		s.pageError(w, r, http.StatusNotFound, "unknown action (approve, decline, cancel or fail)")
		return
	}
	out, err := s.finishCheckout(r.Context(), key, verb)
	switch {
	case errors.Is(err, ErrUnknownKey):
		s.pageError(w, r, http.StatusNotFound, "no reservation with this key")
		return
	case errors.Is(err, ErrNotPending):
		s.pageError(w, r, http.StatusConflict, err.Error())
		return
	case err != nil:
		s.pageError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	if isForm(r) { // a browser: back to the shop with the result, or to the page
		if out.ReturnURL != "" {
			s.renderReturn(w, r, out)
			return
		}
		s.logPage(r, http.StatusSeeOther, verb, out.Status, key)
		http.Redirect(w, r, "/sandbox/checkout/"+url.PathEscape(key), http.StatusSeeOther)
		return
	}
	s.writeJSON(w, r, http.StatusOK, out, out.Status)
}

func (s *Sandbox) serveGiftCardPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.groupView(r.PathValue("key"))
	if !ok {
		s.pageError(w, r, http.StatusNotFound, "no partial gift card payment with this key")
		return
	}
	s.render(w, r, "giftcard", v)
}

// giftCardForm is the remainder page's card form, also accepted as JSON.
type giftCardForm struct {
	Provider, Number, Pin, Service string
}

func (s *Sandbox) serveGiftCardAction(w http.ResponseWriter, r *http.Request) {
	key, verb := r.PathValue("key"), r.PathValue("verb")
	base := s.baseURL(r)
	var resp *api.Response
	var err error
	switch verb {
	case "card":
		var f giftCardForm
		if isForm(r) {
			if err := r.ParseForm(); err != nil {
				s.pageError(w, r, http.StatusBadRequest, "unreadable form")
				return
			}
			f = giftCardForm{Provider: r.PostForm.Get("provider"), Number: r.PostForm.Get("number"), Pin: r.PostForm.Get("pin"), Service: r.PostForm.Get("service")}
		} else if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&f); err != nil {
			s.pageError(w, r, http.StatusBadRequest, "body must be JSON {\"Provider\",\"Number\",\"Pin\"}")
			return
		}
		var p api.Provider
		switch strings.ToLower(f.Provider) {
		case "a", "b", "c":
			p = api.Provider(strings.ToUpper(f.Provider))
		case "custom":
			p = api.ProviderCustom
		default:
			s.pageError(w, r, http.StatusBadRequest, "provider must be A, B, C or custom")
			return
		}
		service := f.Service
		if service == "" && p == api.ProviderCustom {
			service = "customgiftcard"
		} else if service == "" {
			service = "voucher" + strings.ToLower(string(p))
		}
		resp, err = s.payRemainderByCard(key, base, api.Card{Provider: p, Number: strings.TrimSpace(f.Number), PIN: strings.TrimSpace(f.Pin)}, service)
	case "transfer":
		resp, err = s.payRemainderByTransfer(key, base)
	default:
		s.pageError(w, r, http.StatusNotFound, "unknown action (card or transfer)")
		return
	}
	var rf *refusal
	var ve *api.ValidationError
	switch {
	case errors.Is(err, ErrUnknownKey):
		s.pageError(w, r, http.StatusNotFound, "no partial gift card payment with this key")
		return
	case errors.As(err, &rf), errors.As(err, &ve):
		s.pageError(w, r, http.StatusUnprocessableEntity, err.Error())
		return
	case err != nil:
		s.pageError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	if isForm(r) {
		s.logPage(r, http.StatusSeeOther, verb, resp.Status.Code.Code, resp.Key)
		http.Redirect(w, r, "/sandbox/giftcard/"+url.PathEscape(key), http.StatusSeeOther)
		return
	}
	s.writeJSON(w, r, http.StatusOK, resp, resp.Status.Code.Code)
}

func isForm(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded")
}

func isWebURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (s *Sandbox) render(w http.ResponseWriter, r *http.Request, name string, v any) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:")
	if err := pages.ExecuteTemplate(w, name, v); err != nil {
		s.logf("%s render %s: %v", s.now().Format(time.RFC3339), name, err)
	}
	s.logPage(r, http.StatusOK, "-", 0, r.PathValue("key"))
}

func (s *Sandbox) writeJSON(w http.ResponseWriter, r *http.Request, code int, v any, statusCode int) {
	b, err := api.MarshalCanonical(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"Error":"encode"}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
	s.logPage(r, code, r.PathValue("verb"), statusCode, r.PathValue("key"))
}

func (s *Sandbox) pageError(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if isForm(r) || r.Method == http.MethodGet {
		plain(w, code, msg+"\n", msg)
		s.logPage(r, code, r.PathValue("verb"), 0, r.PathValue("key"))
		return
	}
	b, _ := api.MarshalCanonical(struct{ Error string }{msg})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Paydesk-Reason", sanitize(msg, 500))
	w.WriteHeader(code)
	_, _ = w.Write(b)
	s.logPage(r, code, r.PathValue("verb"), 0, r.PathValue("key"))
}

func (s *Sandbox) logPage(r *http.Request, httpCode int, action string, statusCode int, key string) {
	if s.cfg.Logf == nil {
		return
	}
	if action == "" {
		action = "-"
	}
	if key == "" {
		key = "-"
	}
	s.logf("%s %s %s %s http=%d status=%d key=%s reason=\"-\"", s.now().Format(time.RFC3339), r.Method,
		sanitize(r.URL.Path, 120), sanitize(action, 40), httpCode, statusCode, sanitize(key, 40))
}

// returnView is the page that takes the customer back to the shop: a form
// of the reply fields that posts itself (the family returns the customer
// with a POST), with a button for browsers without scripts.
type returnView struct {
	Key, URL, Nonce string
	Status          int
	Fields          []returnField
}

type returnField struct{ Name, Value string }

func (s *Sandbox) renderReturn(w http.ResponseWriter, r *http.Request, out checkoutResult) {
	v := returnView{Key: out.Key, URL: out.ReturnURL, Nonce: api.NewNonce(), Status: out.Status}
	// The fields in the order the signature sorts them, brq_signature last:
	// the family's Node SDK hashes a posted reply in the order it arrives.
	names := make([]string, 0, len(out.ReturnFields))
	for k := range out.ReturnFields {
		if k != api.ReplySignatureField {
			names = append(names, k)
		}
	}
	api.SortReplyNames(names)
	if _, ok := out.ReturnFields[api.ReplySignatureField]; ok {
		names = append(names, api.ReplySignatureField)
	}
	for _, k := range names {
		v.Fields = append(v.Fields, returnField{k, out.ReturnFields[k]})
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-"+v.Nonce+"'; form-action http: https:")
	if err := pages.ExecuteTemplate(w, "return", v); err != nil {
		s.logf("%s render return: %v", s.now().Format(time.RFC3339), err)
	}
	s.logPage(r, http.StatusOK, r.PathValue("verb"), out.Status, out.Key)
}
