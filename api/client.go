package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Doer sends HTTP requests; *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Config configures a Client.
type Config struct {
	// BaseURL is the gateway: the test or live address, or a local sandbox
	// such as http://127.0.0.1:8800. Paths are appended to it.
	BaseURL     string
	Credentials Credentials
	// HTTP sends the requests; nil means a client with sane transport
	// timeouts.
	HTTP Doer
	// Timeout bounds one call when the context has no earlier deadline;
	// zero means 30 s.
	Timeout time.Duration
	// Now and Nonce are seams for tests; nil means the real clock and a
	// random nonce.
	Now   func() time.Time
	Nonce func() string
	// Rules are the merchant settings that validation needs.
	Rules Rules
	// Observe, if set, sees every exchange (for the gateway log). It gets
	// bodies and status, never the secret.
	Observe func(Exchange)
}

// Exchange is one request sent and what came back.
type Exchange struct {
	Time         time.Time
	Method       string
	URL          string
	Action       string
	Service      string
	RequestBody  []byte
	HTTPStatus   int
	ResponseBody []byte
	Duration     time.Duration
	Err          error
}

// Client talks to the gateway.
type Client struct {
	cfg  Config
	base *url.URL
}

// maxResponseBytes bounds what is read of a response.
const maxResponseBytes = 8 << 20

// NewClient checks the configuration and returns a client.
func NewClient(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("gateway base URL %q: must be an absolute http(s) URL", cfg.BaseURL)
	}
	if cfg.Credentials.WebsiteKey == "" {
		return nil, fmt.Errorf("gateway: website key is empty")
	}
	if cfg.Credentials.SecretKey == "" {
		return nil, fmt.Errorf("gateway: secret key is empty (set PAYDESK_SECRET_KEY or --secret-file)")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
		}}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Nonce == nil {
		cfg.Nonce = NewNonce
	}
	return &Client{cfg: cfg, base: u}, nil
}

// BaseURL is the gateway address the client sends to.
func (c *Client) BaseURL() string { return c.base.String() }

// Rules are the merchant rules the client validates with.
func (c *Client) Rules() Rules { return c.cfg.Rules }

// Send validates op and, only when it passes, sends it. See Do for the
// errors.
func (c *Client) Send(ctx context.Context, op Operation) (*Response, error) {
	if err := op.Validate(c.cfg.Rules); err != nil {
		return nil, err
	}
	return c.Do(ctx, op.Request())
}

// Do signs and posts req to its endpoint and decodes the answer. Errors:
// ErrAccessDenied (HTTP 400), ErrBadRequest (HTTP 500), *ValidationError
// (status 491, with the response), *RejectedError (690), *StatusError (490,
// 492 and the other final failures), *NotSentError (nothing left this
// machine: safe to try again) and *OutcomeUnknownError (sent, no
// trustworthy answer: never retry on your own). For 491, 690 and the other
// failures the decoded response is returned beside the error.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	svc := req.Service()
	body, err := MarshalCanonical(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", svc.Action, err)
	}
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + req.Path()
	hostPath := u.Host + u.EscapedPath()
	auth := Sign(c.cfg.Credentials, http.MethodPost, hostPath, body, c.cfg.Nonce(), c.cfg.Now().Unix())

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	var wroteHeaders atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wroteHeaders.Store(true) }})
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, &NotSentError{Err: fmt.Errorf("%s: %w", svc.Action, err)}
	}
	hreq.Header.Set("Content-Type", "application/json; charset=utf-8")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("Channel", "Web")
	hreq.Header.Set("Authorization", auth.String())

	ex := Exchange{Time: c.cfg.Now(), Method: http.MethodPost, URL: u.String(), Action: svc.Action, Service: svc.Name, RequestBody: body}
	start := time.Now()
	resp, respBody, err := c.roundTrip(hreq, svc.Action, &wroteHeaders)
	ex.Duration = time.Since(start)
	if resp != nil {
		ex.HTTPStatus = resp.StatusCode
		ex.ResponseBody = respBody
	}
	out, err := c.interpret(svc.Action, hostPath, resp, respBody, err)
	ex.Err = err
	if c.cfg.Observe != nil {
		c.cfg.Observe(ex)
	}
	return out, err
}

func (c *Client) roundTrip(hreq *http.Request, action string, wroteHeaders *atomic.Bool) (*http.Response, []byte, error) {
	resp, err := c.cfg.HTTP.Do(hreq)
	if err != nil {
		// Until the headers are out the gateway has seen nothing; after that
		// it may have acted, whatever the error says.
		if !wroteHeaders.Load() {
			return nil, nil, &NotSentError{Err: fmt.Errorf("%s: %w", action, err)}
		}
		return nil, nil, &OutcomeUnknownError{Action: action, Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return resp, b, &OutcomeUnknownError{Action: action, Err: fmt.Errorf("reading the response: %w", err)}
	}
	if len(b) > maxResponseBytes {
		return resp, b, &OutcomeUnknownError{Action: action, Err: fmt.Errorf("response larger than %d bytes", maxResponseBytes)}
	}
	return resp, b, nil
}

// StatusError is a final failure status other than 491 and 690.
type StatusError struct {
	Action   string
	Response *Response
}

func (e *StatusError) Error() string {
	s := e.Response.Status
	msg := fmt.Sprintf("%s: %s (%d)", e.Action, StatusText(s.Code.Code), s.Code.Code)
	if s.Code.Description != "" {
		msg += ": " + s.Code.Description
	}
	return msg
}

func (c *Client) interpret(action, hostPath string, resp *http.Response, body []byte, err error) (*Response, error) {
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest:
		return nil, fmt.Errorf("%s: %w", action, ErrAccessDenied)
	case http.StatusInternalServerError:
		return nil, fmt.Errorf("%s: %w", action, ErrBadRequest)
	default:
		return nil, &OutcomeUnknownError{Action: action, Err: fmt.Errorf("unexpected HTTP status %d", resp.StatusCode)}
	}
	if h := resp.Header.Get("Authorization"); h != "" {
		v := VerifierFor(c.cfg.Credentials)
		v.Now = c.cfg.Now
		if _, err := v.Verify(h, http.MethodPost, hostPath, body); err != nil {
			return nil, &OutcomeUnknownError{Action: action, Err: fmt.Errorf("response signature: %w", err)}
		}
	}
	r, err := DecodeResponse(body)
	if err != nil {
		return nil, &OutcomeUnknownError{Action: action, Err: err}
	}
	switch code := r.Status.Code.Code; {
	case code == StatusValidationFailure:
		return r, &ValidationError{Action: action, Gateway: r.RequestErrors}
	case code == StatusRejected:
		return r, &RejectedError{Action: action, Response: r}
	case IsFinal(code) && code != StatusSuccess:
		return r, &StatusError{Action: action, Response: r}
	}
	return r, nil
}

// IsOutcomeUnknown reports whether err leaves it open whether the gateway
// acted.
func IsOutcomeUnknown(err error) bool {
	var ou *OutcomeUnknownError
	return errors.As(err, &ou)
}
