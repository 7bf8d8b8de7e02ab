package kvlayout

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"paydesk/store/domain"
)

// giftCardPush is a push as pushload and the gateway send it: the shape
// most pushes of a busy shop have.
func giftCardPush() domain.PushRecord {
	body := `{"Transaction":{"Key":"00000000000000000002D3ACD3BD3AA7","Invoice":"GC-795689193650855","ServiceCode":"customgiftcard",` +
		`"Status":{"Code":{"Code":190,"Description":"Success"},"SubCode":{"Code":"S001","Description":""},"DateTime":"2026-03-02T11:00:00+01:00"},` +
		`"IsTest":true,"Order":null,"Currency":"EUR","AmountDebit":1.01,"TransactionType":"V238","Services":null,"CustomParameters":null,` +
		`"AdditionalParameters":null,"MutationType":2,"RelatedTransactions":null,"IsCancelable":false,"IssuingCountry":null,` +
		`"StartRecurrent":false,"Recurring":false,"CustomerName":null,"PayerHash":null,"PaymentKey":null}}`
	return domain.PushRecord{ID: 1, ReceivedAt: time.Unix(1_790_000_000, 5).UTC(), RemoteAddr: "127.0.0.1:43468", Method: "POST", URL: "/push",
		Header: http.Header{"Content-Length": {"596"}, "Content-Type": {"application/json"},
			"Authorization": {"hmac PDKTEST:qOdKTimy48YHtVflM9/XRhOoybLbh+SKITHMnaZUlhs=:47a7721def158e36a3b402ca08291ed9:1795689193"}},
		Body: []byte(body), Envelope: "Transaction", Key: "00000000000000000002D3ACD3BD3AA7", Invoice: "GC-795689193650855",
		Service: "customgiftcard", Kind: "V238", Status: domain.Status{Code: 190, SubCode: "S001", Time: time.Unix(1_772_445_600, 0).UTC()},
		Currency: "EUR", Amount: dec("1.01"), HasAmount: true, WebsiteKey: "PDKTEST", Signature: domain.SignatureValid, Applied: true,
		Hash: sha256.Sum256([]byte(body))}
}

// sameRecord fails t unless got reads back as want (times as instants).
func sameRecord(t *testing.T, got *domain.PushRecord, want domain.PushRecord) {
	t.Helper()
	for _, p := range []struct{ g, w *time.Time }{{&got.ReceivedAt, &want.ReceivedAt}, {&got.Status.Time, &want.Status.Time}, {&got.LastSeen, &want.LastSeen}} {
		if !p.g.Equal(*p.w) {
			t.Fatalf("time changed: %v, want %v", *p.g, *p.w)
		}
		*p.g = *p.w
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("round trip changed the record\ngot  %+v\nwant %+v", *got, want)
	}
}

// TestPushRecordPacked: a stored push keeps its headers and body byte for
// byte in a fraction of their size, whatever the body is (JSON of either
// envelope, a form, bytes deflate cannot shrink, nothing), and its parsed
// fields read without the body.
func TestPushRecordPacked(t *testing.T) {
	random := make([]byte, 700)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	form := "brq_amount=39.98&brq_currency=EUR&brq_datarequest=4E8BDE7D0B1A4C2F9E3A5B6C7D8E9F01&brq_invoicenumber=INV-1001" +
		"&brq_primary_service=deferredkp&brq_statuscode=190&brq_statusmessage=Success&brq_test=true&brq_websitekey=WK&brq_signature=abc"
	reserve := `{"DataRequest":{"Key":"4E8BDE7D0B1A4C2F9E3A5B6C7D8E9F01","Invoice":"INV-1001","ServiceCode":"deferredkp","ActionCode":"Reserve",` +
		`"Status":{"Code":{"Code":190,"Description":"Success"},"SubCode":null,"DateTime":"2026-11-20T14:06:40+01:00"},"IsTest":true,"Order":null,` +
		`"Currency":"EUR","AmountDebit":0,"Services":[{"Name":"deferredkp","Action":null,"Parameters":[{"Name":"ReservationNumber",` +
		`"Value":"RSV-7F3A9C21"}],"VersionAsProperty":1}],"CustomParameters":null,"AdditionalParameters":null,"MutationType":0,` +
		`"IssuingCountry":null,"StartRecurrent":false,"Recurring":false,"CustomerName":null,"PayerHash":null,"PaymentKey":null}}`
	tests := []struct {
		name    string
		edit    func(p *domain.PushRecord)
		maxSize int // the stored record's bytes at most; 0: no bound
	}{
		{"gift card transaction", func(*domain.PushRecord) {}, 390},
		{"reserve data request", func(p *domain.PushRecord) { p.Body = []byte(reserve) }, 400},
		{"form-encoded", func(p *domain.PushRecord) {
			p.Body = []byte(form)
			p.Header["Content-Type"] = []string{"application/x-www-form-urlencoded"}
		}, 400},
		{"random bytes", func(p *domain.PushRecord) { p.Body = random }, 0},
		{"no body, no headers", func(p *domain.PushRecord) { p.Body, p.Header = nil, nil }, 0},
		{"a header with no value and one with two", func(p *domain.PushRecord) {
			p.Header["X-Empty"] = []string{}
			p.Header["X-Two"] = []string{"a", "b"}
		}, 0},
		{"rejected excerpt", func(p *domain.PushRecord) {
			p.Rejected, p.Reason, p.BodySize, p.Count, p.LastSeen = true, "signature: mismatch", 5000, 3, time.Unix(1_790_000_100, 0).UTC()
			p.Body = p.Body[:100]
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := giftCardPush()
			tt.edit(&rec)
			v := EncodePush(&rec)
			if tt.maxSize > 0 && len(v) > tt.maxSize {
				t.Errorf("stored record is %d bytes; want at most %d (the body alone is %d)", len(v), tt.maxSize, len(rec.Body))
			}
			got, err := DecodePush(v)
			if err != nil {
				t.Fatal(err)
			}
			sameRecord(t, got, rec)
			body, err := PushBody(v)
			if err != nil || !bytes.Equal(body, rec.Body) {
				t.Fatalf("PushBody = %q, %v; want the body as received", body, err)
			}
			fields, err := DecodePushFields(v)
			if err != nil {
				t.Fatal(err)
			}
			if fields.Body != nil || fields.Header != nil {
				t.Fatalf("DecodePushFields read the body or the headers")
			}
			fields.Body, fields.Header = rec.Body, rec.Header
			sameRecord(t, fields, rec)
		})
	}
}

// encodePushV1 is EncodePush of format 1 (before the body was packed), kept
// to prove that such records read as they were written.
func encodePushV1(p *domain.PushRecord) []byte {
	e := enc{}
	e.byte(codecV1)
	e.uvarint(p.ID)
	e.bool(p.Applied)
	e.str(p.Ignored)
	e.str(p.ReservationKey)
	e.time(p.ReceivedAt)
	e.str(p.RemoteAddr)
	e.str(p.Method)
	e.str(p.URL)
	e.b = appendHeaders(e.b, p.Header)
	e.bytes(p.Body)
	e.str(p.Envelope)
	e.str(p.Key)
	e.str(p.Invoice)
	e.str(p.Service)
	e.str(p.Kind)
	e.varint(int64(p.Status.Code))
	e.str(p.Status.SubCode)
	e.time(p.Status.Time)
	e.str(p.Currency)
	e.dec(p.Amount)
	e.bool(p.HasAmount)
	e.str(p.WebsiteKey)
	e.str(p.Signature)
	e.bool(p.Rejected)
	e.str(p.Reason)
	e.b = append(e.b, p.Hash[:]...)
	if p.Rejected {
		e.uvarint(uint64(p.BodySize))
		e.uvarint(p.Count)
		e.time(p.LastSeen)
	}
	return e.b
}

// TestPushRecordFormat1Read: records stored before the packing read as
// they did, by every reader (no upgrade rewrites them).
func TestPushRecordFormat1Read(t *testing.T) {
	applied := giftCardPush()
	rejected := giftCardPush()
	rejected.Rejected, rejected.Reason, rejected.BodySize, rejected.Count, rejected.LastSeen = true, "signature", 900, 2, time.Unix(1_790_000_100, 0).UTC()
	for _, rec := range []domain.PushRecord{applied, rejected} {
		v := encodePushV1(&rec)
		if v[0] != codecV1 {
			t.Fatalf("format byte %d", v[0])
		}
		for name, decode := range map[string]func([]byte) (*domain.PushRecord, error){"DecodePush": DecodePush, "DecodePushFields": DecodePushFields} {
			got, err := decode(v)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			sameRecord(t, got, rec)
		}
		if body, err := PushBody(v); err != nil || !bytes.Equal(body, rec.Body) {
			t.Fatalf("PushBody = %q, %v", body, err)
		}
	}
}

// TestPushDictionaryPinned: the packing dictionary is read back with the
// records packed with it, for good; a changed byte would make every one of
// them unreadable. A new dictionary is a new file and packing byte.
func TestPushDictionaryPinned(t *testing.T) {
	const want = "aa56f89328f1bb98c6ade42566007804109954a4df8fe2c016fef883173b4863"
	sum := sha256.Sum256(pushDict1)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("pushdict1.txt has SHA-256 %s; records packed with it need %s", got, want)
	}
}

// TestPushRecordDamaged: a packed section cut short, flipped or claiming
// more than it holds is an error, never a panic or a huge allocation.
func TestPushRecordDamaged(t *testing.T) {
	rec := giftCardPush()
	v := EncodePush(&rec)
	for i := range v {
		for _, cut := range [][]byte{v[:i], flip(v, i)} {
			p, err := DecodePush(cut)
			if err == nil && i < len(v)-1 && len(cut) < len(v) {
				t.Fatalf("a record cut at %d of %d read as %+v", i, len(v), p)
			}
			_, _ = DecodePushFields(cut)
			_, _ = PushBody(cut)
		}
	}
	// A size claim far past what deflate can give is refused before any
	// allocation of it.
	d := decoder{b: append([]byte{packDict1, 0xff, 0xff, 0xff, 0xff, 0x0f, 2}, 0, 0)}
	if h, b := d.unpackPush(false, nil); d.err == nil || h != nil || b != nil {
		t.Fatalf("a section claiming 4 GB of 2 bytes: err %v", d.err)
	}
}

func flip(v []byte, i int) []byte {
	out := bytes.Clone(v)
	out[i] ^= 0x55
	return out
}

// FuzzDecodePushPacked: any header and body survive the packing byte for
// byte, and any bytes read as a record give a record or an error.
func FuzzDecodePushPacked(f *testing.F) {
	rec := giftCardPush()
	f.Add(rec.Body, "Authorization", rec.Header.Get("Authorization"), EncodePush(&rec))
	f.Add([]byte("brq_amount=1.00&brq_currency=EUR"), "Content-Type", "application/x-www-form-urlencoded", []byte{pushV2})
	f.Add([]byte{}, "", "", encodePushV1(&rec))
	f.Fuzz(func(t *testing.T, body []byte, name, value string, stored []byte) {
		whole, err := DecodePush(stored)
		_, _ = DecodePushFields(stored)
		storedBody, bodyErr := PushBody(stored)
		if err == nil && (bodyErr != nil || !bytes.Equal(storedBody, whole.Body)) {
			t.Fatalf("PushBody = %q, %v; DecodePush read the body %q", storedBody, bodyErr, whole.Body)
		}
		p := domain.PushRecord{Key: strings.ToUpper(name), Body: body, Header: http.Header{name: {value}}}
		if len(body) == 0 {
			p.Body = nil
		}
		got, err := DecodePush(EncodePush(&p))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Body, p.Body) || !reflect.DeepEqual(got.Header, p.Header) || got.Key != p.Key {
			t.Fatalf("packing changed the push: body %q headers %v, want %q %v", got.Body, got.Header, p.Body, p.Header)
		}
	})
}

// BenchmarkEncodePush is the cost of storing a push on the goroutine that
// received it (packing included), and of reading it back.
func BenchmarkEncodePush(b *testing.B) {
	rec := giftCardPush()
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			n = len(EncodePush(&rec))
		}
		b.ReportMetric(float64(n), "B/record")
	})
	v := EncodePush(&rec)
	b.Run("encode-format1", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			n = len(encodePushV1(&rec))
		}
		b.ReportMetric(float64(n), "B/record")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodePush(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fields", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodePushFields(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
