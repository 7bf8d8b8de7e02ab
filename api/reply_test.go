package api

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// A reply as the family's public Ruby client tests it: its brq_signature is
// the gateway's, valid for secret "very-secret" (the client's "valid?" test).
func familyReply() url.Values {
	v := url.Values{}
	for k, x := range map[string]string{
		"BRQ_AMOUNT": "22.00", "BRQ_CURRENCY": "EUR", "BRQ_CUSTOMER_NAME": "J. de Tèster", "BRQ_DESCRIPTION": "order 9",
		"BRQ_INVOICENUMBER": "9",
		"BRQ_PAYER_HASH":    "102c7f25042d0377eba70b2c4ea49547c84316a9fac2c61ff1a3c3ba09375057ca98e2dd777635007b4b9b992db85309ae0379ddb87892137fe70977d598d4b8",
		"BRQ_PAYMENT":       "C8566C065C9247D9AF8377569242C191", "BRQ_PAYMENT_METHOD": "ideal",
		"BRQ_SERVICE_IDEAL_CONSUMERBIC": "RABONL2U", "BRQ_SERVICE_IDEAL_CONSUMERIBAN": "NL44RABO0123456789",
		"BRQ_SERVICE_IDEAL_CONSUMERISSUER": "Rabobank", "BRQ_SERVICE_IDEAL_CONSUMERNAME": "J. de Tèster",
		"BRQ_STATUSCODE": "190", "BRQ_STATUSCODE_DETAIL": "S001", "BRQ_STATUSMESSAGE": "Transaction successfully processed",
		"BRQ_TEST": "true", "BRQ_TIMESTAMP": "2015-04-22 10:43:35", "BRQ_TRANSACTIONS": "712C8062B24247CEA878F632942E6511",
		"BRQ_WEBSITEKEY": "very-secure", "BRQ_SIGNATURE": "f8e3eba8d6e98ce770e48014e33b4545636b8fa9",
	} {
		v.Set(k, x)
	}
	return v
}

func TestReplySignatureVector(t *testing.T) {
	r := familyReply()
	if got := ReplySignature(r, "very-secret"); got != r.Get("BRQ_SIGNATURE") {
		t.Fatalf("signature %s, want the gateway's %s", got, r.Get("BRQ_SIGNATURE"))
	}
	if err := VerifyReply(r, "very-secret"); err != nil {
		t.Fatal(err)
	}
	if err := VerifyReply(r, "not-so-secret"); !errors.Is(err, ErrReplySignature) {
		t.Fatalf("wrong secret: %v", err)
	}
}

func TestReplySignRoundTrip(t *testing.T) {
	v := url.Values{"brq_statuscode": {"190"}, "add_order": {"A&B <x>"}, "cust_ref": {"7"}, "other": {"not signed"}}
	SignReply(v, "s3cret")
	if err := VerifyReply(v, "s3cret"); err != nil {
		t.Fatal(err)
	}
	v.Set("other", "changed") // not a signed field
	if err := VerifyReply(v, "s3cret"); err != nil {
		t.Fatalf("unsigned field changed: %v", err)
	}
	for _, k := range []string{"brq_statuscode", "add_order", "cust_ref"} {
		w := url.Values{}
		for a, b := range v {
			w[a] = append([]string(nil), b...)
		}
		w.Set(k, "tampered")
		if err := VerifyReply(w, "s3cret"); !errors.Is(err, ErrReplySignature) {
			t.Errorf("%s tampered: %v", k, err)
		}
	}
	if err := VerifyReply(url.Values{"brq_x": {"1"}}, "s"); !errors.Is(err, ErrReplyUnsigned) {
		t.Errorf("unsigned: %v", err)
	}
	if !replyLess("brq_a_b", "brq_ab") || !replyLess("brq_1", "brq_a") || !replyLess("BRQ_A", "brq_b") {
		t.Error("sort order is not symbols, digits, letters (any case)")
	}
}

// A shop's return page parses whatever a browser posts: verifying never
// panics, and a reply this package signed always verifies.
func FuzzVerifyReply(f *testing.F) {
	f.Add("brq_statuscode=190&brq_signature=abc", "s")
	f.Add("BRQ_A=1&add_x=%C3%A9&cust_=&brq_signature=", "")
	f.Add(familyReply().Encode(), "very-secret")
	f.Fuzz(func(t *testing.T, form, secret string) {
		v, err := url.ParseQuery(form)
		if err != nil {
			return
		}
		_ = VerifyReply(v, secret)
		for k := range v {
			if strings.EqualFold(k, ReplySignatureField) {
				v.Del(k)
			}
		}
		SignReply(v, secret)
		if err := VerifyReply(v, secret); err != nil {
			t.Fatalf("own signature refused: %v (%v)", err, v)
		}
	})
}
