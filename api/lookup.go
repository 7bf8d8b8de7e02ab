package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Lookup paths of the family: signed GETs that read, never change, what
// the gateway holds. The key, invoice or service name follows the slash.
const (
	PathTransactionStatus        = PathTransaction + "/Status/"
	PathDataRequestStatus        = PathDataRequest + "/Status/"
	PathTransactionSpecification = PathTransaction + "/Specification/"
	PathDataRequestSpecification = PathDataRequest + "/Specification/"
	// PathInvoiceInfo lists the transactions made for an invoice. The
	// family's SDKs call it (InvoiceInfo); its answer's shape is the
	// sandbox's, see docs/sandbox.md.
	PathInvoiceInfo = PathTransaction + "/InvoiceInfo/"
)

// ErrUnknownTransaction is the gateway's HTTP 404 to a lookup: it holds no
// transaction (or invoice) of that name for this website key.
var ErrUnknownTransaction = errors.New("the gateway holds no such transaction (HTTP 404)")

// InvoiceInfo is the answer of an InvoiceInfo lookup: every transaction
// and data request made for the invoice, oldest first, each in the shape of
// a status answer.
type InvoiceInfo struct {
	Invoice      string
	Transactions []InvoiceTransaction
}

// InvoiceTransaction is one entry of InvoiceInfo: the action the request
// named and the transaction's status answer.
type InvoiceTransaction struct {
	Action string
	Response
}

// Status asks the gateway for the current state of the transaction key
// (GET /json/Transaction/Status/{key}), in the response envelope's shape.
// A lookup changes nothing, so unlike Do it may be repeated freely; its
// answer is returned whatever its status code.
func (c *Client) Status(ctx context.Context, key string) (*Response, error) {
	return c.lookupResponse(ctx, PathTransactionStatus, key)
}

// DataRequestStatus is Status for a data request (Reserve,
// CancelReservation, UpdateReservation): GET /json/DataRequest/Status/{key}.
func (c *Client) DataRequestStatus(ctx context.Context, key string) (*Response, error) {
	return c.lookupResponse(ctx, PathDataRequestStatus, key)
}

// StatusFor asks the status endpoint that fits action (see PathFor).
func (c *Client) StatusFor(ctx context.Context, action, key string) (*Response, error) {
	if PathFor(action) == PathDataRequest {
		return c.DataRequestStatus(ctx, key)
	}
	return c.Status(ctx, key)
}

// InvoiceInfo lists what the gateway made for an invoice.
func (c *Client) InvoiceInfo(ctx context.Context, invoice string) (*InvoiceInfo, error) {
	body, err := c.get(ctx, PathInvoiceInfo, invoice)
	if err != nil {
		return nil, err
	}
	var info InvoiceInfo
	if err := decodeObject(body, &info); err != nil {
		return nil, fmt.Errorf("invoice info %s: decode: %w", truncate(invoice, 40), err)
	}
	return &info, nil
}

// CheckCredentials asks for a service's specification, as the family's
// SDKs confirm credentials: nil when the gateway accepts the signature.
func (c *Client) CheckCredentials(ctx context.Context, service string) error {
	_, err := c.get(ctx, PathTransactionSpecification, service)
	return err
}

func (c *Client) lookupResponse(ctx context.Context, path, key string) (*Response, error) {
	body, err := c.get(ctx, path, key)
	if err != nil {
		return nil, err
	}
	r, err := DecodeResponse(body)
	if err != nil {
		return nil, fmt.Errorf("status %s: %w", truncate(key, 40), err)
	}
	return r, nil
}

// get sends a signed GET to path+name with no body (the signature's
// content part is empty) and checks the answer's signature.
func (c *Client) get(ctx context.Context, path, name string) ([]byte, error) {
	what := strings.TrimSuffix(path[strings.LastIndexByte(strings.TrimSuffix(path, "/"), '/')+1:], "/")
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("%s: empty key", what)
	}
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path + name
	u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + path + url.PathEscape(name)
	hostPath := u.Host + u.EscapedPath()
	auth := Sign(c.cfg.Credentials, http.MethodGet, hostPath, nil, c.cfg.Nonce(), c.cfg.Now().Unix())
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, truncate(name, 40), err)
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("Authorization", auth.String())
	start := time.Now()
	ex := Exchange{Time: c.cfg.Now(), Method: http.MethodGet, URL: u.String(), Action: what}
	resp, body, err := c.lookupTrip(hreq)
	if err != nil {
		err = fmt.Errorf("%s %s: %w", what, truncate(name, 40), err)
	}
	ex.Duration = time.Since(start)
	if resp != nil {
		ex.HTTPStatus, ex.ResponseBody = resp.StatusCode, body
	}
	if err == nil {
		err = c.checkLookup(what, name, hostPath, resp, body)
	}
	ex.Err = err
	if c.cfg.Observe != nil {
		c.cfg.Observe(ex)
	}
	if err != nil {
		return nil, err
	}
	return body, nil
}

func (c *Client) checkLookup(what, name, hostPath string, resp *http.Response, body []byte) error {
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest:
		return fmt.Errorf("%s %s: %w", what, truncate(name, 40), ErrAccessDenied)
	case http.StatusNotFound:
		return fmt.Errorf("%s %s: %w", what, truncate(name, 40), ErrUnknownTransaction)
	default:
		return fmt.Errorf("%s %s: unexpected HTTP status %d", what, truncate(name, 40), resp.StatusCode)
	}
	if h := resp.Header.Get("Authorization"); h != "" {
		v := VerifierFor(c.cfg.Credentials)
		v.Now = c.cfg.Now
		if _, err := v.Verify(h, http.MethodGet, hostPath, body); err != nil {
			return fmt.Errorf("%s %s: response signature: %w", what, truncate(name, 40), err)
		}
	}
	return nil
}

// lookupTrip sends a lookup. Unlike a request that changes something, a
// failed lookup has no unknown outcome: the caller may simply ask again.
func (c *Client) lookupTrip(hreq *http.Request) (*http.Response, []byte, error) {
	resp, err := c.cfg.HTTP.Do(hreq)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return resp, b, fmt.Errorf("reading the answer: %w", err)
	}
	if len(b) > maxResponseBytes {
		return resp, b, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	return resp, b, nil
}

// Push is the entry in the shape of the push the gateway sends for it:
// what a status lookup answers carries the same facts (key, status,
// amounts, services, related transactions), so paydesk books what it learns
// from a lookup exactly as it books a push. A data request's push names
// the action the request named; a transaction's names its type.
func (e InvoiceTransaction) Push() *Push {
	r := e.Response
	data := false
	for _, a := range []string{ActionReserve, ActionCancelReservation, ActionUpdateReservation} {
		data = data || strings.EqualFold(e.Action, a)
	}
	if data {
		return &Push{DataRequest: &DataRequestPush{Key: r.Key, Invoice: r.Invoice, ServiceCode: r.ServiceCode,
			ActionCode: e.Action, Status: r.Status, IsTest: r.IsTest, Order: r.Order, Currency: r.Currency,
			AmountDebit: r.AmountDebit, Services: r.Services, CustomParameters: r.CustomParameters,
			AdditionalParameters: r.AdditionalParameters, MutationType: r.MutationType, IssuingCountry: r.IssuingCountry,
			StartRecurrent: r.StartRecurrent, Recurring: r.Recurring, CustomerName: r.CustomerName,
			PayerHash: r.PayerHash, PaymentKey: r.PaymentKey}}
	}
	return &Push{Transaction: &TransactionPush{Key: r.Key, Invoice: r.Invoice, ServiceCode: r.ServiceCode,
		Status: r.Status, IsTest: r.IsTest, Order: r.Order, Currency: r.Currency, AmountDebit: r.AmountDebit,
		AmountCredit: r.AmountCredit, TransactionType: r.Type(), Services: r.Services,
		CustomParameters: r.CustomParameters, AdditionalParameters: r.AdditionalParameters,
		MutationType: r.MutationType, RelatedTransactions: r.RelatedTransactions, IssuingCountry: r.IssuingCountry,
		StartRecurrent: r.StartRecurrent, Recurring: r.Recurring, CustomerName: r.CustomerName,
		PayerHash: r.PayerHash, PaymentKey: r.PaymentKey}}
}
