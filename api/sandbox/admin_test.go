package sandbox

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"paydesk/api"
)

// signedAdmin calls an admin endpoint signed with creds.
func signedAdmin(t *testing.T, e *env, method, path string, creds api.Credentials) (int, string) {
	t.Helper()
	u := e.srv.URL + path
	req, _ := http.NewRequest(method, u, nil)
	if creds.SecretKey != "" {
		req.Header.Set("Authorization", api.Sign(creds, method, api.HostPath(u), nil, api.NewNonce(), time.Now().Unix()).String())
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode == http.StatusOK {
		if _, err := api.VerifierFor(creds).Verify(r.Header.Get("Authorization"), method, api.HostPath(u), b); err != nil {
			t.Fatalf("answer signature: %v", err)
		}
	}
	return r.StatusCode, string(b)
}

func TestAdminResend(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := e.giftPay("voucherb", testCard("1000"), "5")
	if err != nil {
		t.Fatal(err)
	}
	first := e.rc.nextFor(resp.Key)
	code, body := signedAdmin(t, e, http.MethodPost, PathAdminResend+resp.Key, testCreds)
	if code != http.StatusOK || !strings.Contains(body, resp.Key) {
		t.Fatalf("resend: %d %s", code, body)
	}
	again := e.rc.nextFor(resp.Key)
	if string(again.body) != string(first.body) {
		t.Fatalf("resent body differs:\n%s\n%s", again.body, first.body)
	}
	code, body = signedAdmin(t, e, http.MethodGet, PathAdminPushes+resp.Key, testCreds)
	if code != http.StatusOK || !strings.Contains(body, string(first.body)) {
		t.Fatalf("pushes: %d %s", code, body)
	}
	for _, c := range []struct {
		method, path string
		creds        api.Credentials
		want         int
	}{
		{http.MethodPost, PathAdminResend + resp.Key, api.Credentials{}, http.StatusBadRequest},
		{http.MethodPost, PathAdminResend + resp.Key, api.Credentials{WebsiteKey: testCreds.WebsiteKey, SecretKey: "wrong"}, http.StatusBadRequest},
		{http.MethodPost, PathAdminResend + strings.Repeat("0", 32), testCreds, http.StatusNotFound},
		{http.MethodGet, PathAdminResend + resp.Key, testCreds, http.StatusMethodNotAllowed},
	} {
		if code, body := signedAdmin(t, e, c.method, c.path, c.creds); code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.method, c.path, code, body, c.want)
		}
	}
	e.rc.none(100 * time.Millisecond)
}
