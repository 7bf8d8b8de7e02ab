package api

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

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

// BenchmarkDecodePush decodes a captured push with the hand-written decoder
// the listener uses and, for comparison, with encoding/json's reflection.
func BenchmarkDecodePush(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "wire", "pay-push.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) (*Push, error)
	}{{"hand-written", DecodePush}, {"reflection", reflectDecodePush}} {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := d.decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyPush checks the signature of a captured push as the
// listener does, with the signers VerifierFor keeps and, for comparison,
// with a Verifier that keys a new HMAC every time.
func BenchmarkVerifyPush(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "wire", "pay-push.json"))
	if err != nil {
		b.Fatal(err)
	}
	const hostPath = "127.0.0.1:8801/push"
	auth := Sign(testCreds, "POST", hostPath, body, NewNonce(), time.Now().Unix()).String()
	pooled := VerifierFor(testCreds)
	unpooled := Verifier{Secret: pooled.Secret}
	for _, v := range []struct {
		name string
		v    Verifier
	}{{"pooled", pooled}, {"unpooled", unpooled}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.v.Verify(auth, "POST", hostPath, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
