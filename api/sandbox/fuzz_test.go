package sandbox

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"paydesk/api"
)

// FuzzGateway sends validly signed arbitrary bodies to both endpoints: the
// sandbox answers 200 (an envelope) or 500 (not an envelope), never panics,
// and a 200 is always a decodable response.
func FuzzGateway(f *testing.F) {
	for _, op := range []api.Operation{
		reserveOp("INV-F", "Jansen"),
		api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "I", Amount: dec("60"), Card: testCard("1000")},
		api.Capture{Currency: "EUR", Invoice: "I", ReservationNumber: "x", Amount: dec("1"), Lines: []api.CaptureLine{{ArticleNumber: "A1", Quantity: 1}}},
		api.GiftCardRefund{ServiceCode: "voucherb", Currency: "EUR", Invoice: "I", OriginalTransactionKey: "K", Amount: dec("1")},
	} {
		b, _ := api.MarshalCanonical(op.Request())
		f.Add(b, op.Request().Path() == api.PathTransaction)
	}
	f.Add([]byte(`{"Services":{"ServiceList":[{"Name":"deferredkp","Action":"Pay","Parameters":[{"Name":"ArticleNumber","Value":1,"GroupID":1}]}]}}`), true)
	f.Add([]byte(`{"currency":"EUR","services":{"serviceList":[{"name":"vouchera","action":"PayRemainder"}]},"originalTransactionKey":"K","amountDebit":"1e400"}`), true)
	sb, err := New(Config{Credentials: []api.Credentials{testCreds}, Seed: 3})
	if err != nil {
		f.Fatal(err)
	}
	defer sb.Close()
	f.Fuzz(func(t *testing.T, body []byte, transaction bool) {
		path := api.PathDataRequest
		if transaction {
			path = api.PathTransaction
		}
		req := httptest.NewRequest(http.MethodPost, "http://sandbox.test"+path, bytes.NewReader(body))
		req.Header.Set("Authorization", api.Sign(testCreds, http.MethodPost, "sandbox.test"+path, body, "n", time.Now().Unix()).String())
		w := httptest.NewRecorder()
		sb.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK:
			if _, err := api.DecodeResponse(w.Body.Bytes()); err != nil {
				t.Fatalf("200 with an undecodable body: %v\n%s", err, w.Body.Bytes())
			}
		case http.StatusInternalServerError:
		default:
			t.Fatalf("HTTP %d for a signed body", w.Code)
		}
	})
}
