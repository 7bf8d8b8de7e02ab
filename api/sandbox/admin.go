package sandbox

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"paydesk/api"
)

// The admin endpoints let a developer's tools drive a standalone sandbox
// the way the console drives the embedded one. They are signed like the
// gateway endpoints (same scheme, the website key that owns the
// transaction), so only the merchant can use them:
//
//	POST /sandbox/admin/resend/{key}  send the pushes of key again
//	GET  /sandbox/admin/pushes/{key}  the push bodies made for key
//	POST /sandbox/admin/backoffice/json/Transaction   the gateway's own back
//	POST /sandbox/admin/backoffice/json/DataRequest   office: a request as to the
//	                                                  gateway, and no push for it
//
// The back office is how a capture, refund or cancel made outside paydesk
// (the gateway's back office, a shop's back end whose push URL is the shop)
// is tried against the sandbox: paydesk learns it only with `paydesk sync`.
const (
	PathAdminResend     = "/sandbox/admin/resend/"
	PathAdminPushes     = "/sandbox/admin/pushes/"
	PathAdminBackOffice = "/sandbox/admin/backoffice"
)

// AdminPushes is the answer of both admin endpoints: the key and its push
// bodies, oldest first, as they were sent.
type AdminPushes struct {
	Key    string
	Pushes []json.RawMessage
}

func (s *Sandbox) serveAdmin(w http.ResponseWriter, r *http.Request) {
	resend := strings.HasPrefix(r.URL.Path, PathAdminResend)
	key := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, PathAdminResend), PathAdminPushes)
	want := http.MethodGet
	if resend {
		want = http.MethodPost
	}
	if r.Method != want {
		w.Header().Set("Allow", want)
		plain(w, http.StatusMethodNotAllowed, "Method not allowed", "use "+want)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		plain(w, http.StatusInternalServerError, "Bad request", "reading the body: "+err.Error())
		return
	}
	hostPath := r.Host + r.URL.EscapedPath()
	auth, err := s.verifier.Verify(r.Header.Get("Authorization"), r.Method, hostPath, body)
	if err != nil {
		plain(w, http.StatusBadRequest, "Access denied", err.Error())
		return
	}
	s.mu.Lock()
	t := s.txs[key]
	var out AdminPushes
	found := t != nil && t.WebsiteKey == auth.WebsiteKey
	if found {
		out.Key = t.Key
		for _, p := range t.Pushes {
			out.Pushes = append(out.Pushes, json.RawMessage(p))
		}
	}
	s.mu.Unlock()
	code := http.StatusOK
	reason := ""
	switch {
	case !found:
		code, reason = http.StatusNotFound, "no transaction with this key"
	case resend:
		if err := s.Resend(key); err != nil {
			code, reason = http.StatusConflict, err.Error()
			if errors.Is(err, ErrUnknownKey) {
				code = http.StatusNotFound
			}
		}
	}
	var b []byte
	if code == http.StatusOK {
		if out.Pushes == nil {
			out.Pushes = []json.RawMessage{}
		}
		b, _ = api.MarshalCanonical(out)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	} else {
		b = []byte(reason)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Paydesk-Reason", sanitize(reason, 300))
	}
	w.Header().Set("Authorization", api.Sign(s.credsFor(auth.WebsiteKey), r.Method, hostPath, b, api.NewNonce(), s.now().Unix()).String())
	w.WriteHeader(code)
	_, _ = w.Write(b)
	s.logf("%s %s %s http=%d key=%s", s.now().Format(time.RFC3339), r.Method, sanitize(r.URL.Path, 120), code, sanitize(key, 40))
}
