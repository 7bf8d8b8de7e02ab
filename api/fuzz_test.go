package api

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wireBodies reads the captured bodies under testdata/wire whose names end
// in kind (push or response).
func wireBodies(tb testing.TB, kind string) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "wire", "*"+kind+".json"))
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func addWireSeeds(f *testing.F, kind string) {
	for _, b := range wireBodies(f, kind) {
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"Status":{"Code":{"Code":"x"}}}`))
	f.Add([]byte(`{"AmountDebit":1e400,"Status":{"DateTime":"2026-13-45T99:99:99"}}`))
}

func FuzzDecodeResponse(f *testing.F) {
	addWireSeeds(f, "response")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeResponse(body)
		if err != nil {
			return
		}
		out, err := MarshalCanonical(r)
		if err != nil {
			t.Fatalf("decoded response does not encode: %v", err)
		}
		r2, err := DecodeResponse(out)
		if err != nil {
			t.Fatalf("re-encoded response does not decode: %v\n%s", err, out)
		}
		if r2.Key != r.Key || r2.Status.Code != r.Status.Code {
			t.Fatalf("round trip changed key or status")
		}
	})
}

func FuzzDecodePush(f *testing.F) {
	addWireSeeds(f, "push")
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := DecodePush(body)
		if err != nil {
			return
		}
		if c, err := Compact(body); err != nil || IsCompact(body) != bytes.Equal(c, body) {
			t.Fatalf("IsCompact = %v for a body Compact makes %q (%v)", IsCompact(body), c, err)
		}
		// Every accessor must be safe on anything that decoded.
		_ = p.Envelope() + p.Kind() + p.Invoice() + p.ServiceCode() + p.Currency() + p.Param(PReservationNumber) + p.Related(RelationRefund)
		_ = p.Amount().Dec()
		_ = p.Status().SubCodeString()
		out, err := p.Encode()
		if err != nil {
			t.Fatalf("decoded push does not encode: %v", err)
		}
		p2, err := DecodePush(out)
		if err != nil {
			t.Fatalf("re-encoded push does not decode: %v\n%s", err, out)
		}
		if p2.Key() != p.Key() || p2.Envelope() != p.Envelope() {
			t.Fatalf("round trip changed key or envelope")
		}
	})
}

func FuzzParseAuthorization(f *testing.F) {
	f.Add("hmac testWebsiteKey:nnUT4hxy02e8R/9EO9nW4tOcrRcKLwLoT323V33B8gs=:nonce_5906687:1795345581")
	f.Add("HMAC a:b:c:1")
	f.Add("hmac a:b:c:-1")
	f.Add("hmac :::")
	f.Add("hmac a:b:c:99999999999999999999999")
	f.Add("")
	f.Fuzz(func(t *testing.T, h string) {
		a, err := ParseAuthorization(h)
		if err != nil {
			return
		}
		if a.WebsiteKey == "" || a.Signature == "" || a.Nonce == "" || a.Timestamp < 0 {
			t.Fatalf("accepted an incomplete header %q: %+v", h, a)
		}
		if strings.ContainsRune(a.WebsiteKey+a.Signature+a.Nonce, ':') {
			t.Fatalf("field holds a separator: %+v", a)
		}
		b, err := ParseAuthorization(a.String())
		if err != nil || b != a {
			t.Fatalf("String() does not re-parse: %q → %+v, %v", a.String(), b, err)
		}
		// Verification of anything parsed must not panic either.
		v := VerifierFor(testCreds)
		_, _ = v.Verify(h, "POST", "h/p", []byte(h))
	})
}

// FuzzParseOperation covers what the sandbox does with a request body from
// the outside: decode, then parse and validate.
func FuzzParseOperation(f *testing.F) {
	vf := loadVectors(f)
	for _, r := range vf.Requests {
		f.Add([]byte(r.Body), r.Path)
	}
	body, _ := MarshalCanonical(validReserve().Request())
	f.Add(body, PathDataRequest)
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		req, err := DecodeRequest(body)
		if err != nil {
			return
		}
		op, err := ParseOperation(req, path, Rules{})
		if op != nil {
			_ = op.Request()
		}
		_ = err
	})
}
