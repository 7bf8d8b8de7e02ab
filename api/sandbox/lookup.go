package sandbox

import (
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"paydesk/api"
)

// The lookup endpoints: signed GETs that change nothing.
const (
	lookupTxStatus = iota
	lookupDataStatus
	lookupTxSpec
	lookupDataSpec
	lookupInvoice
)

var lookupPrefixes = []struct {
	prefix string // lower case
	kind   int
}{
	{strings.ToLower(api.PathTransactionStatus), lookupTxStatus},
	{strings.ToLower(api.PathDataRequestStatus), lookupDataStatus},
	{strings.ToLower(api.PathTransactionSpecification), lookupTxSpec},
	{strings.ToLower(api.PathDataRequestSpecification), lookupDataSpec},
	{strings.ToLower(api.PathInvoiceInfo), lookupInvoice},
}

// lookupPath tells whether path is a lookup and returns its kind and the
// name after the prefix (a key, a service or an invoice).
func lookupPath(path string) (kind int, name string, ok bool) {
	for _, l := range lookupPrefixes {
		if len(path) > len(l.prefix) && strings.EqualFold(path[:len(l.prefix)], l.prefix) {
			name = path[len(l.prefix):]
			if strings.Contains(name, "/") {
				return 0, "", false
			}
			return l.kind, name, true
		}
	}
	return 0, "", false
}

// Content hashes some clients sign on a GET although they send no body:
// the Node SDK signs JSON.stringify({}), Magento signs "[]".
var emptyBodyStandIns = [][]byte{[]byte("{}"), []byte("[]")}

func (s *Sandbox) serveLookup(w http.ResponseWriter, r *http.Request, kind int, name string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		plain(w, http.StatusMethodNotAllowed, "Method not allowed", "lookups are GET")
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		plain(w, http.StatusInternalServerError, "Bad request", "reading the body: "+err.Error())
		return
	}
	hostPath := r.Host + r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		hostPath += "?" + r.URL.RawQuery
	}
	auth, err := s.verifier.Verify(r.Header.Get("Authorization"), r.Method, hostPath, body)
	if err != nil && len(body) == 0 && errors.Is(err, api.ErrSignatureMismatch) {
		for _, b := range emptyBodyStandIns {
			if a, err2 := s.verifier.Verify(r.Header.Get("Authorization"), r.Method, hostPath, b); err2 == nil {
				auth, err = a, nil
				break
			}
		}
	}
	if err != nil {
		s.logf("%s GET %s http=400 reason=%q", s.now().Format(time.RFC3339), sanitize(r.URL.Path, 120), sanitize(err.Error(), 300))
		plain(w, http.StatusBadRequest, "Access denied", err.Error())
		return
	}
	creds := s.creds[auth.WebsiteKey]
	var v any
	found := true
	switch kind {
	case lookupTxStatus, lookupDataStatus:
		var resp *api.Response
		resp, found = s.statusOf(auth.WebsiteKey, name, kind == lookupDataStatus)
		v = resp
	case lookupTxSpec, lookupDataSpec:
		v = s.specification(name, kind == lookupDataSpec)
	case lookupInvoice:
		var info *api.InvoiceInfo
		info, found = s.invoiceInfo(auth.WebsiteKey, name)
		v = info
	}
	code := http.StatusOK
	out := []byte("Not found")
	if found {
		if out, err = api.MarshalCanonical(v); err != nil {
			code, out = http.StatusInternalServerError, []byte("Bad request")
		}
	} else {
		code = http.StatusNotFound
	}
	h := w.Header()
	if code == http.StatusOK {
		h.Set("Content-Type", "application/json; charset=utf-8")
	} else {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	h.Set("Authorization", api.Sign(creds, http.MethodGet, hostPath, out, api.NewNonce(), s.now().Unix()).String())
	w.WriteHeader(code)
	_, _ = w.Write(out)
	s.logf("%s GET %s http=%d key=%s", s.now().Format(time.RFC3339), sanitize(r.URL.Path, 120), code, sanitize(name, 40))
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
}

// isDataKind reports whether a record is a data request.
func isDataKind(kind string) bool {
	return kind == kindReserve || kind == kindCancel || kind == kindUpdate
}

// statusOf answers a status lookup: the transaction's current state in
// the response envelope's shape. A key of the other endpoint's kind, or of
// another website key, is not found, as an unknown one.
func (s *Sandbox) statusOf(websiteKey, key string, data bool) (*api.Response, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.txs[key]
	if t == nil || t.WebsiteKey != websiteKey || isDataKind(t.Kind) != data {
		return nil, false
	}
	return s.currentResponse(t), true
}

// currentResponse is a transaction's state now, as a status lookup and
// InvoiceInfo show it. Its time is when the status was last set.
func (s *Sandbox) currentResponse(t *txRecord) *api.Response {
	at := t.Created
	if !t.StatusAt.IsZero() {
		at = t.StatusAt
	}
	if !isDataKind(t.Kind) {
		resp := s.txResponse(t, at)
		return resp
	}
	resp := s.baseResponse(t.Key, t.Service, api.MutationDataRequest, t.Status, t.SubCode, at)
	resp.Invoice = t.Invoice
	resp.Currency = t.Currency
	if t.Kind == kindReserve {
		switch {
		case api.IsPending(t.Status):
			base := s.cfg.PublicBaseURL
			if base == "" {
				base = t.BaseURL
			}
			resp.RequiredAction = &api.RequiredAction{Name: "Redirect", RedirectURL: base + "/sandbox/checkout/" + t.Key}
		case t.Status == api.StatusSuccess:
			resp.Services = []api.ResponseService{{Name: t.Service, Parameters: []api.ResponseParameter{
				{Name: api.PReservationNumber, Value: api.FlexString(t.ReservationNumber)}}}}
		}
	}
	s.echo(t, resp)
	return resp
}

// invoiceInfo lists the website key's transactions of an invoice, oldest
// first.
func (s *Sandbox) invoiceInfo(websiteKey, invoice string) (*api.InvoiceInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ts []*txRecord
	for _, t := range s.byInvoice[invoice] {
		if t.WebsiteKey == websiteKey {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil, false
	}
	sort.Slice(ts, func(i, j int) bool {
		if !ts[i].Created.Equal(ts[j].Created) {
			return ts[i].Created.Before(ts[j].Created)
		}
		return ts[i].Seq < ts[j].Seq
	})
	info := &api.InvoiceInfo{Invoice: invoice}
	for _, t := range ts {
		info.Transactions = append(info.Transactions, api.InvoiceTransaction{Action: s.actionOf(t), Response: *s.currentResponse(t)})
	}
	return info, true
}

// actionOf is the action of the request that made a transaction.
func (s *Sandbox) actionOf(t *txRecord) string {
	switch t.Kind {
	case kindReserve, kindCancel, kindUpdate:
		return t.Kind
	case api.TypeDeferredRefund, api.TypeGiftCardRefund:
		return api.ActionRefund
	}
	if g := s.groups[t.Group]; g != nil && len(g.Parts) > 0 && g.Parts[0] != t.Key {
		return api.ActionPayRemainder
	}
	return api.ActionPay
}
