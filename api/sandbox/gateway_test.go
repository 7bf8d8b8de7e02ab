package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"paydesk/api"
)

// rawResult is an HTTP answer of the gateway.
type rawResult struct {
	code   int
	body   []byte
	header http.Header
}

// rawPost posts body to path; sign decides the Authorization header.
func rawPost(t *testing.T, serverURL, path, method string, body []byte, auth string) rawResult {
	t.Helper()
	req, err := http.NewRequest(method, serverURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResult{code: resp.StatusCode, body: b, header: resp.Header}
}

func signFor(serverURL, path string, body []byte, c api.Credentials, ts int64) string {
	u, _ := url.Parse(serverURL)
	return api.Sign(c, http.MethodPost, u.Host+path, body, api.NewNonce(), ts).String()
}

func (e *env) txCount() int {
	e.sb.mu.Lock()
	defer e.sb.mu.Unlock()
	return len(e.sb.txs) + len(e.sb.groups)
}

func giftBody(t *testing.T) []byte {
	b, err := api.MarshalCanonical(api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-RAW", Amount: dec("10"), Card: testCard("1000")}.Request())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The 400 paths: nothing is created and the reason is in X-Paydesk-Reason,
// never the secret.
func TestAccessDenied(t *testing.T) {
	// The sandbox's clock stands still: the window's edges (300 s) are
	// tested exactly, however long the machine takes between requests.
	fixed := time.Now()
	e := newEnv(t, func(c *Config) { c.Now = func() time.Time { return fixed } })
	body := giftBody(t)
	now := fixed.Unix()
	for _, tc := range []struct {
		name, auth, reason string
		body               []byte
	}{
		{"no header", "", "no Authorization", body},
		{"not hmac", "Basic abc", "not \"hmac", body},
		{"wrong secret", signFor(e.srv.URL, api.PathTransaction, body, api.Credentials{WebsiteKey: testCreds.WebsiteKey, SecretKey: "wrong"}, now), "does not match", body},
		{"unknown website key", signFor(e.srv.URL, api.PathTransaction, body, api.Credentials{WebsiteKey: "OTHER", SecretKey: testCreds.SecretKey}, now), "unknown website key", body},
		{"stale timestamp", signFor(e.srv.URL, api.PathTransaction, body, testCreds, now-301), "outside the allowed window", body},
		{"timestamp that overflowed the skew check", signFor(e.srv.URL, api.PathTransaction, body, testCreds, now+9223372037), "outside the allowed window", body},
		{"timestamp 301 s ahead", signFor(e.srv.URL, api.PathTransaction, body, testCreds, now+301), "outside the allowed window", body},
		{"altered body", signFor(e.srv.URL, api.PathTransaction, body, testCreds, now), "does not match", bytes.Replace(body, []byte(`"AmountDebit":10`), []byte(`"AmountDebit":11`), 1)},
		{"signed for another path", signFor(e.srv.URL, api.PathDataRequest, body, testCreds, now), "does not match", body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rawPost(t, e.srv.URL, api.PathTransaction, http.MethodPost, tc.body, tc.auth)
			if r.code != http.StatusBadRequest || string(r.body) != "Access denied" {
				t.Fatalf("got %d %q", r.code, r.body)
			}
			reason := r.header.Get("X-Paydesk-Reason")
			if !strings.Contains(reason, tc.reason) || strings.Contains(reason, testCreds.SecretKey) {
				t.Fatalf("reason %q, want it to mention %q", reason, tc.reason)
			}
		})
	}
	if n := e.txCount(); n != 0 {
		t.Fatalf("refused requests created %d records", n)
	}
	// Through the client, a wrong secret is ErrAccessDenied.
	cl, _ := api.NewClient(api.Config{BaseURL: e.srv.URL, Credentials: api.Credentials{WebsiteKey: testCreds.WebsiteKey, SecretKey: "nope"}})
	if _, err := cl.Send(context.Background(), api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "I", Amount: dec("1"), Card: testCard("100")}); !errors.Is(err, api.ErrAccessDenied) {
		t.Fatalf("client error %v, want ErrAccessDenied", err)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	e := newEnv(t, nil)
	for _, p := range []string{api.PathTransaction, api.PathDataRequest + "/"} {
		r := rawPost(t, e.srv.URL, p, http.MethodGet, nil, "")
		if r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != http.MethodPost {
			t.Fatalf("GET %s: %d", p, r.code)
		}
	}
}

// The 500 path: a validly signed body that is no envelope. The answer is
// signed like every answer after the signature check.
func TestBadRequest(t *testing.T) {
	e := newEnv(t, nil)
	for _, body := range []string{``, `[]`, `{"Currency":"EUR"}`, `{"Services":{"ServiceList":[]}}`, `{"Currency":1}`, `{} {}`, `not json`} {
		b := []byte(body)
		r := rawPost(t, e.srv.URL, api.PathTransaction, http.MethodPost, b, signFor(e.srv.URL, api.PathTransaction, b, testCreds, time.Now().Unix()))
		if r.code != http.StatusInternalServerError || string(r.body) != "Bad request" || r.header.Get("X-Paydesk-Reason") == "" {
			t.Fatalf("body %q: %d %q", body, r.code, r.body)
		}
		u, _ := url.Parse(e.srv.URL)
		if _, err := api.VerifierFor(testCreds).Verify(r.header.Get("Authorization"), http.MethodPost, u.Host+api.PathTransaction, r.body); err != nil {
			t.Fatalf("500 answer not signed: %v", err)
		}
	}
	big := append([]byte(`{"Currency":"EUR","Invoice":"`), bytes.Repeat([]byte("x"), maxBody)...)
	big = append(big, `"}`...)
	r := rawPost(t, e.srv.URL, api.PathTransaction, http.MethodPost, big, signFor(e.srv.URL, api.PathTransaction, big, testCreds, time.Now().Unix()))
	if r.code != http.StatusInternalServerError {
		t.Fatalf("body above 1 MiB: %d", r.code)
	}
	if n := e.txCount(); n != 0 {
		t.Fatalf("bad requests created %d records", n)
	}
}

// The 491 path: the api package's validation, answered with RequestErrors;
// nothing created.
func TestValidationFailure(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	bad := reserveOp("INV-V", "Jansen")
	bad.Billing.Email = "not-an-address"
	bad.Customer.OperatingCountry = "DE"
	resp, err := e.client.Do(ctx, bad.Request()) // Do skips local validation
	var ve *api.ValidationError
	if !errors.As(err, &ve) || resp == nil {
		t.Fatalf("want ValidationError, got %v", err)
	}
	wantStatus(t, resp, api.StatusValidationFailure, "")
	wantKey(t, resp.Key)
	re := resp.RequestErrors
	if re == nil || len(re.ParameterErrors) != 2 || re.ChannelErrors == nil || re.ServiceErrors == nil || re.ActionErrors == nil || re.CustomParameterErrors == nil {
		t.Fatalf("RequestErrors %+v", re)
	}
	for _, p := range re.ParameterErrors {
		if p.Service != api.ServiceDeferred || p.Action != api.ActionReserve || p.Error == "" || p.ErrorMessage == "" {
			t.Errorf("parameter error %+v", p)
		}
	}
	if !ve.Has("BillingEmail") || !ve.Has(api.POperatingCountry) {
		t.Fatalf("errors %v", err)
	}
	// An unknown service and an action on the wrong endpoint.
	req := api.GiftCardPay{ServiceCode: "nosuchcard", Currency: "EUR", Invoice: "I", Amount: dec("1"), Card: testCard("100")}.Request()
	resp, err = e.client.Do(ctx, req)
	if !errors.As(err, &ve) || len(resp.RequestErrors.ServiceErrors) != 1 {
		t.Fatalf("unknown service: %v %+v", err, resp)
	}
	body, _ := api.MarshalCanonical(reserveOp("INV-W", "Jansen").Request())
	r := rawPost(t, e.srv.URL, api.PathTransaction, http.MethodPost, body, signFor(e.srv.URL, api.PathTransaction, body, testCreds, time.Now().Unix()))
	if r.code != http.StatusOK || !strings.Contains(string(r.body), `"ActionErrors":[{`) || !strings.Contains(string(r.body), `"Code":491`) {
		t.Fatalf("Reserve on /json/Transaction: %d %s", r.code, r.body)
	}
	// A PushURL that is no web address.
	req = api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "I", Amount: dec("1"), Card: testCard("100"), PushURL: "file:///etc/passwd"}.Request()
	_, err = e.client.Do(ctx, req)
	if !errors.As(err, &ve) || !ve.Has("PushURL") {
		t.Fatalf("bad PushURL: %v", err)
	}
	if n := e.txCount(); n != 0 {
		t.Fatalf("491s created %d records", n)
	}
}

// Responses are canonical and signed over the response body with the
// request's method and URI; the trailing slash and camelCase keys of real
// clients are accepted.
func TestSignedResponseTrailingSlashAndCamelCase(t *testing.T) {
	e := newEnv(t, nil)
	body := []byte(`{"currency":"EUR","invoice":"INV-CC","amountDebit":"10","services":{"serviceList":[{"name":"voucherb","action":"Pay","version":0,` +
		`"parameters":[{"name":"VoucherBCardnumber","value":"0000000000000000001","groupType":"","groupID":""},{"name":"VoucherBPIN","value":1000,"groupID":1}]}]}}`)
	path := api.PathTransaction + "/"
	r := rawPost(t, e.srv.URL, path, http.MethodPost, body, signFor(e.srv.URL, path, body, testCreds, time.Now().Unix()))
	if r.code != http.StatusOK {
		t.Fatalf("%d %s %s", r.code, r.body, r.header.Get("X-Paydesk-Reason"))
	}
	u, _ := url.Parse(e.srv.URL)
	if _, err := api.VerifierFor(testCreds).Verify(r.header.Get("Authorization"), http.MethodPost, u.Host+path, r.body); err != nil {
		t.Fatalf("response signature: %v", err)
	}
	resp, err := api.DecodeResponse(r.body)
	if err != nil || resp.Status.Code.Code != api.StatusSuccess {
		t.Fatalf("%s %v", r.body, err)
	}
	canon, _ := api.MarshalCanonical(resp)
	if !bytes.Equal(canon, r.body) {
		t.Fatalf("response is not canonical:\n%s\n%s", r.body, canon)
	}
}

// familyVectors are requests captured from the family's Node SDK.
type familyVectors struct {
	WebsiteKey string `json:"website_key"`
	SecretKey  string `json:"secret_key"`
	Requests   []struct {
		Method        string `json:"method"`
		Path          string `json:"path"`
		Host          string `json:"host"`
		Authorization string `json:"authorization"`
		Body          string `json:"body"`
	} `json:"requests"`
}

// Every vector, sent as-is with the clock at its timestamp, passes the
// signature check and is read as an envelope (its service names are the
// family's own, so a 491 is fine; 400 and 500 are not).
func TestFamilySDKVectorsAccepted(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/vectors/family-sdk-requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var v familyVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var clock atomic.Int64
	e := newEnv(t, func(c *Config) {
		c.Credentials = []api.Credentials{{WebsiteKey: v.WebsiteKey, SecretKey: v.SecretKey}}
		c.PushURL = ""
		c.Now = func() time.Time { return time.Unix(clock.Load(), 0) }
	})
	if len(v.Requests) < 10 {
		t.Fatalf("only %d vectors", len(v.Requests))
	}
	statuses := map[int]int{}
	for i, rq := range v.Requests {
		a, err := api.ParseAuthorization(rq.Authorization)
		if err != nil {
			t.Fatal(err)
		}
		clock.Store(a.Timestamp)
		req, _ := http.NewRequest(rq.Method, e.srv.URL+rq.Path, strings.NewReader(rq.Body))
		req.Host = rq.Host // as the SDK addressed it
		req.Header.Set("Authorization", rq.Authorization)
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("vector %d (%s): HTTP %d %s (%s)", i, rq.Path, resp.StatusCode, body, resp.Header.Get("X-Paydesk-Reason"))
		}
		r, err := api.DecodeResponse(body)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		statuses[r.Status.Code.Code]++
	}
	// The customgiftcard payment with the test card goes through; the
	// family's own service names (klarnakp, boekenbon, …) are 491.
	if statuses[api.StatusSuccess] == 0 || statuses[api.StatusValidationFailure] == 0 {
		t.Fatalf("statuses %v", statuses)
	}
	t.Logf("vector statuses: %v", statuses)
}
