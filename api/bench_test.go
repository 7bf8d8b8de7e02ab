package api

import "testing"

// BenchmarkSignAndEncode is what the client does per Reserve before the
// network: build the envelope, validate, encode and sign.
func BenchmarkSignAndEncode(b *testing.B) {
	r := validReserve()
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Validate(Rules{}); err != nil {
			b.Fatal(err)
		}
		body, err := MarshalCanonical(r.Request())
		if err != nil {
			b.Fatal(err)
		}
		a := Sign(testCreds, "POST", "127.0.0.1:8800/json/DataRequest", body, "0123456789abcdef0123456789abcdef", 1795345581)
		if a.Signature == "" {
			b.Fatal("no signature")
		}
	}
}
