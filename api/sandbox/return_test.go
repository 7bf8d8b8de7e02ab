package sandbox

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"paydesk/api"
)

var (
	returnAction = regexp.MustCompile(`<form id="return" method="post" action="([^"]*)">`)
	hiddenField  = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
)

// returnPage parses the page that posts the customer back to the shop.
func returnPage(t *testing.T, body string) (string, url.Values) {
	t.Helper()
	m := returnAction.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no return form in %s", body)
	}
	v := url.Values{}
	for _, f := range hiddenField.FindAllStringSubmatch(body, -1) {
		v.Set(html.UnescapeString(f[1]), html.UnescapeString(f[2]))
	}
	return html.UnescapeString(m[1]), v
}

// postedNames are the return form's field names in the order the browser
// posts them.
func postedNames(body string) []string {
	var names []string
	for _, f := range hiddenField.FindAllStringSubmatch(body, -1) {
		names = append(names, html.UnescapeString(f[1]))
	}
	return names
}

// postedOrderSignature hashes a return form as the family's Node SDK does:
// every field but brq_signature, name=value in the order posted, then the
// secret key; it neither filters nor sorts.
func postedOrderSignature(body, secret string) string {
	h := sha1.New()
	for _, f := range hiddenField.FindAllStringSubmatch(body, -1) {
		name := html.UnescapeString(f[1])
		if strings.EqualFold(name, api.ReplySignatureField) {
			continue
		}
		h.Write([]byte(name + "=" + html.UnescapeString(f[2])))
	}
	h.Write([]byte(secret))
	return hex.EncodeToString(h.Sum(nil))
}

// The checkout's buttons send the customer back to the page the shop named
// for the outcome, with the family's signed brq_* reply.
func TestCheckoutReturnsToTheShop(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct {
		verb, lastName string
		code           int
		target         string
	}{
		{"approve", "Jansen", api.StatusSuccess, "https://shop.example/return?order=1"},
		{"approve", "Decline", api.StatusRejected, "https://shop.example/reject"},
		{"decline", "Jansen", api.StatusRejected, "https://shop.example/reject"},
		{"cancel", "Jansen", api.StatusCancelledByConsumer, "https://shop.example/cancel"},
		{"fail", "Jansen", api.StatusFailed, "https://shop.example/error"},
	} {
		t.Run(c.verb+"-"+c.lastName, func(t *testing.T) {
			req := reserveOp("INV-RET-"+c.verb, c.lastName).Request()
			req.ReturnURL = "https://shop.example/return?order=1"
			req.ReturnURLReject = "https://shop.example/reject"
			req.ReturnURLCancel = "https://shop.example/cancel"
			req.ReturnURLError = "https://shop.example/error"
			req.Order = "ORDER <1> & \"2\""
			req.AdditionalParameters = &api.ParamList{AdditionalParameter: []api.NameValue{{Name: "initiated_by", Value: "shop"}}}
			req.CustomParameters = &api.ParamList{List: []api.NameValue{{Name: "cart", Value: "42"}}}
			resp, err := e.client.Do(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			r, err := http.Post(resp.RequiredAction.RedirectURL+"/"+c.verb, "application/x-www-form-urlencoded", strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			if r.StatusCode != http.StatusOK || !strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'nonce-") {
				t.Fatalf("return page: HTTP %d, CSP %q", r.StatusCode, r.Header.Get("Content-Security-Policy"))
			}
			action, fields := returnPage(t, string(b))
			if action != c.target {
				t.Fatalf("posts to %s, want %s", action, c.target)
			}
			if err := api.VerifyReply(fields, testCreds.SecretKey); err != nil {
				t.Fatalf("reply signature: %v (%v)", err, fields)
			}
			if got, want := postedOrderSignature(string(b), testCreds.SecretKey), fields.Get(api.ReplySignatureField); got != want {
				t.Errorf("hashed in the order posted (as the Node SDK does) %s, brq_signature %s: fields %v", got, want, postedNames(string(b)))
			}
			want := map[string]string{
				"brq_statuscode": itoa(c.code), "brq_datarequest": resp.Key, "brq_invoicenumber": req.Invoice,
				"brq_ordernumber": req.Order, "brq_amount": "30.45", "brq_currency": "EUR", "brq_test": "true",
				"brq_websitekey": testCreds.WebsiteKey, "brq_primary_service": "deferredkp",
				"add_initiated_by": "shop", "cust_cart": "42",
			}
			for k, v := range want {
				if fields.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, fields.Get(k), v)
				}
			}
			number := fields.Get("brq_SERVICE_deferredkp_ReservationNumber")
			if (c.code == api.StatusSuccess) != (number != "") {
				t.Errorf("reservation number %q with status %d", number, c.code)
			}
			p := e.rc.nextFor(resp.Key)
			if got := p.push.Status().Code.Code; got != c.code {
				t.Errorf("push status %d, want %d", got, c.code)
			}
		})
	}

	// Without a ReturnURL the browser goes back to the checkout page.
	resp, err := e.client.Send(context.Background(), reserveOp("INV-RET-NONE", "Jansen"))
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Post(resp.RequiredAction.RedirectURL+"/approve", "application/x-www-form-urlencoded", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/sandbox/checkout/"+resp.Key {
		t.Fatalf("approve without ReturnURL: %d to %q", r.StatusCode, r.Header.Get("Location"))
	}
}
