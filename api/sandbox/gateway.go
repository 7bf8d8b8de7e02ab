package sandbox

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"paydesk/api"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// Sub code texts.
var subCodeText = map[string]string{
	api.SubCodeProcessed:      "Transaction successfully processed",
	api.SubCodeRedirect:       "An additional action is required: redirect the customer",
	api.SubCodePartialPayment: "A partial payment of an amount was performed on a requested amount",
}

func status(code int, sub string, t time.Time, push bool) api.Status {
	st := api.Status{Code: api.Code{Code: code, Description: api.StatusText(code)}, DateTime: api.NewDateTime(t, push)}
	if sub != "" {
		st.SubCode = &api.SubCode{Code: sub, Description: subCodeText[sub]}
	}
	return st
}

// refusal is a state error: the request is well formed but the state does
// not allow it. It is answered like a validation failure (491), nothing
// created.
type refusal struct{ fields []api.FieldError }

func (r *refusal) Error() string { return (&api.ValidationError{Fields: r.fields}).Error() }

func (r *refusal) add(group, field, rule string) {
	r.fields = append(r.fields, api.FieldError{Group: group, Field: field, Rule: rule})
}

func (r *refusal) orNil() error {
	if r == nil || len(r.fields) == 0 {
		return nil
	}
	return r
}

func refuse(field, rule string) error {
	return &refusal{fields: []api.FieldError{{Field: field, Rule: rule}}}
}

func (s *Sandbox) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.serveIndex)
	m.HandleFunc("GET /sandbox", s.serveIndex)
	m.HandleFunc("GET /sandbox/cards", s.serveCards)
	m.HandleFunc("GET /sandbox/checkout/{key}", s.serveCheckout)
	m.HandleFunc("POST /sandbox/checkout/{key}/{verb}", s.serveCheckoutAction)
	m.HandleFunc("GET /sandbox/giftcard/{key}", s.serveGiftCardPage)
	m.HandleFunc("POST /sandbox/giftcard/{key}/{verb}", s.serveGiftCardAction)
	m.HandleFunc("GET "+PathStatement, s.serveStatement)
	m.HandleFunc(PathAdminResend+"{key}", s.serveAdmin)
	m.HandleFunc(PathAdminPushes+"{key}", s.serveAdmin)
	s.mux = m
}

// ServeHTTP serves the two gateway endpoints (with or without a trailing
// slash) and the sandbox's own pages under /sandbox/.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if kind, name, ok := lookupPath(p); ok {
		s.serveLookup(w, r, kind, name)
		return
	}
	switch {
	case strings.EqualFold(p, api.PathTransaction):
		s.serveGateway(w, r, api.PathTransaction, false)
	case strings.EqualFold(p, api.PathDataRequest):
		s.serveGateway(w, r, api.PathDataRequest, false)
	case strings.EqualFold(p, PathAdminBackOffice+api.PathTransaction):
		s.serveGateway(w, r, api.PathTransaction, true)
	case strings.EqualFold(p, PathAdminBackOffice+api.PathDataRequest):
		s.serveGateway(w, r, api.PathDataRequest, true)
	default:
		s.mux.ServeHTTP(w, r)
	}
}

// exchange is what one gateway request did, for the log line.
type exchange struct {
	action string
	http   int
	status int
	key    string
	reason string
}

// serveGateway serves a request to a gateway endpoint; backOffice is the
// merchant acting in the gateway's own back office (PathAdminBackOffice):
// the same operation, and no push for it.
func (s *Sandbox) serveGateway(w http.ResponseWriter, r *http.Request, endpoint string, backOffice bool) {
	var ex exchange
	defer func() {
		if s.cfg.Logf == nil {
			return
		}
		reason := ex.reason
		if reason == "" {
			reason = "-"
		}
		action, key := ex.action, ex.key
		if action == "" {
			action = "-"
		}
		if key == "" {
			key = "-"
		}
		s.logf("%s %s %s %s http=%d status=%d key=%s reason=%q", s.now().Format(time.RFC3339), r.Method,
			sanitize(r.URL.Path, 120), sanitize(action, 40), ex.http, ex.status, key, sanitize(reason, 300))
	}()
	if r.Method != http.MethodPost {
		ex.http, ex.reason = http.StatusMethodNotAllowed, "only POST"
		w.Header().Set("Allow", http.MethodPost)
		plain(w, ex.http, "Method not allowed", ex.reason)
		return
	}
	fail492, answered := s.chaosRequest(w, &ex)
	if answered {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		ex.http, ex.reason = http.StatusInternalServerError, "reading the body: "+err.Error()
		plain(w, ex.http, "Bad request", ex.reason)
		return
	}
	hostPath := r.Host + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		hostPath += "?" + r.URL.RawQuery
	}
	auth, err := s.verifier.Verify(r.Header.Get("Authorization"), r.Method, hostPath, body)
	if err != nil {
		ex.http, ex.reason = http.StatusBadRequest, err.Error()
		plain(w, ex.http, "Access denied", ex.reason)
		return
	}
	creds := s.creds[auth.WebsiteKey]
	sign := func(b []byte) string {
		return api.Sign(creds, http.MethodPost, hostPath, b, api.NewNonce(), s.now().Unix()).String()
	}
	req, err := api.DecodeRequest(body)
	if err != nil {
		ex.http, ex.reason = http.StatusInternalServerError, err.Error()
		msg := []byte("Bad request")
		w.Header().Set("Authorization", sign(msg))
		plain(w, ex.http, string(msg), ex.reason)
		return
	}
	svc := req.Service()
	ex.action = svc.Action
	var resp *api.Response
	if fail492 { // chaos: a technical failure, nothing created
		ex.reason = "chaos: 492"
		resp = s.baseResponse(s.ids.keyLocked(&s.mu), svc.Name, mutationFor(endpoint, svc.Name), api.StatusTechnicalFailure, "", s.now())
	} else {
		resp = s.handle(r, auth.WebsiteKey, req, endpoint, backOffice, &ex)
	}
	out, err := api.MarshalCanonical(resp)
	if err != nil { // cannot happen with these types; answer as a technical failure
		ex.http, ex.reason = http.StatusInternalServerError, "encode response: "+err.Error()
		plain(w, ex.http, "Bad request", ex.reason)
		return
	}
	ex.http, ex.status, ex.key = http.StatusOK, resp.Status.Code.Code, resp.Key
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Authorization", sign(out))
	if ex.reason != "" {
		h.Set("X-Paydesk-Reason", sanitize(ex.reason, 500))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// handle validates and applies a decoded request and returns the response
// to send: 491 for a broken rule or state error, else what the operation
// did.
func (s *Sandbox) handle(r *http.Request, websiteKey string, req *api.Request, endpoint string, backOffice bool, ex *exchange) *api.Response {
	svc := req.Service()
	path := r.URL.Path
	if backOffice {
		path = path[len(PathAdminBackOffice):] // the endpoint the back office stands in for
	}
	op, err := api.ParseOperation(req, path, s.rules)
	if fe := api.ChannelRule(svc.Name, r.Header.Get("Channel")); len(fe) > 0 {
		var ve *api.ValidationError
		if !errors.As(err, &ve) {
			ve = &api.ValidationError{Action: svc.Action}
		}
		ve.Fields = append(fe, ve.Fields...)
		err = ve
	}
	if err != nil {
		var ve *api.ValidationError
		if !errors.As(err, &ve) {
			ve = &api.ValidationError{Action: svc.Action, Fields: []api.FieldError{{Field: api.FieldAction, Rule: err.Error()}}}
		}
		ex.reason = ve.Error()
		return s.validationFailure(svc.Name, endpoint, ve)
	}
	if req.PushURL != "" && !isWebURL(req.PushURL) {
		ve := &api.ValidationError{Action: svc.Action, Fields: []api.FieldError{{Field: "PushURL", Rule: "must be an absolute http(s) URL"}}}
		ex.reason = ve.Error()
		return s.validationFailure(svc.Name, endpoint, ve)
	}
	c := call{websiteKey: websiteKey, req: req, base: s.baseURL(r), now: s.now()}
	var resp *api.Response
	s.mu.Lock()
	if s.closed {
		err = ErrClosed
	} else {
		s.backOffice = backOffice
		resp, err = s.apply(c, op)
		s.backOffice = false
		_ = s.flushLocked() // logged; memory stays the truth while running
	}
	s.mu.Unlock()
	if err != nil {
		var rf *refusal
		if errors.As(err, &rf) {
			ve := &api.ValidationError{Action: svc.Action, Fields: rf.fields}
			ex.reason = ve.Error()
			return s.validationFailure(svc.Name, endpoint, ve)
		}
		ex.reason = err.Error()
		resp := s.baseResponse(s.ids.keyLocked(&s.mu), svc.Name, mutationFor(endpoint, svc.Name), api.StatusTechnicalFailure, "", c.now)
		return resp
	}
	s.wakeUp()
	return resp
}

// call is what every operation needs to know about its request.
type call struct {
	websiteKey string
	req        *api.Request
	base       string
	now        time.Time
}

func (s *Sandbox) apply(c call, op api.Operation) (*api.Response, error) {
	switch o := op.(type) {
	case api.Reserve:
		return s.reserve(c, o), nil
	case api.Capture:
		return s.capture(c, o)
	case api.CancelReservation:
		return s.cancel(c, o)
	case api.UpdateReservation:
		return s.update(c, o)
	case api.Refund:
		return s.refund(c, o)
	case api.GiftCardPay:
		return s.giftCardPay(c, o)
	case api.GiftCardRefund:
		return s.giftCardRefund(c, o)
	}
	return nil, refuse(api.FieldAction, "not supported by the sandbox")
}

func mutationFor(endpoint, service string) int {
	switch {
	case endpoint == api.PathDataRequest:
		return api.MutationDataRequest
	case strings.EqualFold(service, api.ServiceDeferred):
		return api.MutationDeferred
	}
	return api.MutationGiftCard
}

// validationFailure is the 491 answer; the key it carries is not stored.
func (s *Sandbox) validationFailure(service, endpoint string, ve *api.ValidationError) *api.Response {
	resp := s.baseResponse(s.ids.keyLocked(&s.mu), service, mutationFor(endpoint, service), api.StatusValidationFailure, "", s.now())
	resp.RequestErrors = ve.RequestErrors(service)
	return resp
}

func (s *Sandbox) baseResponse(key, service string, mutation int, code int, sub string, now time.Time) *api.Response {
	return &api.Response{Key: key, Status: status(code, sub, now, false), ServiceCode: service, IsTest: true, MutationType: mutation}
}

func (s *Sandbox) baseURL(r *http.Request) string {
	if s.cfg.PublicBaseURL != "" {
		return s.cfg.PublicBaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// plain writes a text answer; the reason goes into X-Paydesk-Reason for the
// developer (it never holds the secret).
func plain(w http.ResponseWriter, code int, body, reason string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if reason != "" {
		h.Set("X-Paydesk-Reason", sanitize(reason, 500))
	}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

// sanitize keeps untrusted text to one line of printable ASCII of at most n
// bytes, safe for a header, a log line and a terminal.
func sanitize(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= n {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r >= 0x7f {
			b.WriteByte('?')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
