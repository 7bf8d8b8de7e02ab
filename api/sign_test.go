package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testCreds = Credentials{WebsiteKey: "testWebsiteKey", SecretKey: "testSecretKey"}

// The worked vector of design.md, checked against the family's Node SDK.
func TestSignKnownVector(t *testing.T) {
	const wantString = "testWebsiteKeyPOST127.0.0.1%3a18765%2fjson%2ftransaction1795345581nonce_5906687EaMGkNldbkdX226TM+H83Q=="
	got := StringToSign("testWebsiteKey", "POST", EncodeURI("127.0.0.1:18765/json/Transaction"), 1795345581, "nonce_5906687", "EaMGkNldbkdX226TM+H83Q==")
	if got != wantString {
		t.Fatalf("string to sign\n got %s\nwant %s", got, wantString)
	}
	if sig := signature(testCreds.SecretKey, got); sig != "nnUT4hxy02e8R/9EO9nW4tOcrRcKLwLoT323V33B8gs=" {
		t.Fatalf("signature = %s", sig)
	}
}

func TestEncodeURI(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8800/json/Transaction":     "127.0.0.1%3a8800%2fjson%2ftransaction",
		"example.test/json/DataRequest/":      "example.test%2fjson%2fdatarequest%2f",
		"h/push?a=1&b=x y":                    "h%2fpush%3fa%3d1%26b%3dx%20y",
		"Host.Example/A-B_C.D!~*'()":          "host.example%2fa-b_c.d!~*'()",
		"127.0.0.1:9/sandbox/checkout/ABCDEF": "127.0.0.1%3a9%2fsandbox%2fcheckout%2fabcdef",
	} {
		if got := EncodeURI(in); got != want {
			t.Errorf("EncodeURI(%q) = %q, want %q", in, got, want)
		}
	}
}

type vectorFile struct {
	WebsiteKey string `json:"website_key"`
	SecretKey  string `json:"secret_key"`
	Requests   []struct {
		Method        string `json:"method"`
		Path          string `json:"path"`
		Host          string `json:"host"`
		Authorization string `json:"authorization"`
		Body          string `json:"body"`
		StringToSign  string `json:"string_to_sign"`
	} `json:"requests"`
}

func loadVectors(t testing.TB) vectorFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "vectors", "family-sdk-requests.json"))
	if err != nil {
		b, err = os.ReadFile(filepath.Join("..", "testdata", "vectors", "family-sdk-requests.json"))
	}
	if err != nil {
		t.Fatalf("vectors: %v", err)
	}
	var v vectorFile
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("vectors: %v", err)
	}
	return v
}

// Every request captured from the family's public SDK verifies, and decodes
// liberally (numbers as values, BillingCustomer groups, extra fields).
func TestFamilyVectorsVerifyAndDecode(t *testing.T) {
	vf := loadVectors(t)
	if len(vf.Requests) == 0 {
		t.Fatal("no vectors")
	}
	creds := Credentials{WebsiteKey: vf.WebsiteKey, SecretKey: vf.SecretKey}
	for i, r := range vf.Requests {
		a, err := ParseAuthorization(r.Authorization)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		v := VerifierFor(creds)
		v.Now = func() time.Time { return time.Unix(a.Timestamp+30, 0) }
		if _, err := v.Verify(r.Authorization, r.Method, r.Host+r.Path, []byte(r.Body)); err != nil {
			t.Errorf("vector %d (%s): %v", i, r.Path, err)
		}
		want := StringToSign(a.WebsiteKey, r.Method, EncodeURI(r.Host+r.Path), a.Timestamp, a.Nonce, ContentHash([]byte(r.Body)))
		if want != r.StringToSign {
			t.Errorf("vector %d: string to sign\n got %s\nwant %s", i, want, r.StringToSign)
		}
		if _, err := DecodeRequest([]byte(r.Body)); err != nil {
			t.Errorf("vector %d: decode: %v", i, err)
		}
	}
}

func TestVerifyFailures(t *testing.T) {
	body := []byte(`{"Currency":"EUR"}`)
	now := time.Unix(1_800_000_000, 0)
	good := Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", now.Unix()).String()
	v := VerifierFor(testCreds)
	v.Now = func() time.Time { return now }
	cases := []struct {
		name            string
		header, uri     string
		body            []byte
		now             time.Time
		want            error
		reasonSubstring string
	}{
		{"ok", good, "127.0.0.1:8800/json/Transaction", body, now, nil, ""},
		{"missing", "", "127.0.0.1:8800/json/Transaction", body, now, ErrSignatureMissing, "no Authorization"},
		{"malformed", "hmac a:b:c", "127.0.0.1:8800/json/Transaction", body, now, ErrSignatureMalformed, "3 fields"},
		{"wrong scheme", "basic abc", "127.0.0.1:8800/json/Transaction", body, now, ErrSignatureMalformed, "scheme"},
		{"bad timestamp", "hmac testWebsiteKey:sig:n:abc", "x/y", body, now, ErrSignatureMalformed, "Unix seconds"},
		{"stale", good, "127.0.0.1:8800/json/Transaction", body, now.Add(6 * time.Minute), ErrStaleTimestamp, "360s off"},
		{"future", good, "127.0.0.1:8800/json/Transaction", body, now.Add(-6 * time.Minute), ErrStaleTimestamp, "limit 300s"},
		// Timestamps whose difference from now overflowed int64 seconds
		// or time.Duration once passed as "0 s off" (F6).
		{"far future", Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", now.Unix()+9223372037).String(), "127.0.0.1:8800/json/Transaction", body, now, ErrStaleTimestamp, "more than a year off"},
		{"max int64", Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", math.MaxInt64).String(), "127.0.0.1:8800/json/Transaction", body, now, ErrStaleTimestamp, "more than a year off"},
		{"301 s ahead", Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", now.Unix()+301).String(), "127.0.0.1:8800/json/Transaction", body, now, ErrStaleTimestamp, "301s off"},
		{"300 s ahead", Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", now.Unix()+300).String(), "127.0.0.1:8800/json/Transaction", body, now, nil, ""},
		{"300 s behind", Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", now.Unix()-300).String(), "127.0.0.1:8800/json/Transaction", body, now, nil, ""},
		{"301 s behind", Sign(testCreds, "POST", "127.0.0.1:8800/json/Transaction", body, "n1", now.Unix()-301).String(), "127.0.0.1:8800/json/Transaction", body, now, ErrStaleTimestamp, "301s off"},
		{"wrong key", Sign(Credentials{"other", "testSecretKey"}, "POST", "127.0.0.1:8800/json/Transaction", body, "n", now.Unix()).String(), "127.0.0.1:8800/json/Transaction", body, now, ErrUnknownWebsiteKey, `"other"`},
		{"wrong secret", Sign(Credentials{"testWebsiteKey", "nope"}, "POST", "127.0.0.1:8800/json/Transaction", body, "n", now.Unix()).String(), "127.0.0.1:8800/json/Transaction", body, now, ErrSignatureMismatch, "wrong secret"},
		{"tampered body", good, "127.0.0.1:8800/json/Transaction", []byte(`{"Currency":"USD"}`), now, ErrSignatureMismatch, "altered body"},
		{"other path", good, "127.0.0.1:8800/json/Transaction/", body, now, ErrSignatureMismatch, "different URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v.Now = func() time.Time { return c.now }
			_, err := v.Verify(c.header, "POST", c.uri, c.body)
			if c.want == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.reasonSubstring) {
				t.Fatalf("err %q does not say %q", err, c.reasonSubstring)
			}
		})
	}
}

func TestCredentialsNeverPrintSecret(t *testing.T) {
	c := Credentials{WebsiteKey: "wk", SecretKey: "s3cr3t"}
	for _, s := range []string{c.String(), c.GoString()} {
		if strings.Contains(s, "s3cr3t") {
			t.Fatalf("secret printed: %s", s)
		}
	}
}

// TestVerifyReusesSigners verifies many different requests with one
// Verifier, so pooled signers are reused, and checks every verdict against
// Sign: a reused buffer or HMAC must never leak one request into the next.
func TestVerifyReusesSigners(t *testing.T) {
	c := Credentials{WebsiteKey: "WK", SecretKey: "s3cret"}
	v := VerifierFor(c)
	v.Now = func() time.Time { return time.Unix(1_790_000_000, 0) }
	methods := []string{"POST", "get", "Put"}
	for i := range 300 {
		body := []byte(strings.Repeat("x", i%7*40))
		hostPath := fmt.Sprintf("127.0.0.1:%d/push/%d?q=%d", 8000+i%3, i, i)
		method := methods[i%len(methods)]
		a := Sign(c, method, hostPath, body, NewNonce(), 1_790_000_000)
		if _, err := v.Verify(a.String(), method, hostPath, body); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if _, err := v.Verify(a.String(), method, hostPath, append(body, '!')); !errors.Is(err, ErrSignatureMismatch) {
			t.Fatalf("request %d with an altered body: %v, want a mismatch", i, err)
		}
	}
}
