package webshop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"paydesk/api"
)

// Shop is a webshop with the merchant's credentials (the same ones paydesk
// uses), its gateway client and paydesk's order intake URL.
type Shop struct {
	// Gateway sends the Reserve; its observer, if any, is the shop's own.
	Gateway *api.Client
	// IntakeURL is paydesk's order intake (…/orders); "" means the shop does
	// not tell paydesk about its orders.
	IntakeURL   string
	Credentials api.Credentials
	// HTTP posts the orders; nil means a client with a 10 s timeout.
	HTTP *http.Client
	// Now is the clock the signature is made with; nil means time.Now.
	Now func() time.Time
}

// Answer is the intake's answer to an order.
type Answer struct {
	HTTPStatus  int
	Invoice     string `json:"invoice"`
	Result      string `json:"result"`
	Reservation string `json:"reservation"`
	Reason      string `json:"reason"`
}

// Reserve sends the Reserve to the gateway and returns the envelope exactly
// as sent (for PostOrder) and the gateway's answer.
func (s *Shop) Reserve(ctx context.Context, rs api.Reserve) (body []byte, resp *api.Response, err error) {
	req := rs.Request()
	body, err = api.MarshalCanonical(req)
	if err != nil {
		return nil, nil, fmt.Errorf("shop reserve %s: %w", rs.Invoice, err)
	}
	resp, err = s.Gateway.Do(ctx, req)
	if err != nil {
		return body, nil, fmt.Errorf("shop reserve %s: %w", rs.Invoice, err)
	}
	return body, resp, nil
}

// PostOrder posts the Reserve envelope to the intake, signed with the
// merchant's credentials over the intake URL: the one extra call a shop
// plugin makes after its Reserve.
func (s *Shop) PostOrder(ctx context.Context, envelope []byte) (Answer, error) {
	if s.IntakeURL == "" {
		return Answer{}, errors.New("post order: no intake URL")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.IntakeURL, bytes.NewReader(envelope))
	if err != nil {
		return Answer{}, fmt.Errorf("post order: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", Sign(s.Credentials, s.IntakeURL, envelope, now()).String())
	hc := s.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("post order: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return Answer{HTTPStatus: resp.StatusCode}, fmt.Errorf("post order: read the answer: %w", err)
	}
	a := Answer{HTTPStatus: resp.StatusCode}
	if err := json.Unmarshal(b, &a); err != nil {
		a.Reason = string(bytes.TrimSpace(b))
	}
	if resp.StatusCode != http.StatusOK {
		return a, fmt.Errorf("post order: %d %s: %s", resp.StatusCode, a.Result, a.Reason)
	}
	return a, nil
}

// Sign signs a POST of body to url with the gateway family's scheme.
func Sign(c api.Credentials, url string, body []byte, now time.Time) api.Authorization {
	return api.Sign(c, http.MethodPost, api.HostPath(url), body, api.NewNonce(), now.Unix())
}

// Checkout is the customer at the sandbox's checkout page: approve or
// decline the reservation at its redirect URL (the sandbox's
// /sandbox/checkout/{key}/approve and …/decline, without a browser).
func (s *Shop) Checkout(ctx context.Context, resp *api.Response, approve bool) error {
	if resp == nil || resp.RequiredAction == nil || resp.RequiredAction.RedirectURL == "" {
		return errors.New("checkout: the answer has no redirect URL")
	}
	verb := "decline"
	if approve {
		verb = "approve"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(resp.RequiredAction.RedirectURL, "/")+"/"+verb, nil)
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	hc := s.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	r, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("checkout %s: %w", verb, err)
	}
	defer r.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
	if r.StatusCode != http.StatusOK {
		return fmt.Errorf("checkout %s: HTTP %d: %s", verb, r.StatusCode, bytes.TrimSpace(body))
	}
	return nil
}
