package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"paydesk/api"
)

// postSigned posts a request as a foreign client would, with the given
// Channel header ("" sends none), and returns the decoded answer.
func postSigned(t *testing.T, e *env, req *api.Request, channel string) *api.Response {
	t.Helper()
	body, err := api.MarshalCanonical(req)
	if err != nil {
		t.Fatal(err)
	}
	u := e.srv.URL + req.Path()
	hr, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json; charset=utf-8")
	hr.Header.Set("Authorization", api.Sign(testCreds, http.MethodPost, api.HostPath(u), body, api.NewNonce(), time.Now().Unix()).String())
	if channel != "" {
		hr.Header.Set("Channel", channel)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	r, err := api.DecodeResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func without(req *api.Request, name, group string) *api.Request {
	ps := req.Services.ServiceList[0].Parameters
	out := ps[:0:0]
	for _, p := range ps {
		if p.Name == name && string(p.GroupID) == group {
			continue
		}
		out = append(out, p)
	}
	req.Services.ServiceList[0].Parameters = out
	return req
}

func with(req *api.Request, ps ...api.Parameter) *api.Request {
	req.Services.ServiceList[0].Parameters = append(req.Services.ServiceList[0].Parameters, ps...)
	return req
}

// named reports whether a 491 names param in the given list.
func named(r *api.Response, list func(*api.RequestErrors) []api.ErrorItem, param string) bool {
	if r.RequestErrors == nil {
		return false
	}
	for _, it := range list(r.RequestErrors) {
		if it.Name == param {
			return true
		}
	}
	return false
}

func paramErrors(e *api.RequestErrors) []api.ErrorItem   { return e.ParameterErrors }
func channelErrors(e *api.RequestErrors) []api.ErrorItem { return e.ChannelErrors }

func TestReserveRules(t *testing.T) {
	e := newEnv(t, nil)
	reserve := func() *api.Request { return reserveOp("INV-RULES", "Jansen").Request() }
	gift := func() *api.Request {
		return api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "INV-R-GC", Amount: dec("1"), Card: testCard("100")}.Request()
	}
	for _, c := range []struct {
		name    string
		req     *api.Request
		channel string
		code    int
		list    func(*api.RequestErrors) []api.ErrorItem
		param   string
	}{
		{"no ArticlePrice", without(reserve(), api.PArticlePrice, "2"), "Web", 491, paramErrors, api.PArticlePrice},
		{"no ArticleVat", without(reserve(), api.PArticleVat, "1"), "Web", 491, paramErrors, api.PArticleVat},
		{"no ArticleQuantity", without(reserve(), api.PArticleQuantity, "3"), "Web", 491, paramErrors, api.PArticleQuantity},
		{"B2B category", with(reserve(), api.Parameter{Name: "Category", Value: "B2B"}), "Web", 491, paramErrors, "Category"},
		{"company registration", with(reserve(), api.Parameter{Name: "ChamberOfCommerce", Value: "12345678"}), "", 491, paramErrors, "ChamberOfCommerce"},
		{"B2B flag", with(reserve(), api.Parameter{Name: "B2B", Value: "true"}), "Web", 491, paramErrors, "B2B"},
		{"company name alone is a consumer's", with(reserve(), api.Parameter{Name: "BillingCompanyName", Value: "Acme"}), "Web", 791, nil, ""},
		{"consumer category", with(reserve(), api.Parameter{Name: "Category", Value: "Person"}), "Web", 791, nil, ""},
		{"channel BackOffice", reserve(), "BackOffice", 491, channelErrors, api.FieldChannel},
		{"channel web in any case", reserve(), "WEB", 791, nil, ""},
		{"no Channel header", reserve(), "", 791, nil, ""},
		{"gift cards take any channel", gift(), "BackOffice", 190, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := postSigned(t, e, c.req, c.channel)
			if r.Status.Code.Code != c.code {
				t.Fatalf("status %d, want %d: %+v", r.Status.Code.Code, c.code, r.RequestErrors)
			}
			if c.list != nil && !named(r, c.list, c.param) {
				t.Fatalf("491 does not name %s in the right list: %+v", c.param, r.RequestErrors)
			}
			if c.code == 491 && c.param != api.FieldChannel {
				for _, it := range r.RequestErrors.ParameterErrors {
					if it.Name == c.param && !strings.Contains(it.ErrorMessage, "required") && !strings.Contains(it.ErrorMessage, "business-to-business") {
						t.Errorf("message %q names no rule", it.ErrorMessage)
					}
				}
			}
		})
	}

	// An UpdateReservation's article groups replace the lines: whole ones only.
	_, number := e.reserved("INV-UPD-RULES")
	upd := func() *api.Request {
		return api.UpdateReservation{Currency: "EUR", Invoice: "INV-UPD-RULES", ReservationNumber: number,
			Articles: []api.Article{{Number: "A1", Title: "Blue toy", Price: dec("10"), Quantity: 1, Vat: dec("21")}}}.Request()
	}
	r := postSigned(t, e, without(upd(), api.PArticlePrice, "1"), "Web")
	if r.Status.Code.Code != 491 || !named(r, paramErrors, api.PArticlePrice) {
		t.Fatalf("update without ArticlePrice: %d %+v", r.Status.Code.Code, r.RequestErrors)
	}
	if _, err := e.client.Do(context.Background(), upd()); err != nil {
		t.Fatalf("whole update: %v", err)
	}
}

// The gift card codes offered are a merchant setting: the sandbox accepts
// exactly those, and a client configured with the same setting agrees.
func TestGiftCardCodesSetting(t *testing.T) {
	m := api.Merchant{GiftCardCodes: []string{"fashioncheque", "customgiftcard"}}
	e := newEnv(t, func(c *Config) { c.Merchant = m })
	ctx := context.Background()
	pay := func(code string) *api.Request {
		return api.GiftCardPay{ServiceCode: code, Currency: "EUR", Invoice: "INV-CODES", Amount: dec("1"), Card: testCard("100")}.Request()
	}
	if r := postSigned(t, e, pay("fashioncheque"), "Web"); r.Status.Code.Code != api.StatusSuccess {
		t.Fatalf("fashioncheque: %d %+v", r.Status.Code.Code, r.RequestErrors)
	}
	r := postSigned(t, e, pay("voucherb"), "Web")
	if r.Status.Code.Code != api.StatusValidationFailure || len(r.RequestErrors.ServiceErrors) != 1 {
		t.Fatalf("voucherb not offered: %d %+v", r.Status.Code.Code, r.RequestErrors)
	}
	cl, err := api.NewClient(api.Config{BaseURL: e.srv.URL, Credentials: testCreds, Rules: m.Rules()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.Send(ctx, api.GiftCardPay{ServiceCode: "voucherb", Currency: "EUR", Invoice: "X", Amount: dec("1"), Card: testCard("100")})
	var ve *api.ValidationError
	if !errors.As(err, &ve) || ve.Gateway != nil {
		t.Fatalf("the client sent what the gateway refuses: %v", err)
	}
	sp := e.sb.specification("voucherb", false)
	if len(sp.Actions) != 0 {
		t.Fatalf("specification offers voucherb: %+v", sp)
	}
	if _, err := New(Config{Credentials: []api.Credentials{testCreds}, Merchant: api.Merchant{PartialRefunds: []api.Provider{api.ProviderC}}}); err == nil {
		t.Fatal("New accepted partial refunds for provider C")
	}
}
