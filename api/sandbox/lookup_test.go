package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"paydesk/api"
)

func TestStatusLookups(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()

	paid, err := e.giftPay("voucherb", testCard("5000"), "12.50")
	if err != nil {
		t.Fatal(err)
	}
	e.rc.nextFor(paid.Key)
	st, err := e.client.Status(ctx, paid.Key)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	wantStatus(t, st, api.StatusSuccess, api.SubCodeProcessed)
	if st.Key != paid.Key || st.Type() != api.TypeGiftCardPay || !st.AmountDebit.Equal(dec("12.50")) || st.Invoice != "INV-GC" {
		t.Fatalf("status answer %+v does not describe the payment", st)
	}

	// A reservation: pending with its checkout link, then reserved with
	// its number; only on the DataRequest endpoint.
	r, err := e.client.Send(ctx, reserveOp("INV-ST", "Jansen"))
	if err != nil {
		t.Fatal(err)
	}
	st, err = e.client.DataRequestStatus(ctx, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, st, api.StatusPendingProcessing, api.SubCodeRedirect)
	if st.RequiredAction == nil || st.RequiredAction.RedirectURL != r.RequiredAction.RedirectURL {
		t.Fatalf("pending status lacks the checkout link: %+v", st.RequiredAction)
	}
	if err := e.sb.Approve(ctx, r.Key); err != nil {
		t.Fatal(err)
	}
	number := e.rc.nextFor(r.Key).push.Param(api.PReservationNumber)
	st, err = e.client.StatusFor(ctx, api.ActionReserve, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status.Code.Code != api.StatusSuccess || st.Param(api.PReservationNumber) != number {
		t.Fatalf("approved status %d with number %q, want 190 with %q", st.Status.Code.Code, st.Param(api.PReservationNumber), number)
	}

	for _, c := range []struct {
		name string
		call func() error
		want error
	}{
		{"reserve key on the Transaction endpoint", func() error { _, err := e.client.Status(ctx, r.Key); return err }, api.ErrUnknownTransaction},
		{"unknown key", func() error { _, err := e.client.Status(ctx, strings.Repeat("A", 32)); return err }, api.ErrUnknownTransaction},
		{"payment key on the DataRequest endpoint", func() error { _, err := e.client.DataRequestStatus(ctx, paid.Key); return err }, api.ErrUnknownTransaction},
	} {
		if err := c.call(); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}

	other, err := api.NewClient(api.Config{BaseURL: e.srv.URL, Credentials: api.Credentials{WebsiteKey: testCreds.WebsiteKey, SecretKey: "wrong"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Status(ctx, paid.Key); !errors.Is(err, api.ErrAccessDenied) {
		t.Errorf("wrong secret: got %v, want access denied", err)
	}

	info, err := e.client.InvoiceInfo(ctx, "INV-GC")
	if err != nil || len(info.Transactions) != 1 || info.Transactions[0].Key != paid.Key {
		t.Fatalf("InvoiceInfo: %+v %v", info, err)
	}
	if _, err := e.client.InvoiceInfo(ctx, "NO-SUCH"); !errors.Is(err, api.ErrUnknownTransaction) {
		t.Errorf("unknown invoice: %v", err)
	}
}

// The family's SDKs confirm credentials with a signed GET of a
// specification, for a service of their choosing; the Node SDK signs the
// content hash of "{}" although it sends no body.
func TestSpecificationAndCredentialCheck(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	if err := e.client.CheckCredentials(ctx, "ideal"); err != nil {
		t.Fatalf("credential check: %v", err)
	}
	for _, c := range []struct {
		path    string
		actions []string
	}{
		{api.PathDataRequestSpecification + "deferredkp", []string{"Reserve", "CancelReservation", "UpdateReservation"}},
		{api.PathTransactionSpecification + "deferredkp?serviceVersion=1", []string{"Pay", "Refund"}},
		{api.PathTransactionSpecification + "customgiftcard2", []string{"Pay", "PayRemainder", "Refund"}},
		{api.PathTransactionSpecification + "ideal?serviceVersion=2", nil},
	} {
		for _, signed := range []string{"", "{}", "[]"} {
			body := getSigned(t, e, c.path, signed, http.StatusOK)
			var sp Specification
			if err := json.Unmarshal(body, &sp); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range sp.Actions {
				got = append(got, a.Name)
			}
			if strings.Join(got, ",") != strings.Join(c.actions, ",") {
				t.Errorf("%s: actions %v, want %v", c.path, got, c.actions)
			}
		}
	}
	// A signature over another body is refused.
	getSigned(t, e, api.PathTransactionSpecification+"ideal", "{\"a\":1}", http.StatusBadRequest)
}

// getSigned sends a GET without a body whose signature covers signedBody,
// checks the answer's code and signature and returns its body.
func getSigned(t *testing.T, e *env, path, signedBody string, wantCode int) []byte {
	t.Helper()
	u := e.srv.URL + path
	auth := api.Sign(testCreds, http.MethodGet, api.HostPath(u), []byte(signedBody), api.NewNonce(), time.Now().Unix())
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", auth.String())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		t.Fatalf("GET %s signed over %q: HTTP %d %s, want %d", path, signedBody, resp.StatusCode, body, wantCode)
	}
	if wantCode == http.StatusOK {
		if _, err := api.VerifierFor(testCreds).Verify(resp.Header.Get("Authorization"), http.MethodGet, api.HostPath(u), body); err != nil {
			t.Fatalf("answer signature: %v", err)
		}
	}
	return body
}

// Order, AdditionalParameters and CustomParameters come back in the
// response (AdditionalParameter shape), the pushes ("List" shape) and the
// status lookup, whichever shape the request used.
func TestEchoedFields(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	req := api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-ECHO", Amount: dec("5"), Card: testCard("1000")}.Request()
	req.Order = "ORDER_NO_1\u2028x"
	req.AdditionalParameters = &api.ParamList{AdditionalParameter: []api.NameValue{{Name: "initiated_by", Value: "shop"}}}
	req.CustomParameters = &api.ParamList{List: []api.NameValue{{Name: "cart", Value: "42"}}}
	resp, err := e.client.Do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, order *string, add, cust *api.NameValueList, addInList bool) {
		t.Helper()
		if order == nil || *order != req.Order {
			t.Errorf("%s: Order %v", where, order)
		}
		addItems := []api.NameValue(nil)
		if add != nil {
			addItems = add.AdditionalParameter
			if addInList {
				addItems = add.List
			}
		}
		if len(addItems) != 1 || addItems[0].Name != "initiated_by" || addItems[0].Value != "shop" {
			t.Errorf("%s: AdditionalParameters %+v", where, add)
		}
		if cust == nil || len(cust.List) != 1 || cust.List[0].Value != "42" {
			t.Errorf("%s: CustomParameters %+v", where, cust)
		}
	}
	check("response", resp.Order, resp.AdditionalParameters, resp.CustomParameters, false)
	p := e.rc.nextFor(resp.Key)
	tp := p.push.Transaction
	check("push", tp.Order, tp.AdditionalParameters, tp.CustomParameters, true)
	if !strings.Contains(string(p.body), `"AdditionalParameters":{"List":[{"Name":"initiated_by","Value":"shop"}]}`) {
		t.Errorf("push body: %s", p.body)
	}
	st, err := e.client.Status(ctx, resp.Key)
	if err != nil {
		t.Fatal(err)
	}
	check("status", st.Order, st.AdditionalParameters, st.CustomParameters, false)

	// A Reserve's fields come back in its DataRequest push too.
	rq := reserveOp("INV-ECHO-R", "Jansen").Request()
	rq.Order = "ORDER_NO_1\u2028x"
	rq.AdditionalParameters = &api.ParamList{List: []api.NameValue{{Name: "initiated_by", Value: "shop"}}}
	rq.CustomParameters = &api.ParamList{CustomParameter: []api.NameValue{{Name: "cart", Value: "42"}}}
	r, err := e.client.Do(ctx, rq)
	if err != nil {
		t.Fatal(err)
	}
	check("reserve response", r.Order, r.AdditionalParameters, r.CustomParameters, false)
	if err := e.sb.Approve(ctx, r.Key); err != nil {
		t.Fatal(err)
	}
	dp := e.rc.nextFor(r.Key).push.DataRequest
	check("reserve push", dp.Order, dp.AdditionalParameters, dp.CustomParameters, true)
}
