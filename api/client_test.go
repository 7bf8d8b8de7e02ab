package api

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeGateway answers every request with handler's body, signing the
// response like the real gateway unless sign is false. It checks the
// request's signature first.
func fakeGateway(t *testing.T, sign bool, answer func(w http.ResponseWriter, req *Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		if _, err := VerifierFor(testCreds).Verify(r.Header.Get("Authorization"), r.Method, r.Host+r.URL.Path, body); err != nil {
			http.Error(w, "Access denied", http.StatusBadRequest)
			return
		}
		req, err := DecodeRequest(body)
		if err != nil {
			http.Error(w, "Bad request", http.StatusInternalServerError)
			return
		}
		rec := httptest.NewRecorder()
		answer(rec, req)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if sign && rec.Code == http.StatusOK {
			a := Sign(testCreds, r.Method, r.Host+r.URL.Path, rec.Body.Bytes(), "resp-nonce", time.Now().Unix())
			w.Header().Set("Authorization", a.String())
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func respond(status int, sub string) func(http.ResponseWriter, *Request) {
	return func(w http.ResponseWriter, req *Request) {
		r := Response{Key: "ABC", ServiceCode: req.Service().Name, IsTest: true,
			Status: Status{Code: Code{Code: status, Description: StatusText(status)}, DateTime: NewDateTime(time.Now(), false)}}
		if sub != "" {
			r.Status.SubCode = &SubCode{Code: sub}
		}
		if status == StatusValidationFailure {
			r.RequestErrors = &RequestErrors{ParameterErrors: []ErrorItem{{Name: "ReservationNumber", ErrorMessage: "unknown reservation"}}}
		}
		b, _ := MarshalCanonical(r)
		_, _ = w.Write(b)
	}
}

func newTestClient(t *testing.T, base string, observe func(Exchange)) *Client {
	t.Helper()
	c, err := NewClient(Config{BaseURL: base, Credentials: testCreds, Timeout: 2 * time.Second, Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var cancelOp = CancelReservation{Currency: "EUR", Invoice: "INV-1", ReservationNumber: "R1"}

func TestClientOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		sign   bool
		answer func(http.ResponseWriter, *Request)
		check  func(*testing.T, *Response, error)
	}{
		{"success", true, respond(190, "S001"), func(t *testing.T, r *Response, err error) {
			if err != nil || r.Status.Code.Code != 190 || r.Key != "ABC" {
				t.Fatalf("r=%+v err=%v", r, err)
			}
		}},
		{"unsigned response accepted", false, respond(190, "S001"), func(t *testing.T, r *Response, err error) {
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"pending", true, respond(791, "S002"), func(t *testing.T, r *Response, err error) {
			if err != nil || r.Status.Code.Code != 791 {
				t.Fatalf("r=%+v err=%v", r, err)
			}
		}},
		{"validation 491", true, respond(491, ""), func(t *testing.T, r *Response, err error) {
			var ve *ValidationError
			if !errors.As(err, &ve) || !ve.Has("ReservationNumber") || r == nil || !strings.Contains(err.Error(), "unknown reservation") {
				t.Fatalf("err=%v", err)
			}
		}},
		{"rejected 690", true, respond(690, ""), func(t *testing.T, r *Response, err error) {
			var re *RejectedError
			if !errors.As(err, &re) || r == nil {
				t.Fatalf("err=%v", err)
			}
		}},
		{"failed 490", true, respond(490, ""), func(t *testing.T, r *Response, err error) {
			var se *StatusError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "Failed (490)") {
				t.Fatalf("err=%v", err)
			}
		}},
		{"access denied", true, func(w http.ResponseWriter, _ *Request) { http.Error(w, "Access denied", 400) }, func(t *testing.T, r *Response, err error) {
			if !errors.Is(err, ErrAccessDenied) {
				t.Fatalf("err=%v", err)
			}
		}},
		{"bad request", true, func(w http.ResponseWriter, _ *Request) { http.Error(w, "Bad request", 500) }, func(t *testing.T, r *Response, err error) {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("err=%v", err)
			}
		}},
		{"forged response signature", false, func(w http.ResponseWriter, req *Request) {
			w.Header().Set("Authorization", Sign(Credentials{"testWebsiteKey", "wrong"}, "POST", "x/y", nil, "n", time.Now().Unix()).String())
			respond(190, "S001")(w, req)
		}, func(t *testing.T, r *Response, err error) {
			if !IsOutcomeUnknown(err) || !errors.Is(err, ErrSignatureMismatch) || r != nil {
				t.Fatalf("err=%v", err)
			}
		}},
		{"garbage body", true, func(w http.ResponseWriter, _ *Request) { _, _ = w.Write([]byte("<html>")) }, func(t *testing.T, r *Response, err error) {
			if !IsOutcomeUnknown(err) {
				t.Fatalf("err=%v", err)
			}
		}},
		{"proxy error", true, func(w http.ResponseWriter, _ *Request) { w.WriteHeader(502) }, func(t *testing.T, r *Response, err error) {
			if !IsOutcomeUnknown(err) {
				t.Fatalf("err=%v", err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, calls := fakeGateway(t, c.sign, c.answer)
			r, err := newTestClient(t, srv.URL, nil).Send(context.Background(), cancelOp)
			c.check(t, r, err)
			if n := calls.Load(); n != 1 {
				t.Fatalf("gateway saw %d requests, want exactly 1", n)
			}
		})
	}
}

func TestClientValidatesBeforeSending(t *testing.T) {
	srv, calls := fakeGateway(t, true, respond(190, "S001"))
	_, err := newTestClient(t, srv.URL, nil).Send(context.Background(), CancelReservation{Currency: "EUR"})
	var ve *ValidationError
	if !errors.As(err, &ve) || !ve.Has(PReservationNumber) || !ve.Has(FieldInvoice) {
		t.Fatalf("err=%v", err)
	}
	if calls.Load() != 0 {
		t.Fatal("an invalid request reached the gateway")
	}
}

func TestClientNotSent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused
	_, err = newTestClient(t, "http://"+addr, nil).Send(context.Background(), cancelOp)
	var ns *NotSentError
	if !errors.As(err, &ns) || IsOutcomeUnknown(err) {
		t.Fatalf("err=%v", err)
	}
}

// Once the request is out, a dropped connection or a timeout leaves the
// outcome open, and the client does not try again.
func TestClientOutcomeUnknownAfterSending(t *testing.T) {
	for _, mode := range []string{"reset", "timeout"} {
		t.Run(mode, func(t *testing.T) {
			var calls atomic.Int32
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				_, _ = io.ReadAll(r.Body)
				if mode == "timeout" {
					<-release
					return
				}
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
			}))
			defer srv.Close()
			defer close(release)
			c, err := NewClient(Config{BaseURL: srv.URL, Credentials: testCreds, Timeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Send(context.Background(), Capture{Currency: "EUR", Invoice: "I", ReservationNumber: "R", Amount: dec("10")})
			if !IsOutcomeUnknown(err) {
				t.Fatalf("err=%v", err)
			}
			if !strings.Contains(err.Error(), "Pay: outcome unknown") {
				t.Fatalf("err text %q", err)
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("gateway saw %d requests, want 1 (no silent retry)", n)
			}
		})
	}
}

func TestClientObserveNeverCarriesTheSecret(t *testing.T) {
	srv, _ := fakeGateway(t, true, respond(190, "S001"))
	var seen []Exchange
	c := newTestClient(t, srv.URL+"/", func(e Exchange) { seen = append(seen, e) })
	if _, err := c.Send(context.Background(), cancelOp); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 {
		t.Fatalf("observed %d", len(seen))
	}
	e := seen[0]
	if e.Action != ActionCancelReservation || e.HTTPStatus != 200 || !strings.HasSuffix(e.URL, "/json/DataRequest") || len(e.ResponseBody) == 0 {
		t.Fatalf("exchange = %+v", e)
	}
	for _, s := range []string{string(e.RequestBody), string(e.ResponseBody), e.URL} {
		if strings.Contains(s, testCreds.SecretKey) {
			t.Fatal("secret in exchange")
		}
	}
}

func TestNewClientConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "127.0.0.1:8800", Credentials: testCreds},
		{BaseURL: "ftp://x", Credentials: testCreds},
		{BaseURL: "http://x", Credentials: Credentials{SecretKey: "s"}},
		{BaseURL: "http://x", Credentials: Credentials{WebsiteKey: "k"}},
	} {
		if _, err := NewClient(cfg); err == nil {
			t.Errorf("NewClient(%v) accepted", cfg.BaseURL)
		} else if strings.Contains(err.Error(), "testSecretKey") {
			t.Errorf("secret in error: %v", err)
		}
	}
}
